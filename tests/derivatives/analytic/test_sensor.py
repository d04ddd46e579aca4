"""Sensor Jacobians C, D and the task's residual Jacobians against finite differences.

Oracles: the C, D of centered ``mjd_transitionFD`` (differences of ``sensordata``), and centered
differences of the quadruped task's residual with time held fixed.
"""

from __future__ import annotations

import warnings

import analytic_verify as verify
import mujoco
import numpy as np
import pytest
from analytic_oracles import sensor_zoo_model

import derivatives
from derivatives.analytic.sensor import SUPPORTED

TOLERANCE = 1e-6


def analytic_cd(m, d):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        provider = derivatives.make_provider("analytic", m, threads=1)
    assert not provider.fallback
    nx = 2 * m.nv
    A, B = np.zeros((nx, nx)), np.zeros((nx, m.nu))
    C, D = np.zeros((m.nsensordata, nx)), np.zeros((m.nsensordata, m.nu))
    before = derivatives.fd_evaluations()
    provider.linearize(d, A, B, C, D)
    assert derivatives.fd_evaluations() == before
    return C, D


def rows_by_sensor(m):
    for i in range(m.nsensor):
        yield i, slice(m.sensor_adr[i], m.sensor_adr[i] + m.sensor_dim[i])


def zoo_state(seed: int):
    m = verify.oracle_model(sensor_zoo_model())
    d = mujoco.MjData(m)
    rng = np.random.default_rng(seed)
    d.qpos[2] = 0.06 - 0.002
    d.qpos[7:] = (0.3, 0.05)
    d.qvel[:] = 0.5 * rng.standard_normal(m.nv)
    d.ctrl[:] = (0.2, 1.0)
    verify.settle_solver(m, d)
    return m, d


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_every_supported_sensor_type(seed):
    m, d = zoo_state(seed)
    assert set(m.sensor_type) == set(SUPPORTED)
    C, D = analytic_cd(m, d)
    _, _, C_ref, D_ref = verify.centered_fd(m, d, sensors=True)
    for i, rows in rows_by_sensor(m):
        name = mujoco.mjtSensor(m.sensor_type[i]).name
        scale = max(1.0, np.abs(C_ref[rows]).max())
        np.testing.assert_allclose(C[rows], C_ref[rows], rtol=0, atol=TOLERANCE * scale,
                                   err_msg=f"C of sensor {i} ({name})")
        np.testing.assert_allclose(D[rows], D_ref[rows], rtol=0, atol=TOLERANCE * scale,
                                   err_msg=f"D of sensor {i} ({name})")


def test_cutoff_clips_to_zero_rows():
    m, d = zoo_state(1)
    i = next(i for i in range(m.nsensor) if m.sensor_cutoff[i] > 0)
    rows = slice(m.sensor_adr[i], m.sensor_adr[i] + 3)
    clipped = np.abs(d.sensordata[rows]) >= m.sensor_cutoff[i]
    assert clipped.any() and not clipped.all()
    C, _ = analytic_cd(m, d)
    assert np.all(C[rows][clipped] == 0) and np.abs(C[rows][~clipped]).max() > 0


@pytest.mark.parametrize("state", verify.STATES)
def test_task_sensors_on_the_a1_planning_model(a1_task, state):
    _, planning = a1_task
    m = verify.oracle_model(planning)
    d = verify.reference_state(m, state)
    C, D = analytic_cd(m, d)
    _, _, C_ref, D_ref = verify.centered_fd(m, d, sensors=True)
    assert verify.relative_error(C, C_ref) <= TOLERANCE
    assert verify.relative_error(D, D_ref) <= TOLERANCE


def residual_at(task, m, d, time):
    s = mujoco.MjData(m)
    mujoco.mj_copyData(s, m, d)
    mujoco.mj_forward(m, s)
    return task.residual(s.sensordata.copy(), np.asarray(time))


@pytest.mark.parametrize("state", ["standing", "sliding", "airborne"])
def test_residual_jacobians_match_finite_differences(a1_task, state):
    """r_x = (∂r/∂s) C and r_u = (∂r/∂s) D against differences of the residual, time fixed
    mid-swing so the gait rows are active."""
    task, planning = a1_task
    m = verify.oracle_model(planning)
    d = verify.reference_state(m, state)
    time = 0.125
    C, D = analytic_cd(m, d)
    R = task.residual_jacobian(d.sensordata.copy(), np.asarray(time))
    assert np.count_nonzero(R[task.term_slices[3]]) > 0  # gait rows in swing
    eps = 1e-6
    columns = []
    for j in range(2 * m.nv + m.nu):
        out = []
        for sign in (1.0, -1.0):
            p = mujoco.MjData(m)
            mujoco.mj_copyData(p, m, d)
            if j < m.nv:
                dq = np.zeros(m.nv)
                dq[j] = sign * eps
                mujoco.mj_integratePos(m, p.qpos, dq, 1.0)
            elif j < 2 * m.nv:
                p.qvel[j - m.nv] += sign * eps
            else:
                p.ctrl[j - 2 * m.nv] += sign * eps
            out.append(residual_at(task, m, p, time))
        columns.append((out[0] - out[1]) / (2 * eps))
    fd = np.stack(columns, axis=-1)
    analytic = np.hstack([R @ C, R @ D])
    np.testing.assert_allclose(analytic, fd, rtol=0, atol=TOLERANCE * np.abs(fd).max())
