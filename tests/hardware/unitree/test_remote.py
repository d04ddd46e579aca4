"""The wireless remote's 40-byte block (layout in hardware/unitree/remote.py) and the remote as
a velocity command source."""

from __future__ import annotations

import struct

import pytest

from hardware.lowlevel import remote_bits, remote_block
from hardware.unitree.remote import RemoteCommand, dead_band, decode_remote, encode_remote


def test_layout_offsets_match_the_documented_struct():
    block = bytearray(40)
    struct.pack_into("<H", block, 2, (1 << 5) | (1 << 9))  # L2 + B
    for offset, value in ((4, 0.1), (8, 0.2), (12, 0.3), (16, 0.4), (20, 0.5)):
        struct.pack_into("<f", block, offset, value)
    r = decode_remote(bytes(block))
    assert r.held() == ["L2", "B"]
    assert (r.lx, r.rx, r.ry, r.l2, r.ly) == pytest.approx((0.1, 0.2, 0.3, 0.4, 0.5))


def test_encode_round_trips_and_agrees_with_the_e_stop_bits():
    block = encode_remote(["L2", "B"], lx=-0.25, ly=0.75, rx=0.5)
    assert len(block) == 40
    assert remote_bits(block) == remote_bits(remote_block(["L2", "B"]))
    r = decode_remote(block)
    assert (r.lx, r.ly, r.rx, r.ry) == pytest.approx((-0.25, 0.75, 0.5, 0.0))
    with pytest.raises(ValueError, match="40 bytes"):
        decode_remote(block[:39])


class FakePlant:
    def __init__(self, block: bytes):
        self.block = block

    def wireless_remote(self) -> bytes:
        return self.block


def test_sticks_map_to_the_body_frame_command_with_a_dead_band():
    plant = FakePlant(encode_remote())
    source = RemoteCommand(plant, scale=[1.0, 0.4, 0.8], dead_band=0.1)
    source.read(2.9)  # centred: armed
    plant.block = encode_remote(ly=1.0, lx=0.5, rx=-1.0)
    c = source.read(3.0)
    # forward full, left stick right -> move right (vy < 0), right stick left -> turn left
    assert c.as_array() == pytest.approx([1.0, -0.4 * dead_band(0.5, 0.1), 0.8])
    assert c.stamp == 3.0
    plant.block = encode_remote(ly=0.05, lx=-0.08, rx=0.02)  # inside the dead band
    assert source.read(3.1).as_array().tolist() == [0.0, 0.0, 0.0]


def test_sticks_off_centre_at_the_start_command_nothing_until_centred(caplog):
    plant = FakePlant(encode_remote(ly=0.8))
    source = RemoteCommand(plant, dead_band=0.1)
    assert source.read(0.0).as_array().tolist() == [0.0, 0.0, 0.0]
    assert source.read(0.1).as_array().tolist() == [0.0, 0.0, 0.0]
    assert sum("centre the sticks" in r.message for r in caplog.records) == 1
    plant.block = encode_remote(ly=0.05)  # inside the dead band: armed
    assert source.read(0.2).as_array().tolist() == [0.0, 0.0, 0.0]
    plant.block = encode_remote(ly=0.8)
    assert source.read(0.3).vx > 0.5


def test_e_stop_buttons_command_zero_whatever_the_sticks_say():
    source = RemoteCommand(FakePlant(encode_remote(["L2", "B"], ly=1.0)))
    assert source.read(0.0).as_array().tolist() == [0.0, 0.0, 0.0]


@pytest.mark.parametrize("sticks", [dict(ly=float("nan")), dict(lx=float("inf")),
                                    dict(rx=-2.0), dict(ly=1e30)],
                         ids=["nan", "inf", "-2", "1e30"])
def test_sticks_no_remote_can_send_command_zero_and_are_counted(sticks):
    plant = FakePlant(encode_remote())
    source = RemoteCommand(plant)
    source.read(0.0)  # centred: armed
    plant.block = encode_remote(ly=1.0)
    assert source.read(0.1).vx == 1.0
    plant.block = encode_remote(**{"ly": 1.0, **sticks})
    assert source.read(0.2).as_array().tolist() == [0.0, 0.0, 0.0]
    assert source.stats() == {"refused": {"invalid": 1}}
    plant.block = encode_remote(ly=1.02)  # just past full deflection: clipped, not refused
    assert source.read(0.3).vx == 1.0 and source.refused.total() == 1


def test_a_plant_without_a_remote_and_bad_options_are_one_line_errors():
    with pytest.raises(ValueError, match="needs a Unitree robot plant"):
        RemoteCommand(object())
    with pytest.raises(ValueError, match="scale"):
        RemoteCommand.check_options({"scale": [1.0, 1.0]})
    with pytest.raises(ValueError, match="unknown button"):
        RemoteCommand.check_options({"estop_buttons": ["Z"]})
