"""NatNet: packet codec, the fake Motive streamer, and decoding by an independent client (PyPI
``natnet``) and by ours, over real UDP on loopback."""

from __future__ import annotations

import socket
import struct
import threading
import time

import natnet as pypi_natnet
import numpy as np
import pytest

from hardware.fake.natnet_server import (
    CLOCK_FREQUENCY,
    FakeNatNetServer,
    MocapReplay,
    ReplaySettings,
)
from hardware.mocap import natnet_packets as pk
from hardware.mocap.frames import MocapFrame, mocap_to_base, xyzw_to_wxyz
from hardware.mocap.natnet import NatNetClient
from hardware.mocap.natnet_packets import FrameOfData, RigidBody
from hardware.rotations import quat_angle, quat_exp

GROUP = "239.255.42.99"


def free_udp_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(predicate, timeout: float = 3.0) -> bool:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.005)
    return True


def sample_frame(number: int = 7) -> FrameOfData:
    bodies = (RigidBody(1, np.array([0.5, 0.3, -1.25]), np.array([0.0, 0.6, 0.0, 0.8]), 0.001),
              RigidBody(4, np.array([-2.0, 0.1, 3.0]), np.array([0.0, 0.0, 0.0, 1.0]), 0.0,
                        tracking_valid=False))
    return FrameOfData(number, bodies, timestamp=12.345, stamp_mid_exposure=1_000_000,
                       stamp_data_received=1_020_000, stamp_transmit=1_050_000)


@pytest.mark.parametrize("version", [(3, 0, 0, 0), (3, 1, 0, 0), (4, 0, 0, 0), (4, 1, 0, 0)])
def test_frame_round_trip(version):
    frame = sample_frame()
    message_id, payload = pk.decode_packet(pk.encode_frame(frame, version))
    assert message_id == pk.FRAME_OF_DATA
    out = pk.decode_frame(payload, version)
    assert out.frame == 7 and out.timestamp == 12.345
    assert (out.stamp_mid_exposure, out.stamp_transmit) == (1_000_000, 1_050_000)
    assert out.system_latency(CLOCK_FREQUENCY) == pytest.approx(0.005)
    for a, b in zip(out.rigid_bodies, frame.rigid_bodies, strict=True):
        assert a.id == b.id and a.tracking_valid == b.tracking_valid
        np.testing.assert_allclose(a.pos, b.pos, rtol=1e-7)
        np.testing.assert_allclose(a.quat_xyzw, b.quat_xyzw, rtol=1e-7)


def test_decoder_skips_markers_skeletons_and_devices():
    """A NatNet 3.1 frame as Motive sends it with everything enabled, built field by field."""
    body = struct.pack("<i3f4ffh", 3, 1.0, 2.0, 3.0, 0.0, 0.0, 0.0, 1.0, 0.0005, 1)
    skeleton_body = struct.pack("<i3f4ffh", 65537, 9.0, 9.0, 9.0, 0.0, 0.0, 0.0, 1.0, 0.0, 1)
    payload = b"".join([
        struct.pack("<i", 42),
        struct.pack("<i", 2),                                   # marker sets
        b"robot\0", struct.pack("<i", 2), struct.pack("<6f", *range(6)),
        b"all\0", struct.pack("<i", 1), struct.pack("<3f", 1, 2, 3),
        struct.pack("<i", 1), struct.pack("<3f", 4, 5, 6),      # legacy markers
        struct.pack("<i", 1), body,                             # rigid bodies
        struct.pack("<i", 1), struct.pack("<ii", 1, 1), skeleton_body,
        struct.pack("<i", 2), struct.pack("<i3ffhf", 1, 0, 0, 0, 0.01, 0, 0.0) * 2,
        struct.pack("<i", 1), struct.pack("<ii", 1, 2),         # force plate, 2 channels
        struct.pack("<i", 3), struct.pack("<3f", 1, 2, 3), struct.pack("<i", 0),
        struct.pack("<i", 1), struct.pack("<iii", 2, 1, 1), struct.pack("<f", 7.0),  # device
        struct.pack("<IIdQQQ", 0, 0, 3.5, 10, 20, 30), struct.pack("<hi", 1, 0),
    ])
    frame = pk.decode_frame(memoryview(payload), (3, 1, 0, 0))
    assert frame.frame == 42 and frame.timestamp == 3.5 and frame.params == 1
    assert [b.id for b in frame.rigid_bodies] == [3]
    np.testing.assert_array_equal(frame.body(3).pos, [1.0, 2.0, 3.0])
    assert [b.id for b in frame.skeleton_bodies] == [65537]
    assert (frame.stamp_mid_exposure, frame.stamp_transmit) == (10, 30)
    with pytest.raises(pk.NatNetDecodeError):
        pk.decode_frame(memoryview(payload[:-20]), (3, 1, 0, 0))
    with pytest.raises(pk.NatNetDecodeError, match="not supported"):
        pk.decode_frame(memoryview(payload), (2, 9, 0, 0))


def test_server_info_round_trip():
    info = pk.ServerInfo("Motive", (3, 0, 1, 0), (4, 1, 0, 0), 10_000_000, 1511, True, GROUP)
    message_id, payload = pk.decode_packet(pk.encode_server_info(info))
    assert message_id == pk.SERVER_INFO and pk.decode_server_info(payload) == info


def replay_truth(replay: MocapReplay, frames: int = 20, dt: float = 0.002):
    """Step a moving, turning base through ``replay``; returns the true poses by capture time."""
    truth = {}
    for k in range(frames * 5 + 10):
        t = k * dt
        pos = np.array([0.5 * t, 0.2, 0.3 + 0.1 * t])
        quat = quat_exp([0.1, 0.2, 1.5 * t])
        replay.tick(t, pos, quat)
        truth[round(t, 6)] = (pos, quat)
    return truth


@pytest.mark.parametrize("multicast", [True, False], ids=["multicast", "unicast"])
def test_pypi_natnet_decodes_the_fake_stream(multicast):
    data_port = free_udp_port()
    server = FakeNatNetServer(command_port=0, data_port=data_port,
                              multicast_group=GROUP if multicast else "")
    client = pypi_natnet.NatNetClient(
        server_ip_address="127.0.0.1", local_ip_address="127.0.0.1", multicast_address=GROUP,
        command_port=server.command_port, data_port=data_port, use_multicast=multicast)
    received = []
    client.on_data_frame_received_event.handlers.append(received.append)
    try:
        client.connect(timeout=3.0)
        assert str(client.protocol_version) == "3.1.0.0"
        assert client.server_info.application_name == server.info.app_name
        client.run_async()
        if not multicast:  # the server streams once it has heard from the client
            assert wait_for(lambda: server.clients)
        frame = MocapFrame(up_axis="y", world_offset_pos=(1.0, 0.0, 0.0))
        replay = MocapReplay(server, frame, ReplaySettings(latency=0.01, pos_noise=0.0,
                                                           rot_noise=0.0, rigid_body_id=5))
        truth = replay_truth(replay, frames=20)
        assert wait_for(lambda: len(received) >= 20), len(received)
    finally:
        client.shutdown()
        server.close()
    for i, f in enumerate(received[:20]):
        assert f.prefix.frame_number == i + 1
        (body,) = f.rigid_bodies
        assert body.id_num == 5 and body.tracking_valid
        latency_ticks = f.suffix.stamp_transmit - f.suffix.stamp_camera_mid_exposure
        assert latency_ticks == round(0.01 * CLOCK_FREQUENCY)
        pos, quat = truth[round(f.suffix.timestamp, 6)]
        base_pos, base_quat = mocap_to_base(frame, body.pos, xyzw_to_wxyz(body.rot))
        np.testing.assert_allclose(base_pos, pos, atol=1e-6)
        assert quat_angle(base_quat, quat) < 1e-6


@pytest.mark.parametrize("version", [(3, 1, 0, 0), (4, 1, 0, 0)])
@pytest.mark.parametrize("multicast", [True, False], ids=["multicast", "unicast"])
def test_our_client_receives_the_fake_stream(multicast, version):
    data_port = free_udp_port()
    server = FakeNatNetServer(command_port=0, data_port=data_port,
                              multicast_group=GROUP if multicast else "", natnet_version=version)
    frames = []
    got = threading.Event()

    def on_frame(f, received):
        frames.append((f, received))
        if len(frames) >= 30:
            got.set()

    client = NatNetClient(multicast_group=GROUP if multicast else "",
                          command_port=server.command_port, data_port=data_port,
                          on_frame=on_frame)
    try:
        info = client.connect(timeout=3.0)
        assert info.natnet_version == version and info.clock_frequency == CLOCK_FREQUENCY
        if not multicast:
            assert wait_for(lambda: server.clients)
        replay = MocapReplay(server, MocapFrame(), ReplaySettings(
            latency=0.0, dropout_every=0.1, dropout_duration=0.03, pos_noise=0.0,
            rot_noise=0.0))
        truth = replay_truth(replay, frames=40)
        assert got.wait(3.0), len(frames)
    finally:
        client.close()
        server.close()
    numbers = [f.frame for f, _ in frames]
    assert numbers == sorted(numbers)
    # Frames captured during a dropout are never sent: their numbers are missing.
    assert client.lost >= 3 and client.refused.total() == 0
    for f, _ in frames:
        pos, quat = truth[round(f.timestamp, 6)]
        base_pos, base_quat = mocap_to_base(MocapFrame(), f.body(1).pos,
                                            xyzw_to_wxyz(f.body(1).quat_xyzw))
        np.testing.assert_allclose(base_pos, pos, atol=1e-6)
        assert quat_angle(base_quat, quat) < 1e-6


def test_client_times_out_without_server():
    client = NatNetClient(multicast_group="", command_port=free_udp_port())
    with pytest.raises(TimeoutError, match="no NatNet server"):
        client.connect(timeout=0.3)


@pytest.mark.parametrize("version", [(3, 0, 0, 0), (3, 1, 0, 0), (4, 0, 0, 0), (4, 1, 0, 0)])
def test_pypi_natnet_decodes_our_frames_of_every_supported_version(version):
    """PyPI ``natnet``'s own frame parser (written by others, with its own version rules: 4.1
    list sizes, assets) reads every version our encoder writes. It stops before the trailing
    end-of-data word, and it predates 4.1's precision timestamp (two u32 before the frame
    parameters): for 4.1 it checks everything up to the high-resolution stamps."""
    from natnet.data_frame import DataFrame
    from natnet.packet_buffer import PacketBuffer
    from natnet.version import Version

    frame = sample_frame(number=4242)
    message_id, payload = pk.decode_packet(pk.encode_frame(frame, version))
    assert message_id == pk.FRAME_OF_DATA
    buffer = PacketBuffer(bytes(payload))
    theirs = DataFrame.read_from_buffer(buffer, Version(*version))
    unread = 4 + (8 if version[:2] >= (4, 1) else 0)  # end-of-data; 4.1: see the docstring
    assert buffer.pointer == len(payload) - unread
    assert theirs.prefix.frame_number == 4242
    assert theirs.suffix.timestamp == frame.timestamp
    assert (theirs.suffix.stamp_camera_mid_exposure, theirs.suffix.stamp_data_received,
            theirs.suffix.stamp_transmit) == (1_000_000, 1_020_000, 1_050_000)
    assert len(theirs.rigid_bodies) == len(frame.rigid_bodies)
    for got, sent in zip(theirs.rigid_bodies, frame.rigid_bodies, strict=True):
        assert got.id_num == sent.id and got.tracking_valid == sent.tracking_valid
        np.testing.assert_allclose(got.pos, sent.pos, rtol=1e-6)
        np.testing.assert_allclose(got.rot, sent.quat_xyzw, rtol=1e-6)
        assert got.marker_error == pytest.approx(sent.error, rel=1e-6)


@pytest.mark.parametrize("multicast", [True, False], ids=["multicast", "unicast"])
def test_a_mid_run_server_info_replayed_frames_and_strangers_are_refused(multicast):
    """Over real UDP: a server description sent mid-run (another NatNet version and clock) does
    not change the client's; a repeated and a replayed frame number are refused; a frame sent
    to the client's command socket from another address than the server's too. Each is
    counted by reason, and the stream goes on."""
    data_port = free_udp_port()
    server = FakeNatNetServer(command_port=0, data_port=data_port,
                              multicast_group=GROUP if multicast else "")
    numbers: list[int] = []
    client = NatNetClient("127.0.0.1", "127.0.0.1", GROUP if multicast else "",
                          server.command_port, data_port,
                          lambda frame, _t: numbers.append(frame.frame))
    stranger = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    stranger.bind(("127.0.0.2", 0))  # another host, as far as the client can tell
    try:
        info = client.connect(timeout=3.0)
        if not multicast:
            assert wait_for(lambda: server.clients)
        for n in (1, 2, 3):
            server.send(sample_frame(n))
        assert wait_for(lambda: numbers == [1, 2, 3]), numbers
        server.announce(pk.ServerInfo("Motive", (3, 0, 0, 0), (4, 1, 0, 0), 1000, data_port,
                                      multicast, GROUP))
        for n in (3, 2):
            server.send(sample_frame(n))
        stranger.sendto(pk.encode_frame(sample_frame(50), info.natnet_version),
                        ("127.0.0.1", client._command.getsockname()[1]))
        server.send(sample_frame(4))
        assert wait_for(lambda: client.refused.total() == 4 and numbers == [1, 2, 3, 4])
    finally:
        stranger.close()
        client.close()
        server.close()
    assert client.info == info  # version and clock as connected
    assert client.refused.as_dict() == {"server_info": 1, "duplicate": 1, "out_of_order": 1,
                                        "foreign": 1}, client.refused.as_dict()
