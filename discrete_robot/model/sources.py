"""Where a node or command gets its robot: a model file (YAML, URDF, xacro), or the URDF text itself (the
``robot_description`` parameter, as robot_state_publisher takes it); a tool link as the fingertip of an arm whose
file names none; and the ``robot_description`` to publish."""

from dataclasses import replace
from pathlib import Path

from discrete_robot.errors import ModelError
from discrete_robot.model.description import Fingertip, RobotModel, load_model
from discrete_robot.validation import printable

#: m, the fingertip sphere at a ``tip_link`` when no radius is given
DEFAULT_FINGER_RADIUS = 0.01


def robot_model(model_file="", robot_description: str = "", default=None, tip_link: str = "",
                finger_radius: float = 0.0, floating_base: bool = False, xacro_args: dict | None = None) -> RobotModel:
    """The model from ``robot_description`` (URDF text, at most 10 MB as a model file) when given, else from
    ``model_file``, else from ``default``; with ``tip_link``, its fingertip there (:func:`with_fingertip`). Its size
    is checked from the parsed file before anything is built (validation.model_size)."""
    from discrete_robot.config_files import MAX_FILE_BYTES, regular_file
    from discrete_robot.model.urdf_reader import model_from_urdf

    if len(robot_description) > MAX_FILE_BYTES or len(robot_description.encode("utf-8")) > MAX_FILE_BYTES:
        raise ModelError(f"robot_description: larger than {MAX_FILE_BYTES} bytes ({MAX_FILE_BYTES / 2 ** 20:g} MB), "
                         "the most a model file may hold")
    if robot_description.strip():
        model = model_from_urdf(robot_description, "robot_description", floating_base=floating_base)
    else:
        path = model_file or default
        if not path:
            raise ModelError("model_file: empty, and no robot_description given")
        model = load_model(regular_file(Path(path), "model_file"), xacro_args=xacro_args, floating_base=floating_base)
    return with_fingertip(model, tip_link, finger_radius) if tip_link else model


def with_fingertip(model: RobotModel, tip_link: str, radius: float = 0.0) -> RobotModel:
    """``model`` with its fingertip at the origin of link or fixed frame ``tip_link`` (a URDF tool frame such as
    ``tool0``), a sphere of ``radius`` m (0: the model's own fingertip radius, else :data:`DEFAULT_FINGER_RADIUS`)."""
    body, origin, _ = model.frame_in_body(tip_link)
    if body not in {link.name for link in model.links}:
        raise ModelError(f"tip_link: '{printable(tip_link)}' is fixed to '{printable(body)}', which no joint of the "
                         "model moves (the base or a mimic follower)")
    if radius < 0.0:
        raise ModelError(f"finger_radius: must be >= 0 m, got {radius}")
    own = model.fingertip.radius if model.fingertip is not None else DEFAULT_FINGER_RADIUS
    return replace(model, fingertip=Fingertip(body, origin, radius or own))


def robot_description(model: RobotModel) -> str:
    """The URDF to publish: the user's own, unchanged (meshes and all), for a model read from URDF; else the
    model's URDF (:func:`discrete_robot.model.urdf.to_urdf`)."""
    if model.urdf is not None:
        return model.urdf
    from discrete_robot.model.urdf import to_urdf

    return to_urdf(model)
