"""The URDF files shipped in urdf/ are the ones the model files generate (regenerate with the command below).

    python -m discrete_robot discrete urdf --model config/<name>.yaml --output urdf/<name>.urdf
"""

from pathlib import Path

import pytest

from discrete_robot.model.description import load_model
from discrete_robot.model.urdf import to_urdf

REPO = Path(__file__).resolve().parents[2]
SHIPPED = sorted((REPO / "urdf").glob("*.urdf"))


def test_every_robot_model_has_a_shipped_urdf():
    models = {p.stem for p in (REPO / "config").glob("*.yaml") if "links" in p.read_text()}
    assert models and models == {p.stem for p in SHIPPED}


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.name)
def test_shipped_urdf_is_generated_from_its_model(path):
    assert path.read_text() == to_urdf(load_model(REPO / "config" / f"{path.stem}.yaml")), \
        f"{path.name} is stale: regenerate it from config/{path.stem}.yaml"
