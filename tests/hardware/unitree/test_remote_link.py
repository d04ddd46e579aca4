"""The remote's block crosses the link process's shared memory with the state."""

from __future__ import annotations

from multiprocessing.shared_memory import SharedMemory

import numpy as np

from hardware.unitree.remote import decode_remote, encode_remote
from hardware.unitree.shared_block import SharedBlock
from mpc.app.plants.plant_base import PlantState


def test_shared_block_carries_the_remote_with_the_state():
    shm = SharedMemory(create=True, size=SharedBlock.size(7, 6, 2))
    try:
        block = SharedBlock(shm, 7, 6, 2)
        block.state[:] = 0.0
        assert block.read_remote() == bytes(40)
        state = PlantState(1.5, np.arange(7.0), np.ones(6), np.zeros(0))
        block.publish_state(state, 2.0, 3, encode_remote(["A"], ly=0.5))
        read, receipt, tick = block.read_state()
        assert read.time == 1.5 and receipt == 2.0 and tick == 3
        r = decode_remote(block.read_remote())
        assert r.ly == 0.5 and r.held() == ["A"]
    finally:
        shm.close()
        shm.unlink()
