"""Where the feet of a standing robot rest (:func:`resting_site_heights`): on MuJoCo's soft
contacts a foot sphere of radius ρ carrying the robot does not rest with its centre at ρ but
lower, by the penetration at which the contact force balances the load.
"""

from __future__ import annotations

from collections.abc import Sequence

import mujoco
import numpy as np


def resting_site_heights(model: mujoco.MjModel, key: str, sites: Sequence[str],
                         duration: float = 1.0) -> np.ndarray:
    """Heights of ``sites`` over the ground they rest on after the robot has stood
    ``duration`` seconds from keyframe ``key`` holding the key's controls: a site's height
    less that of the surface its body touches (a contact's position lies halfway through its
    penetration, so the ground's surface is |dist|/2 above it; the highest such surface). Over
    the ground, not the absolute height: on a terrain map whose start is not at 0 (an
    elevation map raised by its error) the robot rests that much higher.

    Why simulate: a contact's penetration at rest follows from its solref/solimp and the
    load, and the Menagerie quadrupeds' feet are deliberately soft (solimp widths of 2-3 cm):
    under the standing robot their sphere centres sit 13-17 mm below the radius."""
    data = mujoco.MjData(model)
    mujoco.mj_resetDataKeyframe(model, data, model.key(key).id)
    for _ in range(round(duration / model.opt.timestep)):
        mujoco.mj_step(model, data)
    contacts = data.contact[: data.ncon]
    bodies = model.geom_bodyid[contacts.geom]  # (ncon, 2)
    surface = contacts.pos[:, 2] - contacts.dist / 2
    heights = []
    for name in sites:
        site = data.site(name)
        touching = np.any(bodies == model.site_bodyid[site.id], axis=1)
        ground = float(surface[touching].max()) if touching.any() else 0.0
        heights.append(site.xpos[2] - ground)
    return np.array(heights)
