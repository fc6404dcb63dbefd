"""Per-joint gains (JTC's gains.<joint>.p and .d, here the computed-torque law's): each joint's error obeys its own
ë + d ė + p e = 0 whatever the arm's inertia, checked against the forward dynamics M q̈ = τ − h(q, q̇)."""

import numpy as np
import pytest

from discrete_robot.control.computed_torque import tracking_torques
from discrete_robot.control.trajectory import Reference
from discrete_robot.model.description import load_model, package_config_path
from discrete_robot.model.dynamics import RigidBodySystem
from discrete_robot.model.lagrangian import generalized_forces


@pytest.mark.parametrize("with_efforts", [False, True])
def test_each_joint_s_error_follows_its_own_gains(with_efforts):
    system = RigidBodySystem(load_model(package_config_path("planar_2link.yaml")))
    rng = np.random.default_rng(3)
    q, qd = rng.uniform(-1.0, 1.0, 2), rng.uniform(-1.0, 1.0, 2)
    desired = Reference(q + rng.uniform(-0.2, 0.2, 2), qd + rng.uniform(-0.2, 0.2, 2), rng.uniform(-1.0, 1.0, 2))
    if with_efforts:       # a plan's efforts on the same model: the inverse dynamics of the reference at q
        desired = Reference(desired.q, desired.qd, desired.qdd,
                            generalized_forces(system, q, qd, desired.qdd))
    kp, kd = np.array([100.0, 9.0]), np.array([20.0, 6.0])
    tau = tracking_torques(system, q, qd, desired, kp, kd, np.full(2, np.inf))
    bias = generalized_forces(system, q, qd, np.zeros(2))
    qdd = np.linalg.solve(system.mass_matrix(q), tau - bias)
    e, e_dot, e_ddot = desired.q - q, desired.qd - qd, desired.qdd - qdd
    np.testing.assert_allclose(e_ddot, -kd * e_dot - kp * e, atol=1e-9)
