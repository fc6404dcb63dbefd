"""What a controller is here: a plain object, as a ros2_control controller is, that claims joints and maps the
robot's state to their efforts.

A controller manager runs several, each on the joints it claims (no joint claimed twice), and adds up their
efforts; the simulator applies them over the next control period. The state given to ``update`` is the whole
robot's (model order): a model-based law (inverse dynamics, gravity compensation) needs every joint's."""

from typing import Protocol

import numpy as np


class Controller(Protocol):
    """``joints``: the model indices (dof order) of the joints it claims; ``update(t, q, v)``: their efforts τ
    (N m or N, ``joints`` order) at simulated time t (s) from the robot's positions q and velocities v."""

    joints: np.ndarray

    def update(self, t: float, q: np.ndarray, v: np.ndarray) -> np.ndarray: ...
