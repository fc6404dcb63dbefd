"""The URDF files shipped in urdf/ are the ones the shipped model files generate (regenerate with the command below).

    python -m discrete_robot discrete urdf --model config/<name>.yaml --output urdf/<name>.urdf

Only the shipped models (config/*.yaml with links) are checked: a user's own URDF in urdf/ is none of the
tests' business.
"""

from pathlib import Path

import pytest

from discrete_robot.model.description import load_model
from discrete_robot.model.urdf import to_urdf

REPO = Path(__file__).resolve().parents[2]
MODELS = sorted(p for p in (REPO / "config").glob("*.yaml") if "links:" in p.read_text())


def test_there_are_shipped_models():
    assert {"planar_2link", "arm_6dof", "space_robot_dual_arm"} <= {p.stem for p in MODELS}


@pytest.mark.parametrize("model", MODELS, ids=lambda p: p.stem)
def test_shipped_urdf_is_generated_from_its_model(model):
    path = REPO / "urdf" / f"{model.stem}.urdf"
    assert path.exists(), f"no {path.name}: generate it from config/{model.name}"
    assert path.read_text() == to_urdf(load_model(model)), \
        f"{path.name} is stale: regenerate it from config/{model.name}"
