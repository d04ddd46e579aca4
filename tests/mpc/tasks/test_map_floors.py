"""``task.map_contacts: floors``: on a terrain map each foot of the planning model stands on a
level floor of its own, placed once per plan where the foot stands (a foot off the ground: the
lowest of the ground it is over, the ground its swing left and the ground it lands on), and
not on the map's height field, whose prisms lose a loaded foot."""

from __future__ import annotations

import warnings

import mujoco
import numpy as np
import pytest

import derivatives
import robots
from derivatives.analytic import AnalyticFallbackWarning
from derivatives.oracle import centered_fd, relative_error, settle_solver
from mpc.tasks import make_task
from mpc.tasks.ground import FOOT_FLOOR
from mpc.tasks.map_ground import MAP_GEOM
from mpc.tasks.terrain_map import stairs

STAIRS = stairs(rise=0.12)


def go2_floors(gait: str):
    task = make_task("quadruped_flat", robots.info("go2"), ground="map", goal=[3.0, 0.0],
                     gait=gait, map_contacts="floors")
    task.set_map(STAIRS)
    return task, task.planning_model(0.01)


def standing(task, model, x: float) -> mujoco.MjData:
    """The home keyframe with the base at x, raised by the map's height there."""
    d = mujoco.MjData(model)
    mujoco.mj_resetDataKeyframe(model, d, model.key(task.robot.home_key).id)
    d.qpos[0] = x
    d.qpos[2] += float(STAIRS.height(x, 0.0))
    mujoco.mj_forward(model, d)
    return d


def test_a_foot_pressed_into_a_flat_field_loses_its_upward_contact():
    """Why the feet leave the field: MuJoCo collides a sphere with each triangular prism of a
    height field, side walls included. A foot sphere (the Go2's 2.2 cm) over a sample of a flat
    field, where six prisms meet, touches each of them: pressed 3 mm in, all six push it up;
    2.5 cm in (a hard landing in a plan's 10 ms step), all six push it sideways (70° or more
    from the vertical), against each other. Between samples some normals tilt from 5 mm on.
    In the plans on the stairs a foot that landed hard sank 5 cm into a tread and was held
    there by opposed contact forces of 3e5 N."""
    xml = """<mujoco><asset><hfield name="h" nrow="21" ncol="21" size="0.5 0.5 0.24 0.1"/>
    </asset><worldbody><geom type="hfield" hfield="h"/><body><freejoint/>
    <geom type="sphere" size="0.022" mass="1"/></body></worldbody></mujoco>"""
    m = mujoco.MjModel.from_xml_string(xml)
    m.hfield_data[:] = 0.5  # flat at 0.12 m
    d = mujoco.MjData(m)
    for depth, upward in ((0.003, True), (0.025, False)):
        d.qpos[:3] = 0.0, 0.0, 0.12 + 0.022 - depth
        mujoco.mj_forward(m, d)
        normals = np.array([d.contact[i].frame[:3] for i in range(d.ncon)])
        assert len(normals) == 6
        if upward:
            assert normals[:, 2].min() > 0.999
        else:
            assert normals[:, 2].max() < 0.35  # each 70° or more from the vertical


def test_each_foot_stands_on_a_floor_of_its_own_and_not_on_the_field():
    """On the treads (x 1.2 m: the feet on the third and fourth) each foot's one contact is
    with its own floor, placed by the plan's update at the ground it stands on (the foot site
    less rho; standing, every foot in its planned stance)."""
    task, m = go2_floors("stand")
    d = standing(task, m, 1.2)
    task.update(0.0, d.qpos, d.qvel)  # the first plan takes a foot radius, not rho
    task.update(0.02, d.qpos, d.qvel)
    task.pose_ground(m)
    mujoco.mj_forward(m, d)
    field = m.geom(MAP_GEOM).id
    floors = [m.geom(f"{FOOT_FLOOR}{i}").id for i in range(4)]
    feet = [m.geom(f"{f}_foot").id for f in ("FL", "RL", "FR", "RR")]
    pairs = sorted(tuple(sorted(map(int, d.contact.geom[i]))) for i in range(d.ncon))
    assert pairs == sorted(tuple(sorted(p)) for p in zip(floors, feet, strict=True))
    assert field not in d.contact.geom[:d.ncon].ravel()
    sites = [m.site(f).id for f in task.robot.feet]
    ground = d.site_xpos[sites, 2] - task.foot_height
    np.testing.assert_allclose(d.geom_xpos[floors, 2], ground, atol=1e-12)


@pytest.mark.parametrize("offset, noise", [(0.02, 0.0), (-0.02, 0.0), (0.0, 0.01)])
def test_rho_is_taken_over_the_maps_ground_so_a_raised_map_keeps_the_feet_on_their_floors(
        offset, noise):
    """An elevation map 2 cm off (the whole map raised or lowered) or noisy must leave ρ, the
    sites' resting height over the ground, as on the true map: taken as the sites' absolute
    height it came out 2 cm high on the raised map, every standing foot's floor 2 cm under
    the foot, and the A1 fell at the start. The plan's update registers the map to the feet;
    every foot then touches its floor, as on the true map."""
    true, _ = go2_floors("stand")
    task = make_task("quadruped_flat", robots.info("go2"), ground="map", goal=[3.0, 0.0],
                     gait="stand", map_contacts="floors")
    task.set_map(STAIRS.perturbed(offset, noise, seed=3))
    m = task.planning_model(0.01)
    # on a noisy map the robot rests on the field's prisms, which it sinks into 3 mm less
    assert task.foot_height == pytest.approx(true.foot_height, abs=3e-3 if noise else 2e-4)
    d = standing(task, m, -0.5)  # on the floor before the flight
    task.update(0.0, d.qpos, d.qvel)
    task.update(0.02, d.qpos, d.qvel)
    task.pose_ground(m)
    mujoco.mj_forward(m, d)
    floors = {m.geom(f"{FOOT_FLOOR}{i}").id for i in range(4)}
    touching = {int(g) for i in range(d.ncon) for g in d.contact.geom[i] if g in floors}
    assert touching == floors


def test_a_foot_off_the_ground_has_its_floor_at_the_lowest_ground_of_its_swing():
    """A foot that does not stand (here: lifted 5 cm off the floor before the flight, as in a
    swing) gets its floor at the lowest of the ground under it, the ground its swing left and
    the one it lands on: never above the foot (here the floor it left, not where it is)."""
    task, m = go2_floors("walk")
    d = standing(task, m, 0.2)
    task.update(0.0, d.qpos, d.qvel)  # the first plan: every foot stands
    fl = task.robot.feet.index("FL_foot")
    plan = task.swing_plan
    points = np.array(d.site_xpos[[m.site(f).id for f in task.robot.feet]])
    points[:, 2] -= task.foot_height
    points[fl, 2] += 0.05
    standing_feet = np.ones(4, bool)
    standing_feet[fl] = False
    stance = task.planned_stance(0.0)
    assert not stance[fl]  # the walk starts with FL's swing
    task._place_map_floors(points, standing_feet, stance)
    lowest = min(points[fl, 2], *(v for v in (plan.start[fl, 0], plan.land[fl, 0])
                                  if np.isfinite(v)))
    assert task._map_floor_z[fl] == pytest.approx(lowest)
    assert task._map_floor_z[fl] <= points[fl, 2] - 0.05 + 1e-12
    others = np.flatnonzero(standing_feet)
    np.testing.assert_array_equal(task._map_floor_z[others], points[others, 2])


def test_a_foot_in_its_stance_that_moves_keeps_the_ground_under_it():
    """A foot in its planned stance that does not stand (it moves faster than a standing foot:
    it slips, or settles after its touchdown) keeps its floor at the ground under it, not at
    its next swing's: here FR stands on the landing, 16 cm short of the flight down, and its
    next swing (the base walking at 0.4 m/s) lands a tread down. On that swing's floor the
    planning model lost FR's support; on the stairs the Go2 fell at the top of the flight."""
    task, m = go2_floors("walk")
    d = standing(task, m, 2.5)
    d.qvel[0] = 0.4
    task.update(0.0, d.qpos, d.qvel)
    fr = task.robot.feet.index("FR_foot")
    stance, plan = task.planned_stance(0.0), task.swing_plan
    assert stance[fr] and plan.land[fr, 0] < plan.start[fr, 0] - 0.1  # it will step down
    points = np.array(d.site_xpos[[m.site(f).id for f in task.robot.feet]])
    points[:, 2] -= task.foot_height
    moving = np.ones(4, bool)
    moving[fr] = False
    task._place_map_floors(points, moving, stance)
    under = float(STAIRS.height(*points[fr, :2])) + task.map_ground.shift
    assert under == pytest.approx(0.6, abs=0.01)  # the landing
    assert task._map_floor_z[fr] == pytest.approx(min(points[fr, 2], under))


def test_floors_need_ground_map_and_a_wrong_choice_names_the_choices():
    with pytest.raises(ValueError, match="choose pruned, all or floors"):
        make_task("quadruped_flat", robots.info("go2"), ground="map", map_contacts="planes")
    for ground in ("level", "fit", "felt"):  # felt: its riser box must touch the feet
        with pytest.raises(ValueError, match="floors needs ground: map"):
            make_task("quadruped_flat", robots.info("go2"), ground=ground,
                      map_contacts="floors")


def test_a_model_standing_on_its_floors_is_linearized_exactly():
    """On the treads, each foot pressed onto its own floor: the analytic backend linearizes the
    step without finite differences (plane contacts), to centred differences within 1e-6."""
    task, m = go2_floors("stand")
    d = standing(task, m, 1.2)
    task.update(0.0, d.qpos, d.qvel)
    task.update(0.02, d.qpos, d.qvel)
    task.pose_ground(m)
    d.ctrl[:] = m.key_ctrl[m.key(task.robot.home_key).id]
    mujoco.mj_forward(m, d)
    settle_solver(m, d)
    floors = {m.geom(f"{FOOT_FLOOR}{i}").id for i in range(4)}
    assert {int(g) for g in d.contact.geom[:d.ncon].ravel()} & floors == floors
    with warnings.catch_warnings():
        warnings.simplefilter("error", AnalyticFallbackWarning)
        provider = derivatives.make_provider("analytic", m, threads=1)
        before = derivatives.fd_evaluations()
        A, B = provider.transition(d)
    assert derivatives.fd_evaluations() == before
    A_ref, B_ref = centered_fd(m, d, 1e-7)
    errors = relative_error(A, A_ref), relative_error(B, B_ref)
    assert max(errors) < 1e-6, errors
