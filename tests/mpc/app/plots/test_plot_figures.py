"""Each figure shows the recorded data: per panel, the axes exist and their lines hold the
run's arrays; several runs overlay; old run directories and damped runs plot honestly."""

import numpy as np
import pytest

from mpc.app.plots import figures
from mpc.app.record.reader import load_run


@pytest.fixture(scope="module")
def trot(trot_run):
    return load_run(trot_run)


@pytest.fixture(scope="module")
def damped(damped_run):
    return load_run(damped_run)


def axes_of(fig):
    return {ax.get_label(): ax for ax in fig.axes}


def line(ax, label):
    (found,) = [ln for ln in ax.get_lines() if ln.get_label() == label]
    return found


def assert_line(ax, label, x, y):
    ln = line(ax, label)
    np.testing.assert_allclose(ln.get_xdata(), x)
    np.testing.assert_allclose(ln.get_ydata(), y)


def test_path_shows_the_base_path_and_the_goal(trot):
    ax = axes_of(figures.path_figure([trot]))["path"]
    q = trot.series["state_qpos"]
    assert_line(ax, trot.label, q[:, 0], q[:, 1])
    np.testing.assert_allclose(line(ax, "_goal").get_xydata(), [[2.0, 0.0]])


def test_base_height_orientation_and_velocity_against_the_plan(trot):
    ax = axes_of(figures.base_figure([trot]))
    t, q, v = trot.time(), trot.series["state_qpos"], trot.series["state_qvel"]
    assert_line(ax["height"], trot.label, t, q[:, 2])
    assert_line(ax["velocity"], trot.label, t, np.hypot(v[:, 0], v[:, 1]))
    assert_line(ax["yaw_rate"], trot.label, t, v[:, 5])
    path = trot.series["plan_base_path"].astype(float)
    planned = np.hypot(*(path[:, 1, :2] - path[:, 0, :2]).T) / 0.02  # knots 2 x 10 ms apart
    assert_line(ax["velocity"], f"{trot.label} planned", trot.time("plan"), planned)
    # home pose upright, heading +x: roll, pitch and yaw start at zero
    for name in ("roll", "pitch", "yaw"):
        assert abs(line(ax["orientation"], f"{trot.label} {name}").get_ydata()[0]) < 0.5


def test_gait_diagram_sets_planned_against_achieved_contacts(trot):
    ax = axes_of(figures.gait_figure([trot]))["gait:0"]
    achieved, planned = trot.series["state_contacts"], trot.series["state_planned_contacts"]
    for j, foot in enumerate(trot.robot.feet):
        ys = line(ax, f"{foot} achieved").get_ydata()
        np.testing.assert_array_equal(np.isfinite(ys), achieved[:, j])
        ys = line(ax, f"{foot} planned").get_ydata()
        np.testing.assert_array_equal(np.isfinite(ys), planned[:, j])


def test_cost_and_each_term(trot):
    ax = axes_of(figures.cost_figure([trot]))
    t = trot.time("plan")
    assert_line(ax["cost"], trot.label, t, trot.series["plan_cost"])
    for k, name in enumerate(trot.series["term_names"]):
        assert_line(ax["terms"], str(name), t, trot.series["plan_term_costs"][:, k])


def test_planner_phases_stacked_and_rates(trot):
    ax = axes_of(figures.timing_figure([trot]))
    phases = ax["phases:0"]
    assert len(phases.collections) == 5  # one band per phase, the total as a line
    assert_line(phases, "total", trot.time("plan"), trot.series["plan_timings"][:, -1])
    rates = ax["rates"]
    planning = line(rates, f"{trot.label} planning").get_ydata()
    feedback = line(rates, f"{trot.label} feedback").get_ydata()
    # lockstep: the planner every round(1 / (rate dt)) plant steps, feedback every 2nd (250 Hz)
    dt = trot.config["plant"]["timestep"]
    plan_every = round(1.0 / (trot.config["runtime"]["planning_rate"] * dt))
    np.testing.assert_allclose(planning[figures.PLAN_RATE_WINDOW:], 1.0 / (plan_every * dt),
                               rtol=1e-6)
    np.testing.assert_allclose(feedback[figures.FEEDBACK_RATE_WINDOW:], 250.0, rtol=0.05)


def test_joints_against_their_limits(trot):
    ax = axes_of(figures.joints_figure([trot]))
    t = trot.time()
    # the A1's first actuator is FR_hip_joint: qpos[7], qvel[6]
    assert_line(ax["angle:FR_hip_joint"], trot.label, t, trot.series["state_qpos"][:, 7])
    assert_line(ax["speed:FR_hip_joint"], trot.label, t, trot.series["state_qvel"][:, 6])
    assert_line(ax["torque:FR_hip_joint"], trot.label, t,
                trot.series["state_actuator_force"][:, 0])
    limits = sorted(ln.get_ydata()[0] for ln in ax["torque:FR_hip_joint"].get_lines()
                    if ln.get_label() == "_limit")
    assert limits == [-33.5, 33.5]
    limits = sorted(ln.get_ydata()[0] for ln in ax["angle:RL_calf_joint"].get_lines()
                    if ln.get_label() == "_limit")
    assert limits == [-2.7, -0.916]
    assert len([a for a in ax if a.startswith("torque:")]) == 12


def test_damping_and_fall_are_marked_on_every_time_axis(damped):
    times = {e.kind: e.time - damped.t0 for e in damped.events}
    assert {"damping", "fall"} <= set(times)
    built = figures.build_figures([damped])
    checked = 0
    for name, fig in built.items():
        for ax in fig.axes:
            if name == "path":
                continue
            for kind in ("damping", "fall"):
                (mark,) = [ln for ln in ax.get_lines() if ln.get_gid() == f"event:{kind}"]
                assert mark.get_xdata()[0] == pytest.approx(times[kind])
            checked += 1
    assert checked > 40
    # the damped robot sank: the height line ends near the fall height
    height = line(axes_of(built["base"])["height"], damped.label).get_ydata()
    assert height[-1] < 0.13


def test_two_runs_overlay_one_line_each_per_axis(trot, damped):
    built = figures.build_figures([trot, damped])
    labels = {trot.label, damped.label}
    panels = [("path", "path"), ("base", "height"), ("base", "velocity"),
              ("base", "yaw_rate"), ("cost", "cost"), ("joints", "angle:FL_calf_joint"),
              ("joints", "torque:RR_thigh_joint")]
    for name, panel in panels:
        ax = axes_of(built[name])[panel]
        assert sorted(ln.get_label() for ln in ax.get_lines() if ln.get_label() in labels) \
            == sorted(labels), (name, panel)
    ax = axes_of(built["gait"])
    assert {"gait:0", "gait:1", "phases:0"} <= set(ax) | set(axes_of(built["timing"]))


def test_an_old_run_directory_plots_and_says_what_is_missing(old_run):
    run = load_run(old_run)
    assert not run.events_timed
    built = figures.build_figures([run])
    gait = axes_of(built["gait"])["gait:0"]
    assert not [ln for ln in gait.get_lines() if ln.get_label().endswith("planned")]
    assert "no planned contacts recorded" in gait.get_title()
    joints = axes_of(built["joints"])
    assert not [ln for ln in joints["torque:FR_hip_joint"].get_lines()
                if ln.get_label() == run.label]
    assert "not recorded" in built["joints"].axes[2].get_title()
    velocity = axes_of(built["base"])["velocity"]
    assert [ln.get_label() for ln in velocity.get_lines()] == [run.label]
