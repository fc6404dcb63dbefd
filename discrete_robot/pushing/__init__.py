"""Quasistatic pushing by the principle of minimum power (Peshkin & Sanderson).

- :mod:`.power_program`: minimum of a Coulomb-friction power on an affine set of velocities.
- :mod:`.minimum_power`: the general solver for particles with constraints; :mod:`.paper_examples`: the
  snaked rope and the section-5 particle pushed by a fence.
- :mod:`.polygon`, :mod:`.support`, :mod:`.object_model`, :mod:`.prediction`: a planar object pushed by a finger.
- :mod:`.simulation`: the object's pose while the finger follows a path.
- :mod:`.requests`, :mod:`.cli`: the PredictPush / SimulatePush fields as plain data; ``python -m discrete_robot push``.

See docs/pushing.md.
"""
