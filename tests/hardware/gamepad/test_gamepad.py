"""The gamepad command source on the event streams of each supported pad (tests/hardware/gamepad
/streams.py), through its own reading thread: axes found from the capabilities, stick to
velocity with the dead band, the stand-still and e-stop buttons, unplugging (the dead man),
lost events, bad options; the e-stop on a robot's bridge; a virtual device where uinput
exists."""

from __future__ import annotations

import os
import time

import pytest
from evdev import ecodes as e
from streams import PADS, ReplayDevice, report
from unitree_helpers import first_damping, wait_for

from hardware.gamepad.pad import find_axes, name_of
from hardware.gamepad.source import GamepadCommand, open_device
from mpc.app.commands.filter import CommandFilter
from mpc.app.commands.sticks import dead_band


class DampRecorder:
    """A plant's damp() as the e-stop path calls it (the robot test below uses a real one)."""

    def __init__(self):
        self.reasons: list[str] = []

    def damp(self, reason: str) -> None:
        self.reasons.append(reason)


def options(pad) -> dict:
    """The pad's stop and e-stop buttons by name (the defaults, except in DirectInput mode)."""
    return {"stop_button": name_of(pad.stop), "estop_buttons": [name_of(pad.estop)]}


@pytest.fixture
def source():
    made = []

    def make(name: str, plant=None, **kwargs):
        pad = PADS[name]
        device = ReplayDevice(pad)
        src = GamepadCommand(plant, input_device=device, **{**options(pad), **kwargs})
        made.append(src)
        return src, device, pad

    yield make
    for src in made:
        src.close()


def settle(src: GamepadCommand, reports: int) -> None:
    assert wait_for(lambda: src.counts["reports"] >= reports, 2.0), src.counts


def centre(pad):
    return report((e.EV_ABS, pad.left_x, pad.raw(0.0)), (e.EV_ABS, pad.left_y, pad.raw(0.0)),
                  (e.EV_ABS, pad.right_x, pad.raw(0.0)))


@pytest.mark.parametrize("name", list(PADS))
def test_each_pad_axes_are_found_from_its_capabilities(name):
    pad = PADS[name]
    axes = find_axes(pad.capabilities)
    assert (axes["left_x"].code, axes["left_y"].code, axes["right_x"].code) == \
        (pad.left_x, pad.left_y, pad.right_x)
    assert axes["left_y"].scale(pad.maximum) == 1.0 and axes["left_y"].scale(pad.minimum) == -1.0


@pytest.mark.parametrize("name", list(PADS))
def test_sticks_drive_like_the_remote_with_a_dead_band(source, name):
    src, dev, pad = source(name, scale=[1.0, 0.4, 0.8], dead_band=0.1)
    dev.feed(centre(pad))
    settle(src, 1)
    assert src.read(1.0).as_array().tolist() == [0.0, 0.0, 0.0]  # centred: armed
    # left stick fully up (kernel: negative), half left; right stick fully left
    dev.feed(report((e.EV_ABS, pad.left_y, pad.minimum), (e.EV_ABS, pad.left_x, pad.raw(-0.5)),
                    (e.EV_ABS, pad.right_x, pad.minimum)))
    settle(src, 2)
    c = src.read(2.0)
    a_lx = src.axes["left_x"].scale(pad.raw(-0.5))
    assert c.as_array() == pytest.approx([1.0, 0.4 * dead_band(-a_lx, 0.1), 0.8], abs=1e-9)
    assert c.vy > 0 and c.yaw_rate > 0  # left stick left: go left; right stick left: turn left
    assert c.stamp == 2.0  # a connected pad's command is fresh whenever read
    # inside the dead band (a resting stick's drift)
    dev.feed(report((e.EV_ABS, pad.left_y, pad.raw(0.06)), (e.EV_ABS, pad.left_x, pad.raw(-0.05)),
                    (e.EV_ABS, pad.right_x, pad.raw(0.07))))
    settle(src, 3)
    assert src.read(3.0).as_array().tolist() == [0.0, 0.0, 0.0]


@pytest.mark.parametrize("name", ["xbox", "dualsense"])
def test_a_stick_off_centre_at_the_start_commands_nothing_until_centred(source, name):
    src, dev, pad = source(name)
    dev.feed(report((e.EV_ABS, pad.left_y, pad.minimum)))
    settle(src, 1)
    assert src.read(0.0).vx == 0.0
    dev.feed(centre(pad))
    settle(src, 2)
    src.read(0.1)
    dev.feed(report((e.EV_ABS, pad.left_y, pad.minimum)))
    settle(src, 3)
    assert src.read(0.2).vx == pytest.approx(1.0)


@pytest.mark.parametrize("name", list(PADS))
def test_the_stop_button_stands_the_robot_still_until_released_and_centred(source, name):
    src, dev, pad = source(name)
    dev.feed(centre(pad))
    settle(src, 1)
    src.read(0.0)
    dev.feed(report((e.EV_ABS, pad.left_y, pad.minimum)))
    settle(src, 2)
    assert src.read(0.1).vx == pytest.approx(1.0)
    dev.feed(report((e.EV_KEY, pad.stop, 1)))
    settle(src, 3)
    assert src.read(0.2).vx == 0.0
    dev.feed(report((e.EV_KEY, pad.stop, 0)))  # released, stick still pushed: still standing
    settle(src, 4)
    assert src.read(0.3).vx == 0.0
    dev.feed(centre(pad))
    settle(src, 5)
    assert src.read(0.4).vx == 0.0
    dev.feed(report((e.EV_ABS, pad.left_y, pad.minimum)))
    settle(src, 6)
    assert src.read(0.5).vx == pytest.approx(1.0)


@pytest.mark.parametrize("name", list(PADS))
def test_the_e_stop_button_damps_the_plant_at_once_and_commands_zero_after(source, name):
    plant = DampRecorder()
    src, dev, pad = source(name, plant=plant)
    dev.feed(centre(pad))
    settle(src, 1)
    src.read(0.0)
    dev.feed(report((e.EV_ABS, pad.left_y, pad.minimum)))
    settle(src, 2)
    assert src.read(0.1).vx == pytest.approx(1.0)
    dev.feed(report((e.EV_KEY, pad.estop, 1)))
    assert wait_for(lambda: plant.reasons, 2.0)  # from the reading thread, before any read
    assert plant.reasons[0].startswith("e-stop: gamepad")
    dev.feed(report((e.EV_KEY, pad.estop, 0)))
    settle(src, 4)
    assert src.read(0.2).vx == 0.0 and src.read(5.0).vx == 0.0  # latched
    assert len(plant.reasons) == 1
    assert src.stats()["estopped"]


@pytest.mark.parametrize("name", ["xbox", "f710_directinput"])
def test_unplugging_is_a_dead_man_timeout(source, name):
    src, dev, pad = source(name)
    dev.feed(centre(pad))
    settle(src, 1)
    filt = CommandFilter([1.5, 0.5, 1.0], [100.0, 100.0, 100.0], timeout=0.3)
    filt.update(0.0, src.read(0.0))
    dev.feed(report((e.EV_ABS, pad.left_y, pad.minimum)))
    settle(src, 2)
    assert filt.update(0.1, src.read(0.1))[0] == pytest.approx(1.0)
    time.sleep(0.4)  # a held stick sends nothing: still fresh while connected
    assert filt.update(0.2, src.read(0.2))[0] == pytest.approx(1.0) and not filt.stale
    dev.unplug()
    assert wait_for(lambda: src.unplugged_at is not None, 2.0)
    assert not filt.stale
    filt.update(0.25, src.read(0.25))
    time.sleep(0.35)  # past the timeout since the unplugging
    assert filt.update(0.3, src.read(0.3))[0] == 0.0 and filt.stale
    assert src.stats()["unplugged"]


def test_lost_events_are_read_back_from_the_device(source):
    src, dev, pad = source("xbox")
    dev.feed(centre(pad))
    settle(src, 1)
    src.read(0.0)
    # the kernel dropped events: the partial report is discarded, the state read back
    dev.values[pad.left_y] = pad.minimum
    dev.feed([(e.EV_ABS, pad.left_x, pad.maximum), (e.EV_SYN, e.SYN_DROPPED, 0),
              (e.EV_ABS, pad.right_x, pad.maximum), (e.EV_SYN, e.SYN_REPORT, 0)])
    settle(src, 2)
    assert src.counts["dropped"] == 1
    dev.values[pad.left_x] = pad.raw(0.0)
    c = src.read(0.1)
    assert c.vx == pytest.approx(1.0)


def test_bad_options_and_missing_devices_are_one_line_errors(source):
    with pytest.raises(ValueError, match="BTN_NOPE"):
        GamepadCommand.check_options({"stop_button": "BTN_NOPE"})
    with pytest.raises(ValueError, match="roles"):
        GamepadCommand.check_options({"axes": {"left_z": "ABS_X"}})
    with pytest.raises(ValueError, match="scale"):
        GamepadCommand.check_options({"scale": [1, 2]})
    with pytest.raises(ValueError, match="has no button BTN_TRIGGER"):
        source("xbox", stop_button="BTN_TRIGGER")
    if not os.path.isdir("/dev/input"):  # this machine: no input devices at all
        with pytest.raises(ValueError, match="no input device that looks like a gamepad"):
            open_device("")
    with pytest.raises(ValueError, match="/dev/input/event99"):
        open_device("/dev/input/event99")


def test_the_e_stop_reaches_a_robot_through_the_bridge(fake_robot):
    """The pad's e-stop puts a Unitree robot (the fake A1 over the real UDP protocol) in
    damping through the bridge, as the remote's e-stop buttons do."""
    from unitree_helpers import free_udp_port

    from hardware.safety.layer import SafetyConfig
    from hardware.unitree.udp_plant import UnitreeUdpPlant

    fake = fake_robot("a1")
    plant = UnitreeUdpPlant(fake.robot, robot_ip="127.0.0.1", robot_port=fake.port,
                            local_port=free_udp_port(), link_process=False,
                            safety=SafetyConfig(ramp_time=0.3, state_timeout=0.5)).bridge
    pad = PADS["xbox"]
    device = ReplayDevice(pad)
    src = GamepadCommand(plant, input_device=device)
    try:
        plant.prepare()
        pressed = time.monotonic()
        device.feed(report((e.EV_KEY, pad.estop, 1)))
        assert wait_for(lambda: plant.damping_reason is not None, 2.0)
        assert plant.damping_reason.startswith("e-stop: gamepad")
        time.sleep(0.1)
        assert first_damping(fake, pressed, plant.safety.damping_kd) - pressed < 0.1
    finally:
        src.close()
        plant.close()
