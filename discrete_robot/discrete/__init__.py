"""The discrete dynamic robot model (Potts; Neuman & Tourassis) and the choice of integrator."""

import enum


class IntegratorKind(enum.Enum):
    """The integrators a simulation can choose (:mod:`.integrators`); here so the CLI lists them without
    importing any of them."""

    DISCRETE = "discrete"
    VARIATIONAL = "variational"
    RK45 = "rk45"
