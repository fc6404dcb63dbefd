"""Trajectory planning on the discrete dynamic robot model and discrete mechanics optimal control.

- :mod:`.path`: joint-space paths through waypoints (straight segments, or a spline when smooth).
- :mod:`.constraints`: torque, velocity and position limits and their validation.
- :mod:`.min_time`: minimum-time path following on the discrete model (reachability passes on the
  path speed; the generic SLSQP formulation over the time steps for comparison and smooth paths).
- :mod:`.continuous_topp`: the continuous time-optimal reference the discrete durations converge to.
- :mod:`.dmoc`: fixed-time minimum-effort control with variational integrators as constraints (SQP; the
  spherical pendulum); :mod:`.dmoc_sparse`: the arms' DMOC on the discrete model by IPOPT, its constraint
  Jacobian from the compiled kernel of :mod:`.dmoc_compiled`.
- :mod:`.collocation`: the same problems on a Runge–Kutta discretisation, for comparison.
- :mod:`.sqp`: the shared SLSQP call, coloured finite-difference Jacobians and the solution report;
  :mod:`.continuous_replay`: the continuous equations that judge discrete optimal controls.
- :mod:`.planner`: the planning service without ROS (request validation, joint order, both methods).
- :mod:`.cli`: the ``plan`` commands of ``python -m discrete_robot``. docs/planning.md has the details.
"""
