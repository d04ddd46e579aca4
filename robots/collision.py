"""Collision filtering for planning models."""

from __future__ import annotations

import mujoco
import numpy as np

#: contype/conaffinity bit that pairs robot geoms with the world and with nothing else
_WORLD_BIT = 1 << 30


def ground_contacts_only(model: mujoco.MjModel) -> None:
    """Keep the robot's contacts with world geoms, drop the pairs between its own bodies.

    A pair collides when ``contype₁ & conaffinity₂ or contype₂ & conaffinity₁`` is nonzero.
    Robot geoms get ``contype = 0`` and ``conaffinity = WORLD_BIT``; every world geom (of the
    world body or a static body welded to it, such as a posable ground) that
    touched some robot geom gets ``WORLD_BIT`` added to its ``contype``. Robot-world pairs that
    collided still do, robot-robot pairs never do.

    Why: the analytic derivatives cover contacts with the ground only; a foot touching another
    leg in a planned rollout sent that knot to finite differences (a 2-3 ms hiccup in the
    planning loop). The planner does not need to foresee a leg brushing another; the simulated
    plant keeps its self-collisions.
    """
    world = model.body_weldid[model.geom_bodyid] == 0  # static: the world and bodies welded to it
    collides = (model.geom_contype != 0) | (model.geom_conaffinity != 0)
    robot = np.flatnonzero(~world & collides)
    for w in np.flatnonzero(world & collides):
        if np.any((model.geom_contype[w] & model.geom_conaffinity[robot])
                  | (model.geom_contype[robot] & model.geom_conaffinity[w])):
            model.geom_contype[w] |= _WORLD_BIT
    model.geom_contype[robot] = 0
    model.geom_conaffinity[robot] = _WORLD_BIT
