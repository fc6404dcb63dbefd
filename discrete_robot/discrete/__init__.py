"""The discrete dynamic robot model (Potts; Neuman & Tourassis) and the choice of integrator."""

import enum


class IntegratorKind(enum.Enum):
    """The integrators a simulation can choose (:mod:`.integrators`); here so the CLI lists them without
    importing any of them."""

    DISCRETE = "discrete"
    DISCRETE4 = "discrete4"     # the discrete model in the triple jump (order 4, :mod:`discrete_robot.composition`)
    DISCRETE6 = "discrete6"     # ... in Kahan & Li's 9-stage composition (order 6)
    VARIATIONAL = "variational"
    RK45 = "rk45"
