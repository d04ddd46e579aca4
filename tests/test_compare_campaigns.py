"""scripts/compare_campaigns.py: the same cases of two campaigns, identical or not."""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))
import compare_campaigns

from mpc.app.campaign import case_key


def write(folder: Path, case: dict, result: dict) -> None:
    (folder / "cases").mkdir(parents=True, exist_ok=True)
    text = json.dumps({"case": case, "result": result})
    (folder / "cases" / f"{case_key(case)}.json").write_text(text)


CASES = [{"config": "go2_hw", "terrain": "flat", "seed": s} for s in range(3)]


def test_identical_campaigns_agree(tmp_path, capsys):
    for side in ("a", "b"):
        for case in CASES:
            write(tmp_path / side, case, {"end_x_m": 1.0 + case["seed"], "fell": False})
    assert compare_campaigns.main([str(tmp_path / "a"), str(tmp_path / "b")]) == 0
    assert "3 cases in both: 3 identical, 0 differ; 0 only in" in capsys.readouterr().out


def test_a_differing_field_and_a_missing_case_are_named(tmp_path, capsys):
    for case in CASES:
        write(tmp_path / "a", case, {"end_x_m": 1.0, "fell": False})
    for case in CASES[:2]:
        write(tmp_path / "b", case, {"end_x_m": 1.0 + 1e-12 * case["seed"], "fell": False})
    assert compare_campaigns.main([str(tmp_path / "a"), str(tmp_path / "b" / "cases")]) == 1
    out = capsys.readouterr().out
    assert "2 cases in both: 1 identical, 1 differ; 1 only in" in out
    assert "go2_hw flat seed 1: end_x_m" in out


def test_a_folder_without_results_exits_2_with_one_line(tmp_path, capsys):
    write(tmp_path / "a", CASES[0], {"end_x_m": 1.0})
    assert compare_campaigns.main([str(tmp_path / "a"), str(tmp_path / "empty")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "empty: no results" in err[0]
