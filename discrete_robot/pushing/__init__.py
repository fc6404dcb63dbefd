"""Quasistatic pushing by the principle of minimum power (Peshkin & Sanderson).

Modules in their one-way order: each imports only modules of the layers before it (docs/pushing.md).

1. solvers: :mod:`.power_program` (minimum of a Coulomb-friction power on an affine set of velocities);
   :mod:`.minimum_power`, the general solver for particles with constraints (the paper's examples on it, the
   snaked rope and the section-5 particle pushed by a fence, are test fixtures: test/support/paper_examples.py).
2. geometry: :mod:`.polygon` (footprints, the outline's nearest point; planar poses and the 2-D primitives are
   :mod:`discrete_robot.geometry2d`'s).
3. kernels: :mod:`.compiled` (the support friction, and ``predict``: the whole contact query in one kernel call;
   numba; imports nothing of pushing/); :mod:`.push_kernels` (a finger move's pieces in one call, on
   :mod:`.polygon`'s compiled geometry and ``compiled.predict``).
4. support: :mod:`.support` (pressure models, each building its ``compiled.Model``), :mod:`.object_model`.
5. prediction: :mod:`.prediction` (a planar object pushed by a finger).
6. simulation: :mod:`.simulation` (the object's pose while the finger follows a path), :mod:`.streaming` (a
   streamed finger).
7. interface: :mod:`.requests`, :mod:`.commands`, :mod:`.cli`: the PredictPush / SimulatePush fields as plain
   data; ``python -m discrete_robot push``.

See docs/pushing.md.
"""
