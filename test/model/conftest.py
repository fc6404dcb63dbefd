"""Models shared by the model tests: the shipped files and a tree exercising every joint type."""

import numpy as np
import pytest
from transforms3d.euler import euler2mat

from discrete_robot.model.description import load_model, model_from_dict, package_config_path


def _inertia(principal, rpy) -> list:
    R = euler2mat(*rpy)
    inertia = R @ np.diag(principal) @ R.T
    return (0.5 * (inertia + inertia.T)).tolist()


def mixed_tree_dict() -> dict:
    """Two arms from a fixed base; revolute, spherical, prismatic and universal joints; tilted gravity."""
    return {
        "name": "mixed_tree",
        "gravity": [0.4, -9.7, 1.1],
        "base": {"name": "base", "type": "fixed"},
        "links": [
            {"name": "a", "parent": "base",
             "joint": {"name": "ja", "type": "revolute", "axis": [0.0, 0.6, 0.8], "origin": [0.1, 0.0, 0.2],
                       "rpy": [0.1, -0.2, 0.3]},
             "mass": 2.0, "com": [0.2, 0.05, 0.0], "inertia": _inertia([0.02, 0.03, 0.04], [0.3, 0.2, 0.1]),
             "tip": [0.4, 0.0, 0.1]},
            {"name": "b", "parent": "a",
             "joint": {"name": "jb", "type": "spherical", "rpy": [0.0, 0.4, 0.0]},
             "mass": 1.5, "com": [0.1, 0.1, 0.2], "inertia": _inertia([0.01, 0.015, 0.02], [-0.5, 0.1, 0.7]),
             "tip": [0.3, 0.0, 0.0]},
            {"name": "c", "parent": "b",
             "joint": {"name": "jc", "type": "prismatic", "axis": [1.0, 0.0, 0.0], "origin": [0.3, 0.0, 0.05],
                       "limits": {"lower": -0.5, "upper": 0.5}},
             "mass": 0.7, "com": [0.05, -0.02, 0.0], "inertia": [0.001, 0.002, 0.0025]},
            {"name": "d", "parent": "a",
             "joint": {"name": "jd", "type": "universal", "axes": [[0.0, 0.0, 1.0], [1.0, 0.0, 0.0]],
                       "rpy": [0.2, 0.0, -0.3]},
             "mass": 0.5, "com": [0.0, 0.15, 0.0], "inertia": [0.004, 0.0005, 0.004, 0.0001, 0.0, 0.0],
             "tip": [0.0, 0.3, 0.0]},
            {"name": "e", "parent": "base",
             "joint": {"name": "je", "type": "revolute", "axis": [1.0, 0.0, 0.0], "origin": [-0.2, 0.1, 0.0]},
             "mass": 1.0, "com": [0.0, 0.0, -0.25], "inertia": [0.02, 0.02, 0.001]},
        ],
    }


@pytest.fixture(scope="session")
def planar_2link():
    return load_model(package_config_path("planar_2link.yaml"))


@pytest.fixture(scope="session")
def arm_6dof():
    return load_model(package_config_path("arm_6dof.yaml"))


@pytest.fixture(scope="session")
def mixed_tree():
    return model_from_dict(mixed_tree_dict())


@pytest.fixture
def mixed_tree_data():
    return mixed_tree_dict()


@pytest.fixture(scope="session")
def spherical_root():
    """The mixed tree with a spherical joint at the base: the mass matrix then depends on the root's own angles."""
    data = mixed_tree_dict()
    data["links"][0]["joint"] = {"name": "ja", "type": "spherical", "axes": [[0.0, 0.0, 1.0], [0.0, 1.0, 0.0],
                                                                            [1.0, 0.0, 0.0]],
                                 "origin": [0.1, 0.0, 0.2], "rpy": [0.1, -0.2, 0.3]}
    return model_from_dict(data)
