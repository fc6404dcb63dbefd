"""manipulation_node's parameters (config/manipulation.yaml)."""

from discrete_robot.nodes.common import ROBOT_DESCRIPTION, TIP_LINK, ParameterSpec, non_negative, positive, ros_name

#: the arm when neither model_file nor robot_description names one (the simulator's default)
DEFAULT_MODEL = "planar_2link.yaml"

PARAMETERS = [
    ParameterSpec("model_file", "", f"arm model (YAML, URDF or xacro) with a fingertip or a tip_link; empty = "
                                    f"config/{DEFAULT_MODEL}", read_only=True),
    ROBOT_DESCRIPTION,
    TIP_LINK,
    ParameterSpec("scene_file", "", "table scene; empty = config/table_scene_<model name>.yaml", read_only=True),
    ParameterSpec("finger_radius", 0.0, "fingertip radius, m; 0 = the model file's", check=non_negative,
                  value_range=(0.0, 0.5), read_only=True),
    ParameterSpec("max_push_speed", 0.05, "fastest fingertip speed while it may touch the object, m/s",
                  check=positive, value_range=(1e-4, 1.0)),
    ParameterSpec("reposition_speed", 0.2, "fastest fingertip speed between pushes, m/s", check=positive,
                  value_range=(1e-4, 5.0)),
    ParameterSpec("position_tolerance", 0.01, "goal position tolerance, m", check=positive,
                  value_range=(1e-4, 1.0)),
    ParameterSpec("angle_tolerance", 0.0873, "goal angle tolerance, rad (5 degrees)", check=positive,
                  value_range=(1e-4, 3.2)),
    ParameterSpec("object_name", "object", "the object pushed: its pose is read from objects/<object_name>/pose, "
                                           "as the arm's simulator (scene_file) publishes it", check=ros_name(),
                  read_only=True),
    ParameterSpec("simulation_namespace", "simulation", "the arm's simulator's control services "
                  "(<simulation_namespace>/pause, resume, set_state): a push starts from the paused world; empty = "
                  "no lockstep (the push starts from the last state received: not reproducible)",
                  check=ros_name(empty=True), read_only=True),
    ParameterSpec("max_attempts", 3, "plans and executions per goal: an attempt whose object misses the goal is "
                                     "followed by a new plan from where it stopped", check=positive,
                  value_range=(1, 20)),
    ParameterSpec("controller_name", "joint_trajectory_controller", "the arm's action is "
                  "<controller_name>/follow_joint_trajectory", check=ros_name(), read_only=True),
    ParameterSpec("planning_timeout", 60.0, "wall-clock budget of planning one goal, s (a plan takes seconds "
                                            "alone, several times that beside the simulators in one bringup)",
                  check=positive, value_range=(0.1, 600.0)),
    ParameterSpec("execution_timeout", 10.0, "wall-clock seconds without feedback from the arm (its action's "
                  "feedback, its state, the object's pose) after which its goal is canceled (a slow simulator is "
                  "waited for as long as it makes progress; a goal may arrive before the subscriptions match)",
                  check=positive,
                  value_range=(0.1, 3600.0)),
    ParameterSpec("publish_rate", 20.0, "markers (table, fingertip, goal, planned and executed paths), Hz",
                  check=positive,
                  value_range=(0.1, 1000.0), read_only=True),
]
