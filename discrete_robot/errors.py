"""Exceptions raised by the physics core.

Every error raised at a boundary (model file, CLI argument, service request)
is a subclass of :class:`DiscreteRobotError`, so nodes and the CLI can turn it
into a clear message (``success=false``) instead of a crash.
"""


class DiscreteRobotError(ValueError):
    """Base class of the package's own errors."""


class ModelError(DiscreteRobotError):
    """A robot or object model is invalid (negative mass, non-positive-definite inertia, ...)."""


class InputError(DiscreteRobotError):
    """A request or argument is invalid (NaN, wrong length, unknown name, ...)."""


class ConvergenceError(DiscreteRobotError):
    """An iterative solver did not converge within its tolerance."""


class InfeasibleError(DiscreteRobotError):
    """A planning or prediction problem has no solution under its constraints."""
