"""The sensor model: noise of the stated size, bias drift, quantization, latency, the ideal
switch, and one-line errors for figures that make no sense."""

import math

import numpy as np
import pytest

from hardware.fake.sensors import SensorModel, SensorSpec

DT = 0.002
QUAT = np.array([1.0, 0.0, 0.0, 0.0])


def readings(spec: SensorSpec, n: int, seed: int = 0, q=None):
    model = SensorModel(spec, DT, 4, seed)
    q = np.zeros(12) if q is None else q
    return [model.measure(k * DT, QUAT, np.zeros(3), np.array([0, 0, 9.81]), q, np.zeros(12),
                          np.full(4, 50.0)) for k in range(n)]


def test_ideal_sensors_report_the_truth_without_delay():
    r = readings(SensorSpec(enabled=False), 3, q=np.full(12, 0.123456789))
    assert r[-1].time == pytest.approx(2 * DT)
    np.testing.assert_array_equal(r[-1].q, np.full(12, 0.123456789))
    np.testing.assert_array_equal(r[-1].accel, [0, 0, 9.81])
    np.testing.assert_array_equal(r[-1].foot_force, np.full(4, 50.0))


def test_white_noise_matches_the_stated_density_and_the_bias_stays_put():
    spec = SensorSpec(gyro_bias_walk=0.0, accel_bias_walk=0.0)
    r = readings(spec, 5000)
    gyro = np.array([x.gyro for x in r])
    accel = np.array([x.accel for x in r])
    expected = spec.gyro_noise * math.sqrt(0.5 / DT)
    assert gyro.std(axis=0) == pytest.approx(np.full(3, expected), rel=0.1)
    assert accel.std(axis=0) == pytest.approx(np.full(3, spec.accel_noise * math.sqrt(0.5 / DT)),
                                              rel=0.1)
    # a constant turn-on bias, of the stated size across seeds (the mean of 200 readings
    # leaves the bias and 1/sqrt(200) of the white noise)
    biases = [np.mean([x.accel[0] for x in readings(spec, 200, seed)]) for seed in range(100)]
    assert np.std(biases) == pytest.approx(spec.accel_bias_init, rel=0.25)


def test_encoders_quantize_and_readings_are_late_by_the_latency():
    spec = SensorSpec(latency=0.004)
    r = readings(spec, 10, q=np.full(12, 0.3))
    steps = r[-1].q / spec.encoder_step
    np.testing.assert_allclose(steps, np.round(steps), atol=1e-6)
    assert r[-1].time == pytest.approx(9 * DT - 0.004)


def test_the_attitude_error_is_of_the_stated_size():
    spec = SensorSpec(yaw_walk=0.0)
    tilt = [2 * math.degrees(math.acos(min(1.0, readings(spec, 1, s)[0].quat[0])))
            for s in range(300)]
    # two axes of std attitude_error: rms tilt sqrt(2) * attitude_error
    assert np.sqrt(np.mean(np.square(tilt))) == pytest.approx(
        math.degrees(spec.attitude_error) * math.sqrt(2), rel=0.2)


@pytest.mark.parametrize("options, key", [({"gyro_noise": -1.0}, "sensors.gyro_noise"),
                                          ({"latency": 0.5}, "sensors.latency"),
                                          ({"foot_force": "magic"}, "sensors.foot_force"),
                                          ({"accel_nois": 0.1}, "sensors.accel_nois"),
                                          ({"attitude_tau": 0.0}, "sensors.attitude_tau")])
def test_a_figure_that_makes_no_sense_names_its_key(options, key):
    with pytest.raises(ValueError, match=key):
        SensorSpec.build(options)


def test_the_reported_orientation_is_the_true_one_turned_by_the_attitude_error():
    """q_m = q exp(e): the attitude error e turns the true orientation in the body frame."""
    from hardware.rotations import quat_exp, quat_mul

    spec = SensorSpec(latency=0.0)
    model = SensorModel(spec, DT, 4, seed=3)
    true = np.array([0.9, 0.1, -0.3, 0.2])
    true /= np.linalg.norm(true)
    r = model.measure(0.0, true, np.zeros(3), np.zeros(3), np.zeros(12), np.zeros(12),
                      np.zeros(4))
    np.testing.assert_allclose(r.quat, quat_mul(true, quat_exp(model.att)), atol=1e-12)
    assert np.linalg.norm(model.att) > 0
