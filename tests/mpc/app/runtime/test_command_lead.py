"""The command lead: the transport delay of the planning model's overlay plus the state's age,
which the feedback law looks ahead by (mpc/app/runtime/feedback.py), unless
runtime.compensate_delay is off."""

import pytest

import robots
from mpc.app.config import load_config
from mpc.app.plants.sim_plant import SimPlant
from mpc.app.runtime.session import Session, command_lead


def overlay_file(tmp_path, delay: float):
    path = tmp_path / "overlay.yaml"
    path.write_text(f"robot: a1\ndelay: {delay}\ntrunk: {{mass: 6.5}}\n")
    return path


def test_the_lead_is_the_overlays_delay_and_the_states_age(tmp_path):
    with_overlay = f"robot={{name: a1, overlay: {overlay_file(tmp_path, 0.007)}}}"
    assert command_lead(load_config("configs/a1_trot.yaml", [with_overlay])) == \
        pytest.approx(0.009)  # the default sensor latency: 2 ms
    fresh = load_config("configs/a1_trot.yaml", [with_overlay, "runtime.sensor_latency=0"])
    assert command_lead(fresh) == 0.007
    off = load_config("configs/a1_trot.yaml", [with_overlay, "runtime.compensate_delay=false"])
    assert command_lead(off) == 0.0
    assert command_lead(load_config("configs/a1_trot.yaml")) == 0.0  # nominal: no delay


def test_a_session_planned_on_an_overlay_feeds_back_ahead_by_its_delay(tmp_path):
    cfg = load_config("configs/a1_trot.yaml", [
        "runtime.mode=lockstep", f"robot={{name: a1, overlay: {overlay_file(tmp_path, 0.006)}}}"])
    session = Session(cfg, tmp_path / "run", plant=SimPlant(robots.info("a1")))
    try:
        assert session.feedback.lead == pytest.approx(0.008)
        assert session.feedback.model is session.planner.model
    finally:
        session.close("lockstep")
