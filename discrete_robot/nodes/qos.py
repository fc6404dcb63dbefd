"""The QoS profiles every node uses: one per kind of traffic, so both ends of a topic agree."""

from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy

#: robot_description and static markers: late joiners (RViz, robot_state_publisher) still get the last message.
LATCHED_QOS = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL)
#: joint states, poses, commands: the ROS default (reliable, volatile, depth 10).
STATE_QOS = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.VOLATILE)
#: a simulator's joint_states and object poses, on both ends: a simulator whose tick came late catches up and
#: publishes the states of the time it missed at once (180 after a tick 1.8 s late on a loaded machine), and a
#: reader that needs every sample (an executive reading the object's pose at a given simulated time, a recorder)
#: needs them all. With depth 10 the writer's history no longer held what a busy reader had not yet acknowledged,
#: nor the reader's queue what its callback had not yet taken, and states were lost. 1000 states are 10 s at 100 Hz.
JOINT_STATE_QOS = QoSProfile(depth=1000, reliability=ReliabilityPolicy.RELIABLE,
                             durability=DurabilityPolicy.VOLATILE)
#: service requests: KEEP_LAST would silently drop a request once a busy service has ``depth`` outstanding (the
#: default 10: the 11th); KEEP_ALL keeps every request until it is taken, and each is bounded work (see
#: discrete_robot.budget), so every request is answered, the last after the ones before it.
SERVICE_QOS = QoSProfile(depth=1000, history=HistoryPolicy.KEEP_ALL, reliability=ReliabilityPolicy.RELIABLE,
                         durability=DurabilityPolicy.VOLATILE)
#: every action server and client: the goal, cancel and result services keep every request, as
#: :data:`SERVICE_QOS` does for services (rclpy's default is KEEP_LAST 10: an 11th goal sent at once is lost).
#: Keyword arguments of rclpy.action.ActionServer and ActionClient.
ACTION_QOS = {"goal_service_qos_profile": SERVICE_QOS, "cancel_service_qos_profile": SERVICE_QOS,
              "result_service_qos_profile": SERVICE_QOS}
#: how long an action server keeps a finished goal's handle and result, s. rcl's default is 15 minutes (rclpy's 10
#: s); every goal kept costs ~4 KB, so a server answering a goal a second grew 3.6 MB in its first 15 minutes and
#: looked like a leak in a soak. A client asks for the result when it sends the goal (rclpy's and rclcpp's
#: clients do), so the result is delivered at once and half a minute is ample for a late or retried request.
RESULT_TIMEOUT_S = 30
#: Keyword arguments of every rclpy.action.ActionServer: :data:`ACTION_QOS` and :data:`RESULT_TIMEOUT_S`.
ACTION_SERVER = {**ACTION_QOS, "result_timeout": RESULT_TIMEOUT_S}
