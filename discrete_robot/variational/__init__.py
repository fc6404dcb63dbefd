"""Variational integrators (Lee, Leok & McClamroch, "Discrete Control Systems").

- :mod:`.midpoint`: discrete Euler–Lagrange equations of the midpoint discrete
  Lagrangian for any :class:`~discrete_robot.model.lagrangian.LagrangianSystem`.
- The article's examples, each with its own (Lie-group) variational integrator:
  :mod:`.mass_spring`, :mod:`.planar_pendulum` (SO(2)), :mod:`.spherical_pendulum` (S²),
  :mod:`.dumbbell` (SE(3)), and the discrete controlled-Lagrangian cart–pendulum
  :mod:`.cart_pendulum`.
- :mod:`.comparison`: the metrics and the equal-CPU-time RK45 baseline the experiments use;
  :mod:`.experiments`: the ``discrete experiment <name>`` CLI command.
"""

import enum


class Experiment(enum.Enum):
    """The article's examples (:mod:`.experiments`); here so the CLI lists them without importing them."""

    MASS_SPRING = "mass-spring"
    PLANAR_PENDULUM = "planar-pendulum"
    SPHERICAL_PENDULUM = "spherical-pendulum"
    DUMBBELL = "dumbbell"
    CART_PENDULUM = "cart-pendulum"
    CONVERGENCE = "convergence"         # error against h of the integrators above composed to orders 4 and 6


ALL = "all"
