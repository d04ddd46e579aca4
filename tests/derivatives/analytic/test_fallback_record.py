"""Every fallback of the analytic backend is counted by reason and logged (not only warned),
and a run's summary.json reports the counts."""

from __future__ import annotations

import json
import logging
import warnings

import mujoco
import pytest

import derivatives
from derivatives.analytic import AnalyticFallbackWarning
from derivatives.counter import fallbacks_since
from mpc.app.config import load_config
from mpc.app.runtime.lockstep import run_lockstep
from mpc.app.runtime.session import Session

CYLINDER_ON_FLOOR = """
<mujoco>
  <worldbody>
    <geom type="plane" size="5 5 .1"/>
    <body pos="0 0 .029">
      <freejoint/>
      <geom type="cylinder" size=".02 .03" mass="1"/>
    </body>
  </worldbody>
</mujoco>"""


def test_knot_fallbacks_are_counted_and_logged_by_reason(caplog):
    m = mujoco.MjModel.from_xml_string(CYLINDER_ON_FLOOR)
    d = mujoco.MjData(m)
    mujoco.mj_forward(m, d)
    assert d.ncon > 0
    provider = derivatives.make_provider("analytic", m, threads=1)
    start = derivatives.fallbacks()
    evaluations = derivatives.fd_evaluations()
    with caplog.at_level(logging.INFO), warnings.catch_warnings():
        warnings.simplefilter("ignore", AnalyticFallbackWarning)
        for _ in range(3):
            provider.transition(d)
    new = fallbacks_since(start)
    assert list(new) == ["contact plane-cylinder"]
    assert new["contact plane-cylinder"]["knots"] == 3
    assert (new["contact plane-cylinder"]["fd_evaluations"]
            == derivatives.fd_evaluations() - evaluations > 0)
    logged = [r.getMessage() for r in caplog.records if "analytic fallback" in r.getMessage()]
    # the warning once, then the 1st and 2nd knot (powers of two), not the 3rd
    assert len(logged) == 3 and "2 knots so far" in logged[-1]


def test_summary_counts_fallbacks_by_reason(tmp_path):
    """An option the recipe does not cover (the implicit integrator) switched on under a
    running planner: every knot after it is a fallback, in summary.json and events.log."""
    cfg = load_config("configs/a1_trot.yaml", ["runtime.mode=lockstep",
                                                "derivatives.backend=analytic"])
    session = Session(cfg, tmp_path)
    session.planner.model.opt.integrator = mujoco.mjtIntegrator.mjINT_IMPLICIT
    with pytest.warns(AnalyticFallbackWarning, match="mjINT_IMPLICIT"):
        run_lockstep(session, 0.06)
    summary = session.close("lockstep")
    written = json.loads((tmp_path / "summary.json").read_text())
    assert written["analytic_fallbacks"] == summary["analytic_fallbacks"]
    (reason, count), = summary["analytic_fallbacks"].items()
    assert reason == "model: integrator mjINT_IMPLICIT"
    assert count["knots"] > 0 and count["fd_evaluations"] == summary["fd_evaluations"]
    assert "analytic fallback (model: integrator mjINT_IMPLICIT)" in (
        tmp_path / "events.log").read_text()
