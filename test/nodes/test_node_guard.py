"""GuardedNode: no callback exception reaches the executor; services always answer, never with a non-finite
success; subscriptions and timers keep running after a bad message or tick; start-up parameter errors are one
line. In process (the guard itself), plus the node executables started with bad parameters."""

import math
import time

import pytest

pytestmark = pytest.mark.ros


@pytest.fixture
def context():
    rclpy = pytest.importorskip("rclpy")
    from rclpy.context import Context

    ctx = Context()
    rclpy.init(context=ctx)
    yield ctx
    rclpy.try_shutdown(context=ctx)


def _spin(nodes, context, until, timeout=10.0):
    from rclpy.executors import SingleThreadedExecutor

    executor = SingleThreadedExecutor(context=context)
    for node in nodes:
        executor.add_node(node)
    deadline = time.monotonic() + timeout
    while not until() and time.monotonic() < deadline:
        executor.spin_once(timeout_sec=0.05)
    executor.shutdown()
    assert until(), "timed out"


def _call(server, client_node, srv_type, name, request, context):
    client = client_node.create_client(srv_type, name)
    _spin([server, client_node], context, client.service_is_ready)
    future = client.call_async(request)
    _spin([server, client_node], context, future.done)
    return future.result()


def test_a_raising_service_answers_with_the_reason_and_keeps_serving(context):
    from rclpy.node import Node
    from std_srvs.srv import Trigger

    from discrete_robot.errors import InputError
    from discrete_robot.nodes.common import GuardedNode

    calls = []

    def handler(request, response):
        calls.append(1)
        if len(calls) == 1:
            raise ZeroDivisionError("float division by zero")
        if len(calls) == 2:
            raise InputError("pusher_speed: must be > 0, got 0")
        response.success = True
        response.message = "fine"
        return response

    server = GuardedNode("guarded_server", context=context)
    server.create_service(Trigger, "trigger", handler)
    client = Node("guard_client", context=context)
    first = _call(server, client, Trigger, "trigger", Trigger.Request(), context)
    assert not first.success
    assert first.message == "internal error in trigger: ZeroDivisionError: float division by zero"
    second = _call(server, client, Trigger, "trigger", Trigger.Request(), context)
    assert (second.success, second.message) == (False, "pusher_speed: must be > 0, got 0")
    third = _call(server, client, Trigger, "trigger", Trigger.Request(), context)
    assert (third.success, third.message) == (True, "fine")


def test_a_success_response_with_a_non_finite_number_is_refused_naming_the_field(context):
    from discrete_robot_interfaces.srv import PredictPush
    from rclpy.node import Node

    from discrete_robot.nodes.common import GuardedNode

    def handler(request, response):
        response.success = True
        response.power = 1.0
        response.object_twist.angular.z = math.inf
        return response

    server = GuardedNode("guarded_nan_server", context=context)
    server.create_service(PredictPush, "predict", handler)
    client = Node("guard_nan_client", context=context)
    answer = _call(server, client, PredictPush, "predict", PredictPush.Request(), context)
    assert not answer.success
    assert "object_twist.angular.z" in answer.message
    assert answer.power == 0.0, "the refusal is a fresh response, not the partial one"


def test_subscription_and_timer_exceptions_are_logged_and_the_next_ones_run(context):
    from rclpy.node import Node
    from std_msgs.msg import Float64

    from discrete_robot.nodes.common import STATE_QOS, GuardedNode

    received, ticks = [], []

    def on_message(msg):
        if not math.isfinite(msg.data):
            raise ValueError("not finite")
        received.append(msg.data)

    def on_tick():
        ticks.append(1)
        if len(ticks) == 1:
            raise RuntimeError("first tick fails")

    node = GuardedNode("guarded_subscriber", context=context)
    node.create_subscription(Float64, "value", on_message, STATE_QOS)
    node.create_timer(0.01, on_tick)
    publisher_node = Node("guard_publisher", context=context)
    publisher = publisher_node.create_publisher(Float64, "value", STATE_QOS)
    _spin([node, publisher_node], context, lambda: publisher.get_subscription_count() > 0)
    publisher.publish(Float64(data=math.nan))
    publisher.publish(Float64(data=2.5))
    _spin([node, publisher_node], context, lambda: received == [2.5] and len(ticks) >= 3)


def test_rate_limited_log_counts_what_it_suppresses(monkeypatch):
    from discrete_robot.nodes import guarded
    from discrete_robot.nodes.common import RateLimitedLog

    now = [0.0]   # an injected clock: a busy machine pausing this test between two warnings changes nothing
    monkeypatch.setattr(guarded.time, "monotonic", lambda: now[0])

    class Logger:
        def __init__(self):
            self.lines = []

        def warning(self, message):
            self.lines.append(message)

    logger = Logger()
    log = RateLimitedLog(logger, period_s=0.2)
    for _ in range(5):
        log.warning("topic a", "ignored a")
    log.warning("topic b", "ignored b")
    now[0] = 0.25
    log.warning("topic a", "ignored a")
    assert logger.lines == ["ignored a", "ignored b", "ignored a (and 4 more like it in the last 0.2 s)"]


@pytest.mark.parametrize("executable, override, parameter", [
    ("discrete_robot_node", "time_step:=abc", "time_step"),
    ("discrete_robot_node", "publish_rate:=0.0", "publish_rate"),
    ("space_robot_node", "time_step:=-1.0", "time_step"),
    ("trajectory_planner_node", "grid_points:=1.5", "grid_points"),
    ("push_predictor_node", "pressure_model:=7", "pressure_model"),
])
def test_bad_start_up_parameters_end_the_node_with_one_line_naming_them(ros, executable, override, parameter):
    node = ros.start(executable, ros_args=("-p", override))
    status = node.wait(timeout=30.0)
    log = node.log()
    assert status == 1, log
    assert "Traceback" not in log, log
    lines = [line for line in log.splitlines() if parameter in line and "invalid" in line]
    assert len(lines) == 1, log


def test_a_parameter_of_an_unknown_type_is_refused_naming_it(context):
    """issue 22: a set_parameters request with value.type 99 was refused as "internal error ... ValueError" with no
    result per parameter; now each result says which parameter has which unknown type."""
    from rcl_interfaces.msg import Parameter as ParameterMsg
    from rcl_interfaces.msg import ParameterValue
    from rcl_interfaces.srv import SetParameters, SetParametersAtomically
    from rclpy.node import Node
    from rclpy.parameter import Parameter

    from discrete_robot.nodes.common import GuardedNode

    server = GuardedNode("typed_server", context=context)
    server.declare_parameter("kp", 100.0)
    client = Node("typed_client", context=context)
    bad = ParameterMsg(name="kp", value=ParameterValue(type=99))
    good = Parameter("kp", value=5.0).to_parameter_msg()
    answer = _call(server, client, SetParameters, "typed_server/set_parameters",
                   SetParameters.Request(parameters=[good, bad]), context)
    assert len(answer.results) == 2 and not any(r.successful for r in answer.results)
    assert "kp (value.type 99 is not a ParameterType)" in answer.results[1].reason
    assert "internal error" not in answer.results[1].reason
    atomic = _call(server, client, SetParametersAtomically, "typed_server/set_parameters_atomically",
                   SetParametersAtomically.Request(parameters=[bad]), context)
    assert not atomic.result.successful and "value.type 99" in atomic.result.reason
    assert server.get_parameter("kp").value == 100.0
    fine = _call(server, client, SetParameters, "typed_server/set_parameters",
                 SetParameters.Request(parameters=[good]), context)
    assert fine.results[0].successful and server.get_parameter("kp").value == 5.0


def test_a_parameter_with_an_empty_name_is_refused(context):
    """rclpy set a parameter named "" (declared by no node) with any value, NaN included, and answered success:
    the fuzzer's non-finite successes on discrete_robot_node's set_parameters."""
    import math

    from rcl_interfaces.msg import Parameter as ParameterMsg
    from rcl_interfaces.msg import ParameterValue
    from rcl_interfaces.srv import SetParameters
    from rclpy.node import Node

    from discrete_robot.nodes.common import GuardedNode

    server = GuardedNode("unnamed_server", context=context)
    server.declare_parameter("kp", 100.0)
    client = Node("unnamed_client", context=context)
    unnamed = ParameterMsg(name="", value=ParameterValue(type=3, double_value=math.nan))
    answer = _call(server, client, SetParameters, "unnamed_server/set_parameters",
                   SetParameters.Request(parameters=[unnamed]), context)
    assert not answer.results[0].successful and "empty name" in answer.results[0].reason
