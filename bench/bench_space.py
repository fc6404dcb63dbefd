"""Space robot: the compiled recursive Boltzmann–Hamel forward dynamics and RKMK4 step against Pinocchio.

Peers, measured in the same run on the same robots (the paper's Table 1 dual arm, 18 DOF, and 8 arms x 10
links, 246 DOF; all joints spherical):
- Pinocchio's ``aba`` (articulated-body algorithm) on a model built from the same flat arrays: free-flyer
  root, spherical joints, the same placements, masses, CoMs and inertias. Before timing, both must give the
  same base angular and joint accelerations for the same state and torques (checked here), so the ratio
  compares one computation;
- one 1 kHz step: ours is one RKMK4 step in momentum coordinates (four forward dynamics and the exponential
  updates, one compiled call); Pinocchio's is classical RK4 written with four ``aba`` calls and
  ``pin.integrate`` on its configuration manifold, as a Python user of Pinocchio would write it.
Also the Newton–Euler formulation (the tests' independent cross-check) and the cost exponent in bodies.
Times are wall seconds per call, best of several batches. ``ratio`` = peer time / ours (below 1: slower);
``slowdown`` = ours / peer, the issue's target being at most 10.
"""

import time

import numpy as np
import pinocchio as pin

from discrete_robot.jit import bind
from discrete_robot.model.description import load_model, model_from_dict, package_config_path
from discrete_robot.space import kernels, newton_euler
from discrete_robot.space.generated import multi_arm_model_data
from discrete_robot.space.robot import SpaceRobot
from discrete_robot.space.simulation import Simulator
from discrete_robot.space.state import random_state

TARGET_SLOWDOWN = 10.0
STEP = 1e-3


def seconds_per_call(call, batch: int = 200, batches: int = 7) -> float:
    """Best wall time per call over ``batches`` batches of ``batch`` calls."""
    call()
    best = np.inf
    for _ in range(batches):
        start = time.perf_counter()
        for _ in range(batch):
            call()
        best = min(best, (time.perf_counter() - start) / batch)
    return best


def pinocchio_model(robot: SpaceRobot) -> pin.Model:
    """The robot in Pinocchio: a free-flyer root at the base frame, one spherical joint per link."""
    model = pin.Model()
    ids = [model.addJoint(0, pin.JointModelFreeFlyer(), pin.SE3.Identity(), "base")]
    model.appendBodyToJoint(ids[0], pin.Inertia(robot.base_mass, robot.base_com, robot.base_inertia),
                            pin.SE3.Identity())
    for b, link in enumerate(robot.links, start=1):
        if link.ndof != 3:
            raise ValueError("the Pinocchio peer model is built for spherical joints")
        parent_com = robot.base_com if link.parent == 0 else robot.links[link.parent - 1].com
        placement = pin.SE3(link.fixed_rotation, parent_com + link.offset)
        ids.append(model.addJoint(ids[link.parent], pin.JointModelSpherical(), placement, link.joint_name))
        model.appendBodyToJoint(ids[b], pin.Inertia(link.mass, link.com, link.inertia), pin.SE3.Identity())
    return model


def pinocchio_state(robot: SpaceRobot, state) -> tuple[np.ndarray, np.ndarray]:
    """(q, v) of ``state``: free-flyer [x, y, z, qx, qy, qz, qw] of the base frame origin and its local spatial
    velocity; per spherical joint its quaternion and its relative angular velocity in the link frame."""
    rotation = state.base_rotation()
    origin = state.base_position - rotation @ robot.base_com
    w, x, y, z = state.base_orientation / np.linalg.norm(state.base_orientation)
    q = [origin, [x, y, z, w]]
    v = [state.base_velocity - np.cross(state.base_angular_velocity, robot.base_com), state.base_angular_velocity]
    for link in robot.links:
        w, x, y, z = state.joint_orientations[link.quaternion_index]
        q.append([x, y, z, w])
        v.append(state.joint_rates[link.rates])
    return np.concatenate(q), np.concatenate(v)


def forward_dynamics_call(robot: SpaceRobot, state, torques) -> tuple:
    """(a call of our compiled forward dynamics at ``state`` without loads, as the 1 kHz callers make it: the model
    and data bound once; the data it writes)."""
    model = kernels.compile_model(robot)
    data = kernels.create_data(model)
    binding = bind(model, data)
    args = (state.base_orientation, state.joint_orientations.reshape(-1, 4), state.joint_angles, state.base_position,
            state.quasi_velocities, torques, *kernels.pack_loads(robot, ()))
    return (lambda: kernels._bound_forward_dynamics(binding, *args)), data


def _compare(robot: SpaceRobot) -> dict:
    state = random_state(robot, np.random.default_rng(0), speed=0.5)
    torques = np.random.default_rng(1).normal(size=robot.dof)
    forward_dynamics, data = forward_dynamics_call(robot, state, torques)
    assert forward_dynamics() == kernels.OK
    ours = data.ddq.copy()
    pmodel = pinocchio_model(robot)
    pdata = pmodel.createData()
    q, v = pinocchio_state(robot, state)
    tau = np.concatenate([np.zeros(6), torques])
    theirs = pin.aba(pmodel, pdata, q, v, tau)
    # ω̇0 and the joints' relative angular accelerations have the same meaning in both; the base's linear
    # part differs by convention (CoM vs frame origin, classical vs spatial acceleration)
    agreement = float(np.max(np.abs(ours[3:] - theirs[3:])) / np.max(np.abs(theirs[3:])))
    if agreement > 1e-8:
        raise AssertionError(f"{robot.name}: accelerations differ from Pinocchio's by {agreement:.2e} (relative)")

    fd_ours = seconds_per_call(forward_dynamics)
    fd_pin = seconds_per_call(lambda: pin.aba(pmodel, pdata, q, v, tau))
    fd_newton_euler = seconds_per_call(lambda: newton_euler.forward_dynamics(robot, state, (), torques), batch=5,
                                       batches=3)
    simulator = Simulator(robot, state, joint_torques=torques)
    step_ours = seconds_per_call(lambda: simulator.step(STEP))

    def rk4_step():
        k1 = pin.aba(pmodel, pdata, q, v, tau).copy()
        q2, v2 = pin.integrate(pmodel, q, 0.5 * STEP * v), v + 0.5 * STEP * k1
        k2 = pin.aba(pmodel, pdata, q2, v2, tau).copy()
        q3, v3 = pin.integrate(pmodel, q, 0.5 * STEP * v2), v + 0.5 * STEP * k2
        k3 = pin.aba(pmodel, pdata, q3, v3, tau).copy()
        q4, v4 = pin.integrate(pmodel, q, STEP * v3), v + STEP * k3
        k4 = pin.aba(pmodel, pdata, q4, v4, tau).copy()
        pin.integrate(pmodel, q, STEP / 6.0 * (v + 2.0 * v2 + 2.0 * v3 + v4))
        return v + STEP / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)

    step_pin = seconds_per_call(rk4_step)
    return {"bodies": robot.body_count, "dof": 6 + robot.dof, "agreement_with_pinocchio": agreement,
            "forward_dynamics_s": fd_ours, "pinocchio_aba_s": fd_pin, "newton_euler_s": fd_newton_euler,
            "step_s": step_ours, "pinocchio_rk4_step_s": step_pin}


def _entries(label: str, timing: dict) -> list[dict]:
    fd = timing["forward_dynamics_s"] / timing["pinocchio_aba_s"]
    step = timing["step_s"] / timing["pinocchio_rk4_step_s"]
    return [
        {"name": f"{label}: forward dynamics vs Pinocchio aba", "baseline": "Pinocchio aba", "ratio": 1.0 / fd,
         "slowdown": fd, "target_slowdown": TARGET_SLOWDOWN, "met": fd <= TARGET_SLOWDOWN,
         "unit": "wall time per call, peer / ours", **timing},
        {"name": f"{label}: one 1 kHz step, RKMK4 vs Pinocchio RK4", "baseline": "Pinocchio RK4 (4 aba + integrate)",
         "ratio": 1.0 / step, "slowdown": step, "target_slowdown": TARGET_SLOWDOWN, "met": step <= TARGET_SLOWDOWN,
         "unit": "wall time per step, peer / ours"},
        {"name": f"{label}: forward dynamics vs Newton-Euler (numpy)", "baseline": "Newton-Euler M = J^T diag(m, I) J",
         "ratio": timing["newton_euler_s"] / timing["forward_dynamics_s"], "unit": "wall time per call"},
    ]


def run() -> list[dict]:
    dual_arm = SpaceRobot.from_model(load_model(package_config_path("space_robot_dual_arm.yaml")))
    entries = _entries("dual-arm robot (Table 1, 18 DOF)", _compare(dual_arm))
    big = SpaceRobot.from_model(model_from_dict(multi_arm_model_data(8, 10)))
    entries += _entries("8 arms x 10 links (246 DOF)", _compare(big))
    sizes = [(2, 2), (2, 6), (4, 5), (8, 5), (8, 10)]
    bodies, ours, peer = [], [], []
    for arms, links in sizes:
        robot = SpaceRobot.from_model(model_from_dict(multi_arm_model_data(arms, links)))
        state = random_state(robot, np.random.default_rng(0), speed=0.5)
        forward_dynamics, _ = forward_dynamics_call(robot, state, np.zeros(robot.dof))
        pmodel = pinocchio_model(robot)
        pdata = pmodel.createData()
        q, v = pinocchio_state(robot, state)
        bodies.append(robot.body_count)
        ours.append(seconds_per_call(forward_dynamics, batch=100, batches=5))
        peer.append(seconds_per_call(lambda pmodel=pmodel, pdata=pdata, q=q, v=v: pin.aba(
            pmodel, pdata, q, v, np.zeros(pmodel.nv)), batch=100, batches=5))
    slope = float(np.polyfit(np.log(bodies), np.log(ours), 1)[0])
    entries.append({"name": "forward dynamics cost exponent in the number of bodies (2x2 ... 8x10)",
                    "unit": "log-log slope", "ratio": slope, "baseline": "1.0 = linear",
                    "pinocchio_exponent": float(np.polyfit(np.log(bodies), np.log(peer), 1)[0]),
                    "bodies": bodies, "seconds": ours, "pinocchio_seconds": peer})
    return entries


if __name__ == "__main__":
    for entry in run():
        print(f"{entry['name']:65s} {entry['ratio']:8.3g}  vs {entry['baseline']}")
