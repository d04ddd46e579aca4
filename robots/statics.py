"""Where the feet of a standing robot rest (:func:`resting_sites`): on MuJoCo's soft
contacts a foot sphere of radius ρ carrying the robot does not rest with its centre at ρ but
lower, by the penetration at which the contact force balances the load.
"""

from __future__ import annotations

from collections.abc import Sequence

import mujoco
import numpy as np


def resting_sites(model: mujoco.MjModel, key: str, sites: Sequence[str],
                  duration: float = 1.0) -> np.ndarray:
    """World positions (n, 3) of ``sites`` after the robot has stood ``duration`` seconds
    from keyframe ``key`` holding the key's controls.

    Why simulate: a contact's penetration at rest follows from its solref/solimp and the
    load, and the Menagerie quadrupeds' feet are deliberately soft (solimp widths of 2-3 cm):
    under the standing robot their sphere centres sit 13-17 mm below the radius."""
    data = mujoco.MjData(model)
    mujoco.mj_resetDataKeyframe(model, data, model.key(key).id)
    for _ in range(round(duration / model.opt.timestep)):
        mujoco.mj_step(model, data)
    return np.array([data.site(name).xpos for name in sites])


def resting_site_heights(model: mujoco.MjModel, key: str, sites: Sequence[str],
                         duration: float = 1.0) -> np.ndarray:
    """Heights (z, world) of ``sites`` at rest (:func:`resting_sites`): over the model's
    floor at 0, how far above the ground the feet's sites rest."""
    return resting_sites(model, key, sites, duration)[:, 2]
