"""A free-floating world's momenta against the impulse of its applied loads, without ROS.

Under internal torques alone the momenta stay (dP/dt = ΣF, dL_c/dt = Σ(x − c) × F + M); the drift is the change
of the momenta less the impulse of the applied loads, integrated by the trapezoid rule over each run of steps:
exact for loads fixed in the world frame, second order in the run's length for loads that turn with their bodies,
so loads alone show none.
"""

import numpy as np

from discrete_robot.space.kinematics import body_poses
from discrete_robot.space.loads import resolve_loads


class MomentumBudget:
    """The momenta of ``robot`` simulated by a space Simulator since a start, and the impulse of the loads."""

    def __init__(self, robot, simulator):
        self.robot = robot
        self.restart(simulator)

    def restart(self, simulator) -> None:
        """Count from ``simulator``'s current state (a new run: a reset, a state set)."""
        self.start = simulator.sample().momentum
        self.impulse = np.zeros(6)   # ∫ [ΣF, Σ(x − c) × F + M] dt of the applied loads since start

    def advance(self, simulator, time_step: float, steps: int) -> None:
        """``simulator.advance(time_step, steps)``, with the loads' impulse over the steps taken (a failure's too)."""
        start, rate = simulator.time, self._load_rates(simulator)
        try:
            simulator.advance(time_step, steps)
        finally:    # the steps taken before a failure count too
            if rate is not None:
                self.impulse += 0.5 * (rate + self._load_rates(simulator)) * (simulator.time - start)

    def _load_rates(self, simulator) -> np.ndarray | None:
        """[ΣF (N), Σ(x − c) × F + M (N m)] of the applied loads at the current state, world frame, moments about
        the system CoM c: the momenta's rates of change; None without loads."""
        loads = simulator.loads
        if not loads:
            return None
        world = resolve_loads(self.robot, body_poses(self.robot, simulator.state), loads)
        center = simulator.sample().momentum.center_of_mass
        return np.concatenate([world.total_force(), world.moment_about(center)])

    def diagnostic_values(self, simulator) -> dict[str, float]:
        """Kinetic energy (J) and its change, the loads' linear impulse (N s), and both momenta's drifts."""
        now, start = simulator.sample().momentum, self.start
        return {"kinetic_energy_J": now.kinetic_energy,
                "kinetic_energy_change_J": now.kinetic_energy - start.kinetic_energy,
                "linear_impulse_of_loads_N_s": float(np.linalg.norm(self.impulse[:3])),
                "linear_momentum_drift_kg_m_s": float(np.linalg.norm(now.linear - start.linear - self.impulse[:3])),
                "angular_momentum_drift_kg_m2_s": float(np.linalg.norm(now.angular - start.angular
                                                                       - self.impulse[3:]))}
