"""Start-up checks of a simulated world: a world a simulator could not serve is refused before it runs."""

import copy
import time

import numpy as np

from discrete_robot.errors import DiscreteRobotError, ModelError
from discrete_robot.validation import MAX_STEP_BYTES, discrete_step_bytes, energy_in_proportion

#: s: the longest one step may take (a tick cannot split a step; services wait that long at worst)
MAX_STEP_COST_S = 0.5
#: steps tried at start on a copy of the world, to time one
TRIAL_STEPS = 5
#: the shortest reach assumed for the energy bound, m (a model of point masses at its joints has none)
MIN_REACH = 0.01


def check_fixed_base_world(simulation, model, integrator: str) -> None:
    """ModelError, with the reason, for a fixed-base world a simulator could not serve: a discrete step needing
    more than :data:`MAX_STEP_BYTES` (:func:`discrete_step_bytes`); an initial state whose energy is not finite
    or out of proportion to the model (validation.energy_in_proportion, with the model's total mass and its
    reach: the sum of its joints' offsets plus its longest link); an initial state whose step fails; or one
    step (the fastest of :data:`TRIAL_STEPS` on a copy of the simulation: the first ones load compiled code)
    longer than :data:`MAX_STEP_COST_S`: a tick cannot split a step, so the executor would be held that long
    from every service and signal (a slow but servable step only runs the world below real time, which the
    diagnostics report; a tick's period is no bound: one busy moment of a loaded machine exceeds it)."""
    if integrator == "discrete" and discrete_step_bytes(model.dof) > MAX_STEP_BYTES:
        raise ModelError(f"model '{model.name}': {model.dof} joints need {discrete_step_bytes(model.dof):.3g} "
                           f"bytes per discrete step, more than the {MAX_STEP_BYTES:.3g} this node serves "
                           "(16 n^4 bytes: at most 64 joints)")
    mass = sum(link.mass for link in model.links)
    reach = max(MIN_REACH, sum(float(np.linalg.norm(link.joint.origin)) for link in model.links)
                + max(float(np.linalg.norm(link.tip)) for link in model.links))
    try:
        energy_in_proportion(simulation.energy(), mass, reach, simulation.time_step,
                             "initial_positions/initial_velocities")
        # the trial steps rebind the copies' state (q, q̇, time; the stepper's last step), not the simulation's
        trial = copy.copy(simulation)
        trial.stepper = copy.copy(simulation.stepper)
        held = np.zeros(model.dof)
        cost = np.inf
        # the first two load the compiled code of a first step and of one continuing from its result (0.06-0.15 s
        # in a fresh process); the fastest of the rest is the step's cost
        for _ in range(TRIAL_STEPS):
            start = time.perf_counter()
            trial.step(1, held)
            cost = min(cost, time.perf_counter() - start)
    except DiscreteRobotError as error:
        raise ModelError(f"model '{model.name}': the initial state cannot be simulated: {error}") from None
    if cost > MAX_STEP_COST_S:
        raise ModelError(f"model '{model.name}': one step takes {cost:.3g} s, more than the {MAX_STEP_COST_S:g} "
                           "s the node may spend on one step and still answer services and signals; use a smaller "
                           "model")
