"""scripts/bench_planner.py runs a variant on the code of any revision: one after the
library/application split (``mpc.app.run``) and one before it (``mpc.run``)."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))
import bench_planner

#: A stand-in for the code of a revision: ``run`` writes the time series a lockstep run writes.
RUN = textwrap.dedent('''
    from pathlib import Path
    import numpy as np

    def run(config, overrides, out):
        timings = np.arange(12.0).reshape(2, 6) + len(overrides)
        np.savez(Path(out) / "timeseries.npz", plan_timings=timings)
        return {"fell": False, "goal_distance_end_m": 0.5, "config": config}
''')


@pytest.mark.parametrize("module", ["mpc/app/run.py", "mpc/run.py"])
def test_a_variant_runs_on_the_layout_of_its_revision(tmp_path, module):
    path = tmp_path / module
    path.parent.mkdir(parents=True)
    path.write_text(RUN)
    for package in path.relative_to(tmp_path).parents[:-1]:  # regular packages, as the code's
        (tmp_path / package / "__init__.py").touch()
    r = bench_planner.run_once(tmp_path, "configs/x.yaml", ["a=1"], 1.0)
    assert r["summary"] == {"fell": False, "goal_distance_end_m": 0.5, "config": "configs/x.yaml"}
    # the first iteration (the compiled kernels' warm-up) is left out; three overrides in all
    np.testing.assert_array_equal(r["timings"], [np.arange(6.0, 12.0) + 3])


def test_each_repetition_starts_at_the_next_variant():
    v = ["a", "b", "c"]
    assert [bench_planner.rotated(v, r)[0] for r in range(4)] == ["a", "b", "c", "a"]
    assert all(sorted(bench_planner.rotated(v, r)) == v for r in range(4))
