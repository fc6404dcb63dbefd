"""Random floating-base trees, model-file dictionaries for the formulation cross-checks of the space and model
tests (test/space/test_space_kernels.py, test/model/test_model_compiled.py)."""

import numpy as np

from discrete_robot.space.generated import MIXED_BASE, mixed_link


def random_tree_model_data(links: int, seed: int) -> dict:
    """A floating base carrying a random tree of ``links`` links: each hangs from a random earlier body (so arms
    branch), with a random joint kind, axes, joint placement, CoM and inertia (formulation cross-checks)."""
    rng = np.random.default_rng(seed)
    data = {"name": f"random_tree_{links}_{seed}", "gravity": [0.0, 0.0, 0.0],
            "base": {"name": "base", "type": "floating", **MIXED_BASE}, "links": []}
    bodies = ["base"]
    for index in range(links):
        name = f"link{index + 1}"
        joint = {"name": f"joint{index + 1}", "origin": (rng.normal(size=3) * 0.3).tolist()}
        data["links"].append(mixed_link(rng, name, bodies[rng.integers(len(bodies))], joint, int(rng.integers(3))))
        bodies.append(name)
    return data
