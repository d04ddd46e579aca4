"""The HTML report: self-contained (every figure embedded), with the summary and events."""

import base64
import re

from mpc.app.plots import figures, report
from mpc.app.record.reader import load_run

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def test_report_embeds_every_figure_and_references_nothing_outside(trot_run, damped_run):
    runs = [load_run(trot_run), load_run(damped_run)]
    page = report.render(runs, figures.build_figures(runs))
    sources = re.findall(r"""\b(?:src|href)=['"]([^'"]*)['"]""", page)
    assert len(sources) == len(figures.FIGURES)
    for src in sources:
        assert src.startswith("data:image/png;base64,")
        assert base64.b64decode(src.split(",", 1)[1]).startswith(PNG_MAGIC)
    assert "<link" not in page and "<script" not in page and "url(" not in page
    for run in runs:
        assert f"<th>{run.label}</th>" in page
    assert "plant damping: tilt" in page and "robot fell at" in page


def test_an_untimed_event_log_is_listed_and_said_to_be_untimed(old_run, tmp_path):
    log = old_run / "events.log"
    log.write_text("2026-01-01 10:00:00,000 WARNING mpc.app.plants.sim_plant: plant damping: stale "
                   "state\n2026-01-01 10:00:00,001 INFO mpc: not an event\n")
    run = load_run(old_run)
    assert [(e.kind, e.level) for e in run.events] == [("damping", "WARNING")]
    text = report.events_list(run)
    assert "predates recorded event times" in text and "stale state" in text
