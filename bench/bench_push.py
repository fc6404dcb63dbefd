"""Push prediction latency (discrete_robot.pushing) against a generic optimiser on the same problem.

For 50, 200 and 1000 weighted support points (and the exact uniform model),
the same random pushes (contact on an edge of a non-convex footprint, an
approaching finger velocity, contact friction 0-1) are predicted by
``predict_push`` (median and p99 latency) and by a baseline that follows the
same mode logic but solves each convex sub-problem with
scipy.optimize.minimize (SLSQP, analytic gradient): sticking, min P(xi)
subject to u(xi) = v_p; sliding, min P(xi) subject to W . xi = 1. ratio =
baseline median / ours. Both answers' Newton balance residuals are reported.

``run_ros()`` starts push_predictor_node and measures predictions per second
through the predict_push service (ratio = in-process rate / service rate is
the service overhead factor); it returns nothing where rclpy is missing.
"""

import os
import time

import numpy as np
from scipy.optimize import minimize

from discrete_robot.geometry2d import perp
from discrete_robot.pushing.object_model import make_pushed_object
from discrete_robot.pushing.polygon import contains
from discrete_robot.pushing.prediction import ContactMode, contact_on_outline, predict_push

FOOTPRINT = np.array([[0.0, 0.0], [0.12, 0.0], [0.12, 0.08], [0.07, 0.08], [0.07, 0.04], [0.0, 0.04]])  # an L
SIZES = (50, 200, 1000)
CASES = 300
BASELINE_CASES = 40


def support_points(count: int, seed: int = 0) -> np.ndarray:
    """Exactly ``count`` points uniformly inside the footprint (rejection sampling, fixed seed)."""
    rng = np.random.default_rng(seed)
    low, high = FOOTPRINT.min(axis=0), FOOTPRINT.max(axis=0)
    points = np.empty((0, 2))
    while len(points) < count:
        candidates = rng.uniform(low, high, (4 * count, 2))
        points = np.vstack([points, candidates[contains(FOOTPRINT, candidates)]])
    return points[:count]


def pushes(count: int, seed: int = 1):
    """(contact point, finger velocity, contact friction) on random edges, approaching within +-80 degrees."""
    rng = np.random.default_rng(seed)
    k = len(FOOTPRINT)
    cases = []
    for _ in range(count):
        edge = rng.integers(k)
        a, b = FOOTPRINT[edge], FOOTPRINT[(edge + 1) % k]
        contact = a + rng.uniform(0.05, 0.95) * (b - a)
        tangent = (b - a) / np.linalg.norm(b - a)
        inward = perp(tangent)
        angle = rng.uniform(-1.4, 1.4)
        velocity = 0.1 * (np.cos(angle) * inward + np.sin(angle) * tangent)
        cases.append((contact, velocity, rng.uniform(0.0, 1.0)))
    return cases


def balance_residual(obj, contact, force, twist) -> float:
    """|finger wrench + table friction load| / |finger wrench|, the load summed over the support points. A point
    the twist leaves at rest exerts static friction g (|g| <= its share of mu N) that the twist does not fix: the
    residual is then what such a force at that point cannot absorb."""
    points, weights = obj.support_points()
    velocity = twist[:2] + twist[2] * perp(points)
    speed = np.linalg.norm(velocity, axis=1)
    moving = speed > 1e-9 * np.linalg.norm(twist[:2] + twist[2] * perp(contact))
    friction = -obj.friction_load * weights[moving, None] * velocity[moving] / speed[moving, None]
    load = np.array([*friction.sum(axis=0), np.sum(perp(points[moving]) * friction)])
    finger = np.array([*force, perp(contact) @ force])
    residual = finger + load
    if moving.all():
        return float(np.linalg.norm(residual) / np.linalg.norm(finger))
    rest = points[~moving][0]
    capacity = obj.friction_load * weights[~moving][0]
    moment = residual[2] - perp(rest) @ residual[:2]  # the static friction -residual[:2] at rest balances the rest
    excess = max(0.0, float(np.linalg.norm(residual[:2])) - capacity)
    return float(np.hypot(moment, excess) / np.linalg.norm(finger))


def scipy_prediction(obj, contact_point, velocity, mu):
    """The same sticking / sliding logic, each sub-problem by scipy.optimize.minimize (SLSQP) on the physical
    twist; returns (mode, twist, finger force)."""
    contact = contact_on_outline(obj, contact_point)
    points, weights = obj.support_points()
    load = obj.friction_load
    lever = perp(points)

    def power(xi):
        v = xi[:2] + xi[2] * lever
        speed = np.linalg.norm(v, axis=1)
        unit = v / np.maximum(speed, 1e-300)[:, None]
        gradient = load * np.array([weights @ unit[:, 0], weights @ unit[:, 1],
                                    weights @ np.sum(lever * unit, axis=1)])
        return load * float(weights @ speed), gradient

    c, n, t = contact.point, contact.normal, contact.left
    if velocity @ n <= 0.0:
        return ContactMode.SEPARATING, np.zeros(3), np.zeros(2)
    rows = np.array([[1.0, 0.0, -c[1]], [0.0, 1.0, c[0]]])
    start = np.array([*velocity, 0.0])
    stick = minimize(power, start, jac=True, method="SLSQP",
                     constraints=[{"type": "eq", "fun": lambda xi: rows @ xi - velocity, "jac": lambda xi: rows}],
                     options={"ftol": 1e-12, "maxiter": 200})
    force = power(stick.x)[1][:2]
    if force @ n >= 0.0 and abs(force @ t) <= mu * (force @ n):
        return ContactMode.STICKING, stick.x, force
    side = 1.0 if force @ t > 0.0 else -1.0
    edge = n + side * mu * t
    wrench = np.array([*edge, perp(c) @ edge])
    slide = minimize(power, wrench / (wrench @ wrench), jac=True, method="SLSQP",
                     constraints=[{"type": "eq", "fun": lambda xi: wrench @ xi - 1.0, "jac": lambda xi: wrench}],
                     options={"ftol": 1e-12, "maxiter": 200})
    twist = slide.x * (velocity @ n) / ((rows @ slide.x) @ n)
    gradient = power(twist)[1]
    mode = ContactMode.SLIDING_LEFT if side > 0 else ContactMode.SLIDING_RIGHT
    return mode, twist, (gradient @ wrench) / (wrench @ wrench) * edge


def _timed(function, cases):
    times, answers = [], []
    for case in cases:
        start = time.perf_counter()
        answers.append(function(*case))
        times.append(time.perf_counter() - start)
    return np.array(times), answers


def run() -> list[dict]:
    cases = pushes(CASES)
    entries = []
    for count in SIZES:
        obj = make_pushed_object(FOOTPRINT, 0.5, 2.0, support_points=support_points(count),
                                 support_weights=np.ones(count))
        predict_push(obj, *cases[0])  # warm-up
        ours, predictions = _timed(lambda c, v, mu, o=obj: predict_push(o, c, v, mu), cases)
        baseline, answers = _timed(lambda c, v, mu, o=obj: scipy_prediction(o, c, v, mu), cases[:BASELINE_CASES])
        ours_residual = [balance_residual(obj, p.contact.point, p.contact_force, p.twist) for p in predictions
                         if p.mode is not ContactMode.SEPARATING]
        baseline_residual = [balance_residual(obj, contact_on_outline(obj, case[0]).point, force, twist)
                             for case, (mode, twist, force) in zip(cases, answers, strict=False)
                             if mode is not ContactMode.SEPARATING]
        agree = np.mean([p.mode is a[0] for p, a in zip(predictions, answers, strict=False)])
        entries.append({
            "name": f"push predict, {count} support points", "ratio": float(np.median(baseline) / np.median(ours)),
            "baseline": "same modes, sub-problems by scipy.optimize.minimize (SLSQP, analytic gradient)",
            "unit": "ms", "median_ms": 1e3 * float(np.median(ours)), "p99_ms": 1e3 * float(np.percentile(ours, 99)),
            "baseline_median_ms": 1e3 * float(np.median(baseline)), "cases": len(cases),
            "baseline_cases": len(answers), "max_balance_residual": float(np.max(ours_residual)),
            "baseline_median_balance_residual": float(np.median(baseline_residual)),
            "mode_agreement_with_baseline": float(agree)})
    exact = make_pushed_object(FOOTPRINT, 0.5, 2.0)
    predict_push(exact, *cases[0])
    ours, _ = _timed(lambda c, v, mu: predict_push(exact, c, v, mu), cases)
    grid = make_pushed_object(FOOTPRINT, 0.5, 2.0, grid_points=200)
    reference, _ = _timed(lambda c, v, mu: predict_push(grid, c, v, mu), cases)
    entries.append({"name": "push predict, exact uniform pressure (L-shaped footprint)",
                    "ratio": float(np.median(reference) / np.median(ours)),
                    "baseline": "predict_push on a 200-point grid discretisation of the same pressure",
                    "unit": "ms", "median_ms": 1e3 * float(np.median(ours)),
                    "p99_ms": 1e3 * float(np.percentile(ours, 99)), "cases": len(cases)})
    return entries + run_ros()


def _service_rate(session, client, requests, outstanding: int, node) -> float:
    """Calls per second with ``outstanding`` requests in flight: each answer sends the next request (from its
    done-callback, so the client spins blocked on the answers rather than polling)."""
    queue = iter(requests)
    answers = []

    def send():
        request = next(queue, None)
        if request is not None:
            client.call_async(request).add_done_callback(answered)

    def answered(future):
        answers.append(future.result().success)
        send()

    start = time.perf_counter()
    for _ in range(outstanding):
        send()
    if not session.spin_until(lambda: len(answers) == len(requests), 60.0, step=0.1) or not all(answers):
        raise RuntimeError(f"predict_push failed during the benchmark\n{node.log()[-2000:]}")
    return len(requests) / (time.perf_counter() - start)


def run_ros(calls: int = 1000, window: int = 16) -> list[dict]:
    """predict_push calls per second through the service of a freshly started push_predictor_node, from one client:
    one request at a time (each waits for the previous answer: the round trip) and with up to ``window`` requests
    outstanding (the service's throughput)."""
    try:
        import rclpy  # noqa: F401
        from discrete_robot_interfaces.srv import PredictPush
        from geometry_msgs.msg import Point, Vector3
    except ImportError:
        return []
    import tempfile

    from discrete_robot.ros.processes import NodeProcess
    from discrete_robot.ros.session import RosSession

    os.environ.setdefault("ROS_DOMAIN_ID", str(1 + os.getpid() % 101))
    cases = pushes(calls, seed=2)
    obj = make_pushed_object(FOOTPRINT, 0.5, 2.0)
    direct, _ = _timed(lambda c, v, mu: predict_push(obj, c, v, mu), cases)
    footprint = [Point(x=float(x), y=float(y)) for x, y in FOOTPRINT]
    requests = [PredictPush.Request(footprint=footprint, normal_force=2.0, support_friction=0.5,
                                    contact_friction=float(mu), contact_point=Point(x=float(c[0]), y=float(c[1])),
                                    pusher_velocity=Vector3(x=float(v[0]), y=float(v[1]))) for c, v, mu in cases]
    rates = {}
    with tempfile.TemporaryDirectory() as logs, RosSession("bench_push") as session:
        node = NodeProcess("push_predictor_node", logs)
        try:
            session.wait_for_service(PredictPush, "predict_push", timeout=30.0)
            client = session.node.create_client(PredictPush, "predict_push")
            client.wait_for_service(timeout_sec=10.0)
            for outstanding in (1, window):
                rates[outstanding] = _service_rate(session, client, requests, outstanding, node)
        finally:
            node.stop()
    direct_rate = 1.0 / float(np.mean(direct))
    return [{"name": f"predict_push through the ROS service, {n} outstanding (exact uniform, L footprint)",
             "ratio": direct_rate / rate, "baseline": "predict_push called in-process (ratio = overhead)",
             "unit": "predictions/s", "service_rate": rate, "outstanding": n, "in_process_rate": direct_rate,
             "calls": calls} for n, rate in rates.items()]


if __name__ == "__main__":
    for entry in run():
        print(entry)
