"""The last clamp before the wire, property-based: whatever command comes in (any floats, NaN,
infinities, values beyond the "off" sentinels, any gains, any modes), what leaves is finite,
within the robot's physical limits, and carries a sentinel only where the command asked for
one; and it stays so through each wire's encoder (legacy UDP, SDK2, LCM joint_command_t)."""

from __future__ import annotations

import math
import threading
import time

import lcm
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import robots
from hardware.lcm.lcm_types import joint_command_t
from hardware.lcm.plant import LcmPlant, model_gains
from hardware.lowlevel import MODE_FOC, MODE_OFF, MODE_SERVO, POS_STOP, SLOTS, VEL_STOP
from hardware.lowlevel import MotorCommand as Cmd
from hardware.safety.layer import ClampLog, CommandLimits, SafetyConfig, clamp_command
from hardware.safety.safe_plant import SafePlant
from hardware.unitree import legacy_packets, sdk2_messages
from hardware.unitree.motor_map import MotorMap

FAMILY = {"a1": "legacy", "go1": "legacy", "go2": "go2", "h1": "h1"}
LEGACY_WIRE = (legacy_packets.TAU_WIRE[1], legacy_packets.KP_WIRE[1], legacy_packets.KD_WIRE[1])
EXAMPLES = 300

#: Floats of every kind, the sentinels and values just beyond half of them (what the clamp
#: used to let pass as "off") among them.
ANY_FLOAT = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.floats(-50.0, 50.0),
    st.sampled_from([POS_STOP, -POS_STOP, VEL_STOP, -VEL_STOP, 1.07e9, 1.1e9, 8000.0, 9000.0,
                     np.nextafter(POS_STOP, 0), 1e30, -1e30, 0.0, -0.0]),
)
ANY_MODE = st.one_of(st.sampled_from([MODE_OFF, MODE_SERVO, MODE_FOC]), st.integers(0, 255))


def _slots(elements):
    return st.lists(elements, min_size=SLOTS, max_size=SLOTS).map(np.array)


COMMANDS = st.builds(Cmd, mode=_slots(ANY_MODE).map(lambda a: a.astype(np.uint8)),
                     q=_slots(ANY_FLOAT), dq=_slots(ANY_FLOAT), tau=_slots(ANY_FLOAT),
                     kp=_slots(ANY_FLOAT), kd=_slots(ANY_FLOAT))

_MAPS: dict[str, MotorMap] = {}


def motor_map(name: str) -> MotorMap:
    if name not in _MAPS:
        _MAPS[name] = MotorMap.build(robots.info(name), robots.load_planning_model(name),
                                     FAMILY[name])
    return _MAPS[name]


def limits_of(name: str, cfg: SafetyConfig | None = None) -> CommandLimits:
    m = motor_map(name)
    return CommandLimits(m.used, m.servo_mode, m.lower, m.upper, m.torque_limit,
                         cfg or SafetyConfig(), LEGACY_WIRE if FAMILY[name] == "legacy" else None)


def check_fit(cmd_in: Cmd, out: Cmd, lim: CommandLimits, f32: bool = False) -> None:
    """The properties of what leaves the clamp; ``f32``: ``out`` went through a wire's float32
    fields, so the bounds and the sentinel are compared as float32 (rounding is monotonic: a
    value within a bound stays within the bound's float32)."""
    def wire(x):
        return np.float32(x).astype(float) if f32 else x

    values_in = np.array([cmd_in.q, cmd_in.dq, cmd_in.tau, cmd_in.kp, cmd_in.kd], dtype=float)
    values = np.array([out.q, out.dq, out.tau, out.kp, out.kd], dtype=float)
    assert np.isfinite(values).all()
    used = lim.used
    mode_in = np.asarray(cmd_in.mode)
    bad = used & ~(np.isfinite(values_in).all(axis=0)
                   & ((mode_in == MODE_OFF) | (mode_in == lim.servo_mode)))
    off_q, off_dq = values[0] == wire(POS_STOP), values[1] == VEL_STOP
    # a sentinel only where the command asked for it, in a damped slot, or a slot not in use
    assert np.all(~off_q | (values_in[0] == POS_STOP) | bad | ~used)
    assert np.all(~off_dq | (values_in[1] == VEL_STOP) | ~used)
    # an "off" term has no gain
    assert np.all(values[3][off_q] == 0) and np.all(values[4][off_dq] == 0)
    # everything else within the limits
    for k, off in enumerate((off_q, off_dq, None, None, None)):
        check = used if off is None else used & ~off
        assert np.all(values[k][check] >= wire(lim.lo[k][check])), k
        assert np.all(values[k][check] <= wire(lim.hi[k][check])), k
    # damped slots hold the safe state in their servo mode; modes are off or the servo mode
    assert np.all(values[1:4][:, bad] == 0) and np.all(values[4][bad] == wire(lim.damping[4]))
    mode = np.asarray(out.mode)
    assert np.all((mode == MODE_OFF) | (mode == lim.servo_mode))
    assert np.all(mode[bad] == lim.servo_mode[bad]) and np.all(mode[~used] == MODE_OFF)
    assert np.all(values[0][~used] == wire(POS_STOP)) and np.all(values[1][~used] == VEL_STOP)


@pytest.mark.parametrize("name", sorted(FAMILY))
@settings(max_examples=EXAMPLES, deadline=None, derandomize=True)
@given(cmd=COMMANDS)
def test_what_leaves_the_clamp_fits_the_robot(name, cmd):
    lim = limits_of(name)
    out = clamp_command(cmd, lim, ClampLog())
    check_fit(cmd, out, lim)
    again = clamp_command(out, lim, ClampLog())  # a fitting command passes unchanged
    for a, b in zip((out.q, out.dq, out.tau, out.kp, out.kd, out.mode),
                    (again.q, again.dq, again.tau, again.kp, again.kd, again.mode), strict=True):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("name", ["a1", "go1"])
@settings(max_examples=EXAMPLES, deadline=None, derandomize=True)
@given(cmd=COMMANDS)
def test_legacy_packets_carry_the_clamped_command(name, cmd):
    lim, fmt = limits_of(name), legacy_packets.FORMATS[name]
    out = clamp_command(cmd, lim, ClampLog())
    back = legacy_packets.decode_low_cmd(fmt, legacy_packets.encode_low_cmd(fmt, out))
    check_fit(cmd, back, lim, f32=True)


@pytest.mark.parametrize("name", ["go2", "h1"])
@settings(max_examples=EXAMPLES, deadline=None, derandomize=True)
@given(cmd=COMMANDS)
def test_sdk2_messages_carry_the_clamped_command(name, cmd):
    lim = limits_of(name)
    out = clamp_command(cmd, lim, ClampLog())
    back = sdk2_messages.decode_low_cmd(sdk2_messages.encode_low_cmd(out))
    check_fit(cmd, back, lim, f32=True)


def test_values_beyond_the_sentinels_no_longer_pass_as_off():
    """The issue's holes, one by one: NaN, |q| >= 1.07e9, |dq| >= 8000 at full gain."""
    m, lim = motor_map("go1"), limits_of("go1")
    cmd = m.hold_command(m.home)
    cmd.q[0], cmd.q[1], cmd.dq[2], cmd.dq[3], cmd.kp[4] = 1.5e9, -3e9, 9000.0, -1e5, np.nan
    out = clamp_command(cmd, lim, ClampLog())
    assert out.q[0] == m.upper[0] and out.q[1] == m.lower[1]
    assert out.dq[2] == 20.0 and out.dq[3] == -20.0
    assert out.q[4] == POS_STOP and out.kp[4] == 0 and out.kd[4] == 3.0  # damped


def test_explicit_off_commands_keep_their_sentinels():
    """The bridge's own commands: damping (q off), torque mode (both terms off), hold."""
    h1 = motor_map("h1")
    lim = limits_of("h1")
    run = h1.run_command(np.full(len(h1.actuator_slots), 10.0), h1.hold_kp, h1.hold_kd)
    out = clamp_command(run, lim, ClampLog())
    slots = h1.actuator_slots
    assert np.all(out.q[slots] == POS_STOP) and np.all(out.dq[slots] == VEL_STOP)
    assert np.all(out.tau[slots] == 10.0)
    damping = clamp_command(h1.damping_command(3.0), lim, ClampLog())
    assert np.all(damping.q[h1.used] == POS_STOP) and np.all(damping.dq[h1.used] == 0)
    assert np.all(damping.kd[h1.used] == 3.0)


# --- LCM: the LCM plant's joint_command_t ----------------------------------------------------


class Listener:
    """joint_command_t messages on ``channel``, received over LCM by another instance."""

    def __init__(self, url: str, channel: str):
        self.got: list[joint_command_t] = []
        self._lc = lcm.LCM(url)
        self._lc.subscribe(channel, lambda c, d: self.got.append(joint_command_t.decode(d)))

    def next(self, timeout: float = 2.0) -> joint_command_t:
        n = len(self.got)
        deadline = time.monotonic() + timeout
        while len(self.got) == n and time.monotonic() < deadline:
            self._lc.handle_timeout(20)
        assert len(self.got) > n, "no joint_command_t arrived"
        return self.got[-1]


_CHANNELS = iter(range(10**6))


@pytest.fixture
def lcm_pair(udpm_url):
    """``make(robot)``: an LCM plant that needs no robot to send, and a listener of its
    commands on a channel of its own; one of each per test (LCM instances made and dropped
    by the hundred in one process have crashed the binding)."""
    made: dict[str, tuple[LcmPlant, Listener]] = {}

    def make(name: str) -> tuple[LcmPlant, Listener]:
        if name not in made:
            channel = f"CLAMP_{threading.get_ident()}_{next(_CHANNELS)}"
            plant = LcmPlant(robots.info(name), lcm_url=udpm_url, base_state="message",
                             command_channel=channel, state_channel=channel + "_STATE")
            made[name] = plant, Listener(udpm_url, channel)
        return made[name]

    yield make
    for plant, _ in made.values():
        plant.close()


FINITE = st.one_of(st.floats(-1e12, 1e12), st.sampled_from([POS_STOP, VEL_STOP, 1.1e9]))


@pytest.mark.parametrize("name", ["a1", "h1"])
@settings(max_examples=100, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_lcm_commands_fit_the_robot(name, data, lcm_pair):
    """Any finite controls and gains (non-finite ones damp: below), huge and negative
    included: every joint_command_t that arrives is within the physical limits."""
    plant, listener = lcm_pair(name)
    nu, lim = plant.nu, plant.limits
    servo = model_gains(plant.model)[0]
    plant.kp = np.array(data.draw(st.lists(FINITE, min_size=nu, max_size=nu)))
    plant.kd = np.array(data.draw(st.lists(FINITE, min_size=nu, max_size=nu)))
    plant.send(np.array(data.draw(st.lists(FINITE, min_size=nu, max_size=nu))))
    msg = listener.next()
    q, dq, tau, kp, kd = (np.array(v) for v in (msg.q, msg.dq, msg.tau, msg.kp, msg.kd))
    assert msg.damping == 0 and np.isfinite(np.concatenate([q, dq, tau, kp, kd])).all()
    assert np.all((lim.lower <= q) & (q <= lim.upper)) and np.all(np.abs(tau) <= lim.torque)
    assert np.all((kp >= 0) & (kp <= lim.kp)) and np.all((kd >= 0) & (kd <= lim.kd))
    assert np.all(dq == 0) and np.all(kp[~servo] == 0) and np.all(kd[~servo] == 0)


@pytest.mark.parametrize("bad", [math.nan, math.inf])
def test_lcm_non_finite_gains_damp(bad, lcm_pair):
    plant, listener = lcm_pair("a1")
    plant.kd[3] = bad
    plant.send(np.zeros(12))
    assert listener.next().damping == 1 and plant.damping_reason == "non-finite gains"


def test_lcm_gains_are_held_to_the_safety_maxima(lcm_pair):
    """The issue's case: plant.kp up to 1000 was sent unclamped behind the safety wrapper."""
    plant, listener = lcm_pair("a1")
    plant.kp, plant.kd = np.full(12, 1000.0), np.full(12, 100.0)
    safe = SafePlant(plant, robots.info("a1"), SafetyConfig(max_kp=120.0, max_kd=4.0),
                     robots.load_planning_model("a1"))
    # no robot sends states here: the command counts as fresh (its age is not the point)
    plant.state_age = lambda: 0.0
    safe.send(np.zeros(12))
    msg = listener.next()
    assert max(msg.kp) == 120.0 and max(msg.kd) == 4.0
