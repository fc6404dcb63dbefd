"""The dynamics API, in Pinocchio's shape, for every model kind: fixed base, mimic joints and floating base.

::

    from discrete_robot import dynamics
    from discrete_robot.model.description import load_model

    model = dynamics.build_model(load_model("config/arm_6dof.yaml"), integrator="discrete")
    data = model.create_data()
    dynamics.forward_dynamics(model, data, q, v, tau)      # data.ddq = M(q)⁻¹ (τ − C(q, v) v − g(q))
    dynamics.inverse_dynamics(model, data, q, v, a)        # data.tau = M(q) a + C(q, v) v + g(q)
    dynamics.mass_matrix(model, data, q)                   # data.M
    dynamics.step(model, data, q, v, tau, dt)              # data.q, data.v one step of dt later
    dynamics.step(model, data, q, v, tau, dt, count=1000)  # 1000 steps under tau held (compiled runs)

Each function also returns what it wrote. Names: q the configuration (nq,), v the velocity (nv,), a its rate,
tau the generalised force (nv,), dt the time step; SI units (rad, m, rad/s, m/s, N m, N, s).

A fixed base (a YAML arm, a URDF; mimic joints folded exactly, :mod:`.model.mimic`) has nq = nv = the model's DOFs
and is evaluated by :class:`.model.dynamics.RigidBodySystem` (the compiled composite-rigid-body kernel of
:mod:`.model.compiled`; :func:`.model.lagrangian.accelerations` and ``generalized_forces`` around it). ``step``
runs the model's integrator, any :class:`.discrete.IntegratorKind` (:func:`.discrete.integrators.make_stepper`:
the discrete model's step is compiled, :mod:`.discrete.compiled`), with the joints' damping and friction of the
model file acting inside it (the other three functions leave them out, as Pinocchio's do).

A floating base (:class:`.space.robot.SpaceRobot`, the recursive Boltzmann–Hamel kernels of :mod:`.space.kernels`,
stepped by RKMK4, :mod:`.space.rkmk4`) has, as Pinocchio's free-flyer, nq ≠ nv:

- q = [base CoM position (3, world, m), base attitude quaternion (x, y, z, w: Pinocchio's order), then per joint
  in body order its angles (1- and 2-DOF joints, rad) or its quaternion (spherical joints, x, y, z, w)];
- v = [base CoM velocity (3), base angular velocity (3), both in the base frame, then the joint rates] (a
  spherical joint's rates are its angular velocity relative to its parent, in its link frame);
- tau = [a force (3, N) at the base CoM and a moment (3, N m) about it, both in the base frame, then the joint
  torques]; ``loads``: further :class:`ExternalLoad` s on any body (for a fixed base: none, fold them into tau).

The base's translational coordinates are its CoM, not its frame origin as in Pinocchio (the two coincide when the
base's ``com`` is zero, as in the shipped dual-arm robot). Quaternions need not be normalised: they are.
"""

from dataclasses import dataclass, field

import numpy as np

from discrete_robot.discrete import IntegratorKind
from discrete_robot.discrete.dissipation import Dissipation
from discrete_robot.discrete.integrators import make_stepper
from discrete_robot.errors import InputError
from discrete_robot.model.description import RobotModel
from discrete_robot.model.dynamics import RigidBodySystem
from discrete_robot.model.lagrangian import accelerations, generalized_forces
from discrete_robot.space import kernels
from discrete_robot.space.kinematics import configuration_arrays
from discrete_robot.space.loads import ExternalLoad, LoadFrame, validate_loads
from discrete_robot.space.robot import JointKind, SpaceRobot
from discrete_robot.space.simulation import Simulator
from discrete_robot.space.state import SpaceRobotState
from discrete_robot.validation import finite_vector, positive_step

__all__ = ["Data", "ExternalLoad", "Model", "build_model", "forward_dynamics", "inverse_dynamics", "mass_matrix",
           "step"]

#: the floating base's integrator
RKMK4 = "rkmk4"


@dataclass(frozen=True, eq=False)
class Model:
    """A robot's dynamics, built once by :func:`build_model`: its sizes, its integrator and the core that evaluates
    it (``system`` for a fixed base, ``robot`` for a floating one)."""

    name: str
    nq: int
    nv: int
    integrator: str                 # an IntegratorKind value (fixed base) or "rkmk4" (floating base)
    robot_model: RobotModel
    system: RigidBodySystem | None = None       # fixed base: its rigid-body terms
    dissipation: Dissipation | None = None      # fixed base: the joints' damping and friction, if any
    robot: SpaceRobot | None = None             # floating base: the space robot
    angle_slots: np.ndarray | None = None       # floating base: where in q the joint angles are (state order)
    quaternion_slots: np.ndarray | None = None  # ... and the base's and each spherical joint's quaternion (w, x, y, z)

    @property
    def floating(self) -> bool:
        return self.robot is not None

    def create_data(self) -> "Data":
        """A :class:`Data` for this model (one per thread)."""
        return Data(q=np.zeros(self.nq), v=np.zeros(self.nv), ddq=np.zeros(self.nv), tau=np.zeros(self.nv),
                    M=np.zeros((self.nv, self.nv)))


@dataclass(eq=False)
class Data:
    """What the functions write (Pinocchio's names), and the integrator's state between steps."""

    q: np.ndarray       # (nq,): the configuration after the last step
    v: np.ndarray       # (nv,): the velocity after the last step
    ddq: np.ndarray     # (nv,): the acceleration of the last forward_dynamics
    tau: np.ndarray     # (nv,): the generalised force of the last inverse_dynamics
    M: np.ndarray       # (nv, nv): the mass matrix of the last mass_matrix
    _stepper: object = field(default=None, repr=False)      # a fixed base's Stepper, a floating base's Simulator
    _last: tuple | None = field(default=None, repr=False)   # what the stepper returned last (fixed base)
    _kernels: kernels.Shared | None = field(default=None, repr=False)   # a floating base's kernel data, binding


def build_model(robot_model: RobotModel, integrator: str | None = None) -> Model:
    """The :class:`Model` of ``robot_model`` (:func:`.model.description.load_model`) with its ``integrator``: one of
    :class:`.discrete.IntegratorKind`'s values for a fixed base (default "discrete"), "rkmk4" for a floating base
    (its default and only one)."""
    if robot_model.base.floating:
        if integrator not in (None, RKMK4):
            raise InputError(f"integrator: a floating base is stepped by '{RKMK4}', got {integrator!r}")
        robot = SpaceRobot.from_model(robot_model)
        angle_slots, quaternion_slots, position = np.zeros(robot.angle_count, dtype=int), [[6, 3, 4, 5]], 7
        for link in robot.links:
            if link.kind is JointKind.SPHERICAL:
                quaternion_slots.append([position + 3, position, position + 1, position + 2])
                position += 4
            else:
                angle_slots[link.angles] = np.arange(position, position + link.ndof)
                position += link.ndof
        return Model(name=robot.name, nq=position, nv=6 + robot.dof, integrator=RKMK4, robot_model=robot_model,
                     robot=robot, angle_slots=angle_slots,
                     quaternion_slots=np.array(quaternion_slots, dtype=int).reshape(-1, 4))
    kinds = [kind.value for kind in IntegratorKind]
    integrator = IntegratorKind.DISCRETE.value if integrator is None else integrator
    if integrator not in kinds:
        raise InputError(f"integrator: expected one of {kinds} for a fixed base, got {integrator!r}")
    system = RigidBodySystem(robot_model)
    return Model(name=robot_model.name, nq=system.dof, nv=system.dof, integrator=integrator,
                 robot_model=robot_model, system=system, dissipation=Dissipation.from_model(robot_model))


def forward_dynamics(model: Model, data: Data, q, v, tau, loads=()) -> np.ndarray:
    """The acceleration a = M(q)⁻¹ (τ + Q(loads) − C(q, v) v − g(q)) into ``data.ddq`` (nv,), rad/s² or m/s²."""
    q, v, tau = _vectors(model, q=q, v=v, tau=tau)
    if model.floating:
        status = kernels._bound_forward_dynamics(*_floating_arguments(model, data, q, v, tau, loads))
        kernels.check_status(status, model.robot, "forward dynamics")
        np.copyto(data.ddq, data._kernels.data.ddq)
    else:
        _no_loads(loads)
        np.copyto(data.ddq, accelerations(model.system, q, v, tau))
    return data.ddq


def inverse_dynamics(model: Model, data: Data, q, v, a, loads=()) -> np.ndarray:
    """The generalised force τ = M(q) a + C(q, v) v + g(q) − Q(loads) into ``data.tau`` (nv,), N m or N. For a
    floating base its first six (a base wrench) are zero whenever ``a`` is a free motion under the loads."""
    q, v, a = _vectors(model, q=q, v=v, a=a)
    if model.floating:
        kernels._bound_equation_terms(*_floating_arguments(model, data, q, v, np.zeros(model.nv), loads))
        terms = data._kernels.data
        np.copyto(data.tau, terms.M @ a + terms.nle - terms.tau)
    else:
        _no_loads(loads)
        np.copyto(data.tau, generalized_forces(model.system, q, v, a))
    return data.tau


def mass_matrix(model: Model, data: Data, q) -> np.ndarray:
    """The mass matrix M(q) into ``data.M`` (nv, nv), kg m² or kg (the floating base's in its velocity v)."""
    (q,) = _vectors(model, q=q)
    if model.floating:
        zero = np.zeros(model.nv)
        kernels._bound_equation_terms(*_floating_arguments(model, data, q, zero, zero, ()))
        np.copyto(data.M, data._kernels.data.M)
    else:
        np.copyto(data.M, model.system.mass_matrix(q))
    return data.M


def step(model: Model, data: Data, q, v, tau, dt, loads=(), count: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """``count`` steps of ``dt`` s of the model's integrator from (q, v) under tau (and ``loads``) held over them,
    into ``data.q`` and ``data.v``; returns them. A step from the state the last one reached (``data.q``,
    ``data.v``) continues the integrator's own state: the discrete model then starts Newton from its extrapolation
    and keeps the whole turns it carries apart; the space robot keeps its momentum coordinates. The discrete
    model takes the steps after the first in compiled runs (``held_steps``: the same steps, no Python between
    them); the other integrators one by one."""
    dt = positive_step(dt, "dt")
    if isinstance(count, bool) or not isinstance(count, int | np.integer) or count < 1:
        raise InputError(f"count: expected a whole number of steps >= 1, got {count!r}")
    q, v, tau = _vectors(model, q=q, v=v, tau=tau)
    continuing = data._stepper is not None and np.array_equal(q, data.q) and np.array_equal(v, data.v)
    if model.floating:
        for taken in range(count):
            _step_floating(model, data, q if taken == 0 else data.q, v if taken == 0 else data.v, tau, dt, loads,
                           continuing or taken > 0)
        return data.q, data.v
    _no_loads(loads)
    if data._stepper is None:
        data._stepper = make_stepper(model.integrator, model.system, model.dissipation)
    if continuing:
        q, v = data._last          # the very arrays the stepper returned: it recognises its own state
    held_steps, unbounded = getattr(data._stepper, "held_steps", None), np.full(model.nv, np.inf)
    left = count
    while left > 0:
        taken = 0
        if held_steps is not None:      # none unless continuing from the stepper's own last result
            q1, v1, taken = held_steps(q, v, tau, dt, left, -unbounded, unbounded)
        if taken:
            data._last = q1, v1
            left -= taken
        else:
            data._last = data._stepper.step(q, v, tau, dt)
            left -= 1
        q, v = data._last
    np.copyto(data.q, data._last[0])
    np.copyto(data.v, data._last[1])
    return data.q, data.v


# ------------------------------------------------------------------------------------------------ internals

def _vectors(model: Model, **values) -> list[np.ndarray]:
    """The named vectors checked finite and of their size (q: nq, the others: nv)."""
    return [finite_vector(value, model.nq if name == "q" else model.nv, name) for name, value in values.items()]


def _no_loads(loads) -> None:
    if len(loads):
        raise InputError("loads: a fixed-base model takes its external loads as generalised forces in tau")


def _state(model: Model, q: np.ndarray, v: np.ndarray) -> SpaceRobotState:
    """The space robot's state at the floating base's (q, v) (checked finite), quaternions normalised."""
    quaternions = q[model.quaternion_slots]             # (w, x, y, z) rows, the base first
    norms = np.linalg.norm(quaternions, axis=1, keepdims=True)
    if norms.min() < 1e-6:
        raise InputError(f"q: a quaternion has (almost) zero norm: {quaternions[norms[:, 0].argmin()].tolist()} "
                         "(w, x, y, z); attitudes are unit quaternions (x, y, z, w in q)")
    quaternions /= norms
    return SpaceRobotState(base_position=q[:3], base_orientation=quaternions[0], base_velocity=v[:3],
                           base_angular_velocity=v[3:6], joint_angles=q[model.angle_slots],
                           joint_orientations=quaternions[1:], joint_rates=v[6:])


def _floating_loads(model: Model, tau: np.ndarray, loads) -> tuple[ExternalLoad, ...]:
    """``loads`` and tau's base wrench (a load at the base CoM in the base frame, when nonzero) as the space robot's
    loads."""
    if tau[:6].any():
        loads = (*loads, ExternalLoad(body=model.robot.base_name, force=tau[:3], moment=tau[3:6],
                                      frame=LoadFrame.BODY))
    return validate_loads(model.robot, loads)


def _floating_arguments(model: Model, data: Data, q, v, tau, loads) -> tuple:
    """The positional arguments of the space kernels' bound entry points at (q, v) under tau and ``loads``, the
    kernels' data and binding made on first use."""
    if data._kernels is None:
        data._kernels = kernels.bind_robot(model.robot)
    state = _state(model, q, v)
    return (data._kernels.binding, *configuration_arrays(state), state.quasi_velocities, tau[6:],
            *kernels.pack_loads(model.robot, _floating_loads(model, tau, loads)))


def _step_floating(model: Model, data: Data, q, v, tau, dt, loads, continuing: bool) -> None:
    """One RKMK4 step (:class:`.space.simulation.Simulator`, sub-stepped when a body turns fast) into data.q, data.v."""
    loads = _floating_loads(model, tau, loads)
    if data._stepper is None:
        data._stepper = Simulator(model.robot, _state(model, q, v), loads, tau[6:])
    else:
        data._stepper.set_loads(loads, tau[6:])
        if not continuing:
            data._stepper.reset(_state(model, q, v))
    data._stepper.step(dt)
    state = data._stepper.state
    data.q[:3] = state.base_position
    data.q[model.quaternion_slots] = np.vstack([state.base_orientation, state.joint_orientations])
    data.q[model.angle_slots] = state.joint_angles
    np.copyto(data.v, state.quasi_velocities)
