"""Model-file dictionaries of multi-arm space robots of any size (the kernel warm-up, tests and benchmarks).

:func:`multi_arm_model_data` returns the parsed-YAML structure of docs/model_format.md, to be loaded
with :func:`discrete_robot.model.description.model_from_dict`, so generated robots pass the same
validation as files. Arms are spread evenly around the base's z axis.
"""

import numpy as np

JOINT_CYCLE = ("revolute", "universal", "spherical")
#: the cycle with sliding joints, one in four
SLIDING_CYCLE = ("revolute", "prismatic", "universal", "spherical")
#: the base of the cross-check robots: full inertia matrix and an off-centre CoM
MIXED_BASE = {"mass": 300.0, "inertia": [500.0, 600.0, 700.0, 10.0, -5.0, 3.0], "com": [0.05, -0.02, 0.1]}


def multi_arm_model_data(arms: int, links: int, mixed_joints: bool = False, seed: int = 0,
                         prismatic: bool = False) -> dict:
    """A floating base with ``arms`` arms of ``links`` links each.

    ``mixed_joints=False``: the Table 1 robot's links (61.27 kg, 1 m, spherical joints) on a 400 kg base.
    ``mixed_joints=True``: revolute, universal and spherical joints in turn, random axes, fixed joint
    rotations, off-axis CoMs and full inertia matrices (a demanding case for formulation cross-checks);
    with ``prismatic=True`` also prismatic joints (:data:`SLIDING_CYCLE`), links hanging below them.
    """
    rng = np.random.default_rng(seed)
    base = {"name": "base", "type": "floating", "mass": 400.0, "inertia": [900.0, 900.0, 900.0]}
    if mixed_joints:
        base.update(MIXED_BASE)
    data = {"name": f"space_robot_{arms}x{links}", "gravity": [0.0, 0.0, 0.0], "base": base, "links": []}
    for arm in range(arms):
        parent = "base"
        heading = 2.0 * np.pi * arm / arms
        for index in range(links):
            name = f"arm{arm + 1}_link{index + 1}"
            joint = {"name": f"arm{arm + 1}_joint{index + 1}"}
            if index == 0:
                joint["origin"] = [0.5 * np.cos(heading), 0.5 * np.sin(heading), 0.0]
                joint["rpy"] = [0.0, np.pi / 2.0, heading]  # link z axis pointing radially outward
            if mixed_joints:
                data["links"].append(mixed_link(rng, name, parent, joint, arm + index,
                                                SLIDING_CYCLE if prismatic else JOINT_CYCLE))
            else:
                joint["type"] = "spherical"
                data["links"].append({"name": name, "parent": parent, "joint": joint, "mass": 61.27,
                                      "com": [0.0, 0.0, 0.5], "inertia": [5.144, 5.144, 0.076],
                                      "tip": [0.0, 0.0, 1.0]})
            parent = name
    return data


def mixed_link(rng: np.random.Generator, name: str, parent: str, joint: dict, turn: int,
               cycle: tuple[str, ...] = JOINT_CYCLE) -> dict:
    """A link of a random robot hung from ``parent``: the joint ``cycle[turn mod len(cycle)]`` with random axes
    and a perturbed rotation, a random mass (2–10 kg), off-axis CoM and full inertia matrix."""
    kind = cycle[turn % len(cycle)]
    joint["type"] = kind
    joint["rpy"] = (np.asarray(joint.get("rpy", [0.0, 0.0, 0.0])) + rng.uniform(-0.5, 0.5, 3)).tolist()
    if kind in ("revolute", "prismatic"):
        axis = rng.normal(size=3)
        joint["axis"] = (axis / np.linalg.norm(axis)).tolist()
    elif kind == "universal":
        frame, _ = np.linalg.qr(rng.normal(size=(3, 3)))
        joint["axes"] = frame[:, :2].T.tolist()
    return {"name": name, "parent": parent, "joint": joint, "mass": float(rng.uniform(2.0, 10.0)),
            "com": (rng.normal(size=3) * 0.1 + [0.0, 0.0, 0.3]).tolist(),
            "inertia": [0.2 + rng.uniform(0.0, 0.05), 0.22, 0.08, 0.01, 0.0, -0.005],
            "tip": (rng.normal(size=3) * 0.05 + [0.0, 0.0, 0.6]).tolist()}
