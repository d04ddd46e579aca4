import mujoco
import numpy as np

import robots
from robots.collision import ground_contacts_only

# two overlapping balls resting in the floor, and a ball that collides with nothing
XML = """
<mujoco>
  <worldbody>
    <geom name="floor" type="plane" size="1 1 0.1"/>
    <body pos="0 0 0.09"><freejoint/><geom name="a" type="sphere" size="0.1"/></body>
    <body pos="0.15 0 0.09"><freejoint/><geom name="b" type="sphere" size="0.1"/></body>
    <body pos="0.3 0 0.09"><freejoint/>
      <geom name="ghost" type="sphere" size="0.1" contype="0" conaffinity="0"/>
    </body>
  </worldbody>
</mujoco>
"""


def contact_pairs(model: mujoco.MjModel) -> set[tuple[str, str]]:
    data = mujoco.MjData(model)
    mujoco.mj_forward(model, data)
    name = lambda g: mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_GEOM, g)  # noqa: E731
    return {tuple(sorted((name(g1), name(g2)))) for g1, g2 in data.contact.geom[:data.ncon]}


def test_keeps_ground_contacts_and_drops_self_contacts():
    model = mujoco.MjModel.from_xml_string(XML)
    assert contact_pairs(model) == {("a", "floor"), ("b", "floor"), ("a", "b")}
    ground_contacts_only(model)
    assert contact_pairs(model) == {("a", "floor"), ("b", "floor")}


def test_a1_planning_model_has_no_self_pairs_and_the_feet_still_touch():
    model = robots.load_model("a1")
    ground_contacts_only(model)
    world = np.flatnonzero(model.geom_bodyid == 0)
    robot = np.flatnonzero(model.geom_bodyid != 0)
    pair = lambda g1, g2: bool(  # noqa: E731
        model.geom_contype[g1] & model.geom_conaffinity[g2]
        or model.geom_contype[g2] & model.geom_conaffinity[g1])
    assert not any(pair(g1, g2) for g1 in robot for g2 in robot)
    assert all(pair(w, g) for w in world for g in robot)
    data = mujoco.MjData(model)
    mujoco.mj_resetDataKeyframe(model, data, 0)
    for _ in range(200):  # settle onto the feet
        mujoco.mj_step(model, data)
    touching = set(data.contact.geom[:data.ncon].ravel())
    feet = {mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_GEOM, f"{leg}_foot")
            for leg in ("FR", "FL", "RR", "RL")}
    assert feet <= touching
