"""The simulation runtime, without ROS: a world run in (scaled) real time, its start-up checks and its worlds.

- ``runtime``: :class:`~discrete_robot.simulation.runtime.SimulationRuntime`: ticks, steps, pause / resume /
  step / reset, failed steps and diagnostics, around a host's hooks (a simulator node, or a run in process);
- ``pacing``: the real-time pacer and the tick grid (a late tick loses neither simulated time nor a message);
- ``checks``: a fixed-base world a simulator could not serve is refused at start;
- ``fixed_base``: the fixed-base arm's world (the live discrete simulation, its initial state, its diagnostics);
- ``floating_base``: the space robot's momenta against the impulse of its loads;
- ``scene``: the table scene's objects pushed in the arm's steps, their load Jᵀ f on the arm.

The nodes (discrete_robot.nodes.simulator) give the runtime its clock, topics and services.
"""
