"""The sticks' dead band, option checks and arming (shared by the remote and gamepads)."""

import logging

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mpc.app.commands.sticks import Arming, check_stick_options, dead_band


def test_the_dead_band_is_zero_inside_and_reaches_full_deflection():
    assert dead_band(0.05, 0.08) == 0.0
    assert dead_band(-0.08, 0.08) == 0.0
    assert dead_band(1.0, 0.08) == pytest.approx(1.0)
    assert dead_band(-1.0, 0.08) == pytest.approx(-1.0)
    assert dead_band(0.54, 0.08) == pytest.approx(0.5)


@given(a=st.floats(-1.0, 1.0), d=st.floats(0.0, 0.99))
def test_the_dead_band_keeps_sign_and_range(a, d):
    out = dead_band(a, d)
    assert -1.0 - 1e-12 <= out <= 1.0 + 1e-12
    assert out == 0.0 or (out > 0) == (a > 0)


@pytest.mark.parametrize("options, key", [
    ({"scale": [1.0, 0.5]}, "scale"), ({"scale": [1.0, -0.1, 1.0]}, "scale"),
    ({"scale": [1.0, float("nan"), 1.0]}, "scale"), ({"dead_band": 1.0}, "dead_band"),
    ({"dead_band": -0.01}, "dead_band"),
])
def test_bad_stick_options_name_the_key(options, key):
    with pytest.raises(ValueError, match=f"command.source.{key}"):
        check_stick_options(options)
    check_stick_options({})  # the defaults are fine


def test_sticks_drive_only_once_seen_centred(caplog):
    arming = Arming("pad", logging.getLogger("test"))
    with caplog.at_level(logging.WARNING):
        assert not arming((0.3, 0.0, 0.0))
        assert not arming((0.3, 0.0, 0.0))
    assert [r.getMessage() for r in caplog.records] == [
        "pad: a stick is off centre; centre the sticks to drive"]  # once
    assert arming((0.0, 0.0, 0.0))
    assert arming((0.3, 0.0, 0.0))  # armed, it drives
    arming.disarm()
    assert not arming((0.3, 0.0, 0.0))
