"""The ground model (mpc/tasks/ground.py): the plane fitted to footholds, the planning model's
floor posed on it (with analytic derivatives that match finite differences there), and the
tasks' targets and fall check measured from it."""

from __future__ import annotations

import math
from pathlib import Path

import analytic_verify as verify
import mujoco
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import derivatives
import robots
from mpc.tasks import make_task
from mpc.tasks.ground import (
    FOOT_BIT,
    GroundFit,
    GroundPlane,
    fit_plane,
    foot_floor_bodies,
    ground_body,
    pose,
    up_axis,
)

#: Feet of a standing quadruped (x, y), about an A1's.
STANCE_XY = np.array([[0.19, 0.13], [-0.19, 0.13], [0.19, -0.13], [-0.19, -0.13]])


@settings(max_examples=50, deadline=None)
@given(a0=st.floats(-1.0, 1.0), a1=st.floats(-0.5, 0.5), a2=st.floats(-0.5, 0.5),
       x=st.floats(-5.0, 5.0), y=st.floats(-5.0, 5.0))
def test_the_fit_recovers_the_plane_the_feet_stand_on(a0, a1, a2, x, y):
    plane = GroundPlane(a0, a1, a2)
    fit = GroundFit(4, slope_prior=1e-9, max_slope=1.0)  # |(a1, a2)| < 0.71: not clipped
    xy = STANCE_XY + np.array([x, y])
    points = np.c_[xy, plane.height(xy[:, 0], xy[:, 1])]
    got = fit.reset(points)
    np.testing.assert_allclose((got.a1, got.a2), (a1, a2), atol=1e-6)
    assert got.height(x, y) == pytest.approx(plane.height(x, y), abs=1e-6)


def test_the_slope_prior_holds_the_plane_level_where_the_feet_say_nothing():
    """Two feet side by side (a biped standing) tell the roll, not the pitch."""
    fit = GroundFit(2, slope_prior=0.01)
    got = fit.reset(np.array([[0.0, 0.1, 0.05], [0.0, -0.1, 0.01]]))
    assert got.a1 == 0.0
    assert got.a2 == pytest.approx(0.04 / 0.2 * 0.02 / (0.02 + 0.01))  # shrunk by λ
    assert got.height(0.0, 0.0) == pytest.approx(0.03)


def test_a_slope_past_the_limit_is_clipped():
    points = np.c_[STANCE_XY, 2.0 * STANCE_XY[:, 0]]  # 63°
    got = fit_plane(points, 1e-9, max_slope=0.7)
    assert math.hypot(got.a1, got.a2) == pytest.approx(0.7)


def test_footholds_move_at_touchdown_and_swinging_feet_keep_theirs():
    fit = GroundFit(4, slope_prior=1e-9, memory=1)
    fit.reset(np.c_[STANCE_XY, np.zeros(4)])
    # the front feet (0, 2) swing to a step 8 cm up; the hind feet stand
    up = np.c_[STANCE_XY + np.array([0.2, 0.0]), np.zeros(4)]
    up[[0, 2], 2] = 0.08
    swinging = np.array([False, True, False, True])
    assert fit.observe(up, swinging).a1 == pytest.approx(0.0)  # hind feet: where they were
    got = fit.observe(up, np.ones(4, bool))
    assert got.a1 == pytest.approx(0.08 / 0.38)
    np.testing.assert_allclose(fit.footholds[:, 0], up)


def test_a_new_touchdown_keeps_the_older_footholds_in_memory():
    fit = GroundFit(1, memory=2)
    fit.reset(np.array([[0.0, 0.0, 0.0]]))
    fit.observe(np.array([[0.5, 0.0, 0.1]]), np.array([False]))
    fit.observe(np.array([[0.5, 0.0, 0.1]]), np.array([True]))
    np.testing.assert_allclose(fit.footholds[0], [[0.5, 0.0, 0.1], [0.0, 0.0, 0.0]])


def test_the_upright_target_follows_the_given_fraction_of_the_tilt():
    plane = GroundPlane(0.0, math.tan(math.radians(10)), 0.0)  # rises along +x
    for follow in (0.0, 0.5, 1.0):
        u = up_axis(plane, follow)
        assert np.linalg.norm(u) == pytest.approx(1.0)
        assert math.degrees(math.atan2(-u[0], u[2])) == pytest.approx(10 * follow)
        assert u[1] == 0.0
    np.testing.assert_allclose(up_axis(plane, 1.0), plane.normal)


# --- the planning model's floor ----------------------------------------------------------------

TILTED = GroundPlane(0.1, math.tan(math.radians(10)), math.tan(math.radians(-4)))


def posed_model(robot: str = "a1", plane: GroundPlane = TILTED,
                foot_floors: bool = False) -> tuple:
    task = make_task("quadruped_flat", robots.info(robot), goal=[1.0, 0.0], ground="fit",
                     foot_floors=foot_floors)
    model = task.planning_model(0.01)
    for body in (ground_body(model), *foot_floor_bodies(model)):  # the feet's floors too
        pose(model, body, plane, at=(0.3, -0.2))
    return task, model


def test_the_posed_floor_is_the_plane():
    _, m = posed_model()
    d = mujoco.MjData(m)
    mujoco.mj_forward(m, d)
    floor = m.geom("floor").id
    np.testing.assert_allclose(d.geom_xmat[floor].reshape(3, 3)[:, 2], TILTED.normal, atol=1e-12)
    for x, y in ((0.0, 0.0), (1.0, 2.0), (-3.0, 0.5)):
        # a point on the plane's surface is at zero distance from the geom's frame along n
        p = np.array([x, y, TILTED.height(x, y)])
        assert (p - d.geom_xpos[floor]) @ TILTED.normal == pytest.approx(0.0, abs=1e-12)


@pytest.mark.parametrize("foot_floors", [False, True])
@pytest.mark.parametrize("state", ["standing", "sliding", "fast_rotation"])
def test_analytic_derivatives_match_finite_differences_on_the_posed_floor(state, foot_floors):
    """The analytic backend takes the posed plane for a static plane (no finite difference)
    and agrees with centered differences as on the level floor (tests/derivatives/analytic/
    test_step.py: 1e-5); so it does with a floor per foot (``foot_floors``), the feet on
    theirs."""
    _, model = posed_model(foot_floors=foot_floors)
    m = verify.oracle_model(model)
    d = verify.reference_state(m, state)
    floors = {m.geom("floor").id, *(m.body_geomadr[b] for b in foot_floor_bodies(m))}
    touching = [i for i in range(d.ncon) if floors & set(d.contact.geom[i])]
    assert touching and verify.contacts_covered(m, d) and verify.is_smooth(m, d)
    np.testing.assert_allclose(d.contact.frame[touching[0], :3], TILTED.normal, atol=1e-9)
    provider = derivatives.make_provider("analytic", m, threads=1)
    before = derivatives.fd_evaluations()
    A, B = provider.transition(d)
    assert derivatives.fd_evaluations() == before
    A_ref, B_ref = verify.centered_fd(m, d)
    assert verify.relative_error(A, A_ref) <= 1e-5
    assert verify.relative_error(B, B_ref) <= 1e-5
    provider.close()


# --- targets and the fall check ------------------------------------------------------------------


def test_the_gait_target_and_the_fall_check_are_measured_from_the_ground():
    task, model = posed_model("go2")
    task.ground = TILTED
    task._rebuild(task.GROUND_TERMS)
    d = mujoco.MjData(model)
    rng = np.random.default_rng(0)
    d.qpos[:] = model.key_qpos[0]
    d.qpos[0:3] = (0.4, -0.3, 0.6)
    d.qpos[7:] += 0.2 * rng.standard_normal(model.nq - 7)
    mujoco.mj_forward(model, d)
    times = np.linspace(0.0, 0.5, 51)
    lift = task.swing_targets(times)
    r = task.residual(np.broadcast_to(d.sensordata, (len(times), model.nsensordata)), times)
    gait = r[:, task.rows["gait"]]
    feet = np.array([d.site_xpos[model.site(f).id] for f in task.robot.feet])
    above = feet[:, 2] - TILTED.height(feet[:, 0], feet[:, 1])
    swing = lift > 0
    np.testing.assert_allclose(gait[swing], (above - task.foot_height - lift)[swing], atol=1e-12)
    # upright: the body's z-axis against the vertical turned halfway toward the normal
    upright = r[0, task.rows["upright"]]
    z = d.site_xmat[model.site("imu").id].reshape(3, 3)[:, 2]
    np.testing.assert_allclose(upright, z - up_axis(TILTED, task.slope_follow), atol=1e-12)
    # the fall check: 0.6 m up is 0.6 - 0.1 - 0.4 tan 10° + 0.3 tan 4° over this ground
    over = 0.6 - TILTED.height(0.4, -0.3)
    qpos = d.qpos.copy()
    qpos[2] = TILTED.height(0.4, -0.3) + task.robot.fall_height + 0.01
    assert task.fall_reason(qpos) is None
    qpos[2] -= 0.02
    assert "over the ground" in task.fall_reason(qpos)
    assert over > 0.4


def _pitched_pose(model, key: str, pitch: float) -> np.ndarray:
    """The home pose with the base pitched by ``pitch`` (rad, nose up for negative: MuJoCo's
    right hand about +y) and lifted so that the feet stay above z = 0."""
    qpos = model.key_qpos[model.key(key).id].copy()
    qpos[3:7] = (math.cos(pitch / 2), 0.0, math.sin(pitch / 2), 0.0)
    return qpos


@pytest.mark.parametrize("robot", ["a1", "go2"])
def test_the_task_ground_follows_the_feet_onto_a_slope(robot):
    """Standing with the body pitched 10° (the feet on a 10° plane, as on a ramp), the first
    update fits that plane (a slope prior too small to shrink it); the planning model's floor
    follows it."""
    task = make_task("quadruped_flat", robots.info(robot), goal=[1.0, 0.0], ground="fit",
                     ground_prior=1e-6)
    model = task.planning_model(0.01)
    task.bind(model)
    up_slope = -math.radians(10)  # nose up: the ground rises along +x
    qpos = _pitched_pose(model, task.robot.home_key, up_slope)
    task.update(0.0, qpos, np.zeros(model.nv))
    assert task.ground.a1 == pytest.approx(math.tan(math.radians(10)), abs=0.01)
    assert task.ground.a2 == pytest.approx(0.0, abs=0.01)
    task.pose_ground(model)
    d = mujoco.MjData(model)
    mujoco.mj_kinematics(model, d)
    np.testing.assert_allclose(d.xmat[ground_body(model)].reshape(3, 3)[:, 2],
                               task.ground.normal, atol=1e-9)
    # and with a level ground (the default) the plane stays at z = 0, the model's floor fixed
    level = make_task("quadruped_flat", robots.info(robot), goal=[1.0, 0.0])
    level_model = level.planning_model(0.01)
    level.update(0.0, qpos, np.zeros(model.nv))
    assert level.ground == GroundPlane()
    assert ground_body(level_model) == -1


def test_a_quadruped_on_two_legs_takes_no_foothold_from_its_lifted_feet():
    """On its hind legs the Go1's front feet hang still in the air without a swing target:
    the ground stays where the feet stood, level."""
    task = make_task("quadruped_biped", robots.info("go1"), goal=[0.0, 0.0], ground="fit")
    model = task.planning_model(0.01)
    task.bind(model)
    qpos = model.key_qpos[model.key(task.robot.home_key).id].copy()
    task.update(0.0, qpos, np.zeros(model.nv))
    lifted = qpos.copy()
    for i, foot in enumerate(task.robot.feet):  # the hind feet as before, the front ones 10 cm up
        if i in task.support_feet:
            continue
        leg = foot[:2]
        lifted[model.joint(f"{leg}_calf_joint").qposadr[0]] -= 0.8
    d = mujoco.MjData(model)
    d.qpos[:] = lifted
    mujoco.mj_kinematics(model, d)
    lift = [d.site_xpos[model.site(f).id][2] for f in task.robot.feet]
    front = [i for i in range(4) if i not in task.support_feet]
    assert min(lift[i] for i in front) > max(lift[i] for i in task.support_feet) + 0.05
    for k in range(1, 20):  # through a gait cycle: every front foot has planned stance at times
        task.update(0.05 * k, lifted, np.zeros(model.nv))
        assert math.hypot(task.ground.a1, task.ground.a2) < 0.05


# --- footholds: which feet the fit takes ---------------------------------------------------------


def fitted_task(robot: str = "go1", **options) -> tuple:
    """A blind task on ``robot``'s planning model, its ground fitted once at the home pose."""
    task = make_task("quadruped_flat", robots.info(robot), goal=[2.0, 0.0], ground="fit",
                     **options)
    model = task.planning_model(0.01)
    qpos = model.key_qpos[0].copy()
    task.update_ground(0.0, qpos, np.zeros(model.nv))
    return task, model, qpos


def stance_time(task) -> tuple[float, np.ndarray]:
    """A time at which the gait has two feet in their planned stance, and which they are."""
    for t in np.arange(0.01, 2.0, 0.01):
        stance = task.planned_stance(t)
        if 0 < stance.sum() < len(stance):
            return float(t), stance
    raise AssertionError("the gait never has some feet up and some down")


@pytest.mark.parametrize("robot", ["go1", "a1"])
def test_a_stance_foot_found_below_the_plane_is_a_foothold_however_fast_it_moves(robot):
    """Over a step down a foot in its planned stance slides down the riser or reaches for the
    floor below, faster than a standing foot: still the ground is where it is (a foot stands
    no lower than the ground), and the plane must come down to it. Here the robot 6 cm lower
    than the ground it started on, sinking at 0.6 m/s: every foot is well past the stance
    speed, and the planned stance feet's footholds go down with them (``ground_below``)."""
    task, model, qpos = fitted_task(robot, ground_below=0.01)
    before = task.ground
    t, stance = stance_time(task)
    low = qpos.copy()
    low[2] -= 0.06
    qvel = np.zeros(model.nv)
    qvel[2] = -0.6
    points, speed = task.feet(low, qvel)
    assert (speed > task.STANCE_SPEED).all()
    task.update_ground(t, low, qvel)
    got = task.ground_fit.footholds[:, 0]
    np.testing.assert_allclose(got[stance, 2], points[stance, 2] - task.foot_height, atol=1e-9)
    assert got[stance, 2].max() < before.a0 - 0.03  # (the first fit is a foot radius down)
    centre = points[:, :2].mean(axis=0)
    assert task.ground.height(*centre) < before.height(*centre) - 0.02


@pytest.mark.parametrize(("shift", "options"), [(0.03, {"ground_below": 0.01}),
                                                (-0.06, {})])
def test_a_fast_stance_foot_is_no_foothold_above_the_plane_or_by_default(shift, options):
    """The speed test still holds where the foot is not below the ground (a foot landing or
    lifting above the plane moves too fast to say where the ground is), and everywhere
    without ``ground_below`` (the default)."""
    task, model, qpos = fitted_task(**options)
    before = task.ground_fit.footholds.copy()
    t, _ = stance_time(task)
    moved = qpos.copy()
    moved[2] += shift
    qvel = np.zeros(model.nv)
    qvel[2] = 0.6 if shift > 0 else -0.6
    task.update_ground(t, moved, qvel)
    np.testing.assert_array_equal(task.ground_fit.footholds, before)


def test_ground_below_needs_the_fitted_ground():
    with pytest.raises(ValueError, match="ground_below is set but ground is 'level'"):
        make_task("quadruped_flat", robots.info("go1"), ground_below=0.01)


# --- a floor per foot (foot_floors) --------------------------------------------------------------


def two_level_task(robot: str = "go1", down: int = 2) -> tuple:
    """A task with a floor per foot whose first ``down`` front feet stand 8 cm below the
    others (down a step: on the floor below, the hind feet on the top), all feet standing."""
    task = make_task("quadruped_flat", robots.info(robot), goal=[2.0, 0.0], ground="fit",
                     foot_floors=True)
    model = task.planning_model(0.01)
    qpos = model.key_qpos[model.key(task.robot.home_key).id].copy()
    task.update_ground(0.0, qpos, np.zeros(model.nv))
    points = task.ground_fit.footholds[:, 0].copy()
    front = [i for i, f in enumerate(task.robot.feet) if f.startswith("F")][:down]
    points[front, 2] -= 0.08
    task.ground = task.ground_fit.observe(points, np.ones(4, bool))
    return task, model, qpos, points, front


def test_each_foot_stands_on_its_own_floor_in_the_planning_model():
    """Down a step the fitted plane runs between the two levels, the hind feet above it and
    the front feet below; in the planning model each foot touches only its own floor, at its
    own foothold, and no foot the common floor."""
    task, model, qpos, points, front = two_level_task()
    assert task.ground.a1 < -0.05  # the common plane tilts between the levels
    task.pose_ground(model)
    d = mujoco.MjData(model)
    d.qpos[:] = qpos
    d.qpos[2] -= 0.01  # every foot 1 cm down from where it stood
    mujoco.mj_forward(model, d)
    floors = foot_floor_bodies(model)
    assert len(floors) == 4
    for i, foot in enumerate(task.robot.feet):
        geom = model.geom(foot).id
        floor = task.foot_floor(i)
        assert floor.height(*points[i, :2]) == pytest.approx(points[i, 2])
        # the sphere's signed distance to its own floor along the floor's normal
        site = d.site_xpos[model.site(foot).id]
        gap = (site[2] - floor.height(*site[:2])) * floor.normal[2] - model.geom_size[geom][0]
        pairs = [k for k in range(d.ncon) if geom in d.contact.geom[k]]
        if i in front:  # 7 cm above its floor, the floor below: no contact at all
            assert pairs == [] and gap > 0.05
        else:  # 1 cm into its floor, the top: touching it, and it only
            assert [tuple(d.contact.geom[k]) for k in pairs] == [
                (int(model.body_geomadr[floors[i]]), geom)]
            assert d.contact.dist[pairs[0]] == pytest.approx(gap, abs=1e-4)


def test_a_humanoid_foot_stands_on_its_floor_with_heel_and_toe():
    """Each of the H1's feet touches its own floor with both its spheres, the common floor
    with neither."""
    task = make_task("humanoid_flat", robots.info("h1"), ground="fit", foot_floors=True)
    model = task.planning_model(0.01)
    task.bind(model)
    for i, side in enumerate(("left", "right")):
        for part in ("heel", "toe"):
            assert model.geom_conaffinity[model.geom(f"{side}_{part}").id] == FOOT_BIT << i


def test_a_swinging_foots_floor_is_the_fitted_plane():
    """Where a swinging foot will land is not known: its floor is the fitted plane, not where
    it stood, while the feet standing keep theirs. One front foot on the floor below, three
    on the top: no plane holds them all."""
    task, _, _, points, _ = two_level_task(down=1)
    off = np.abs(points[:, 2] - task.ground.height(points[:, 0], points[:, 1]))
    lifted = int(np.argmax(off))  # the foot the fitted plane misses most
    assert off[lifted] > 0.01
    swinging = np.ones(4, bool)
    swinging[lifted] = False
    task.ground = task.ground_fit.observe(points, swinging)
    assert task.foot_floor(lifted) == task.ground
    for i in np.flatnonzero(swinging):
        assert task.foot_floor(i).height(*points[i, :2]) == pytest.approx(points[i, 2])


def test_foot_floors_need_the_fitted_ground():
    with pytest.raises(ValueError, match="foot_floors is set but ground is 'level'"):
        make_task("quadruped_flat", robots.info("go1"), foot_floors=True)


def test_foot_floors_need_the_floors_in_the_planning_model():
    """A model without the feet's floors (built by a task without them) is refused at bind
    with one line, not planned on with one floor."""
    model = make_task("quadruped_flat", robots.info("go1"), ground="fit").planning_model(0.01)
    task = make_task("quadruped_flat", robots.info("go1"), ground="fit", foot_floors=True)
    with pytest.raises(ValueError, match="foot_floors needs a sphere on every foot and a floor"):
        task.bind(model)


def test_the_fitted_grounds_options_are_unused_on_a_map():
    """A terrain config (ground: fit, with foot_floors and ground_below) switched to a map
    with --set plans on the map as it would without them: one floor, no foothold below.
    (``felt`` takes them: it is the fitted plane until it meets a riser.)"""
    step = Path(__file__).resolve().parents[3] / "configs" / "maps" / "step_8cm.yaml"
    task = make_task("quadruped_flat", robots.info("go1"), ground="map", foot_floors=True,
                     ground_below=0.01, map=str(step))
    assert task.foot_floors == 0 and task.ground_below is None
    felt = make_task("quadruped_flat", robots.info("go1"), ground="felt", foot_floors=True,
                     ground_below=0.01)
    assert felt.foot_floors == 4 and felt.ground_below == 0.01
