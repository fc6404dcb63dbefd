"""A push-to-pose request goes through the pushing code without going back and forth (issue 37, item 3): following
one real request from ``manipulation.push_to_pose.plan_push_motion`` file by file makes at most 20 returns to a
file already left.

How it is followed. ``sys.setprofile`` records the request's calls into the two capabilities it runs through,
``manipulation/`` and ``pushing/`` (shared primitives such as ``geometry2d``, ``validation`` and the arm's
kinematics in ``model/`` are passed through, as library calls are). Each function is read once, as a reader
follows the code: the calls kept are the first call of each function with the call path that led to it (a tree,
in the order the calls happened). Walking that tree depth first, entering a callee and coming back to its caller,
gives the sequence of files the reader is in; a "return to a file already left" is each time that sequence enters
(by a call or by a return) a file it has been in before and left.
"""

import sys
from pathlib import Path

import numpy as np

import discrete_robot
from discrete_robot.manipulation.arm import ArmFinger
from discrete_robot.manipulation.push_to_pose import plan_push_motion, push_goal
from discrete_robot.manipulation.scene import load_scene
from discrete_robot.model.description import load_model, package_config_path

PACKAGE = Path(discrete_robot.__file__).resolve().parent
SCOPE = ("manipulation", "pushing")
MAX_RETURNS = 20


def first_calls(request) -> list[tuple[tuple[str, str], ...]]:
    """The call paths (file, function) of the first call of every function of SCOPE that ``request()`` makes, in
    call order; frames outside SCOPE are left out of the paths."""
    scope = {}

    def in_scope(code) -> str | None:
        if code not in scope:
            path = Path(code.co_filename)
            inside = path.is_relative_to(PACKAGE) and path.relative_to(PACKAGE).parts[0] in SCOPE
            scope[code] = path.relative_to(PACKAGE).as_posix() if inside else None
        return scope[code]

    paths, seen, stack = {}, set(), [()]

    def profile(frame, event, arg):
        if event == "call":
            file = in_scope(frame.f_code)
            if file is None:
                stack.append(stack[-1])
                return
            function = (file, frame.f_code.co_qualname)
            path = stack[-1] + (function,)
            if function not in seen:
                seen.add(function)
                for depth in range(1, len(path) + 1):
                    paths.setdefault(path[:depth], None)
            stack.append(path)
        elif event == "return":
            stack.pop()

    sys.setprofile(profile)
    try:
        request()
    finally:
        sys.setprofile(None)
    return list(paths)


def file_sequence(paths) -> list[str]:
    """The files a depth-first walk of the call tree is in, one entry per stay (consecutive repeats merged)."""
    children = {}
    for path in paths:
        children.setdefault(path[:-1], []).append(path)
    files = []

    def visit(path):
        files.append(path[-1][0])
        for child in children.get(path, []):
            visit(child)
            files.append(path[-1][0])

    for root in children.get((), []):
        visit(root)
    return [file for k, file in enumerate(files) if k == 0 or files[k - 1] != file]


def returns_to_files_left(stays: list[str]) -> int:
    left, returns = set(), 0
    for k, file in enumerate(stays):
        returns += file in left
        if k + 1 < len(stays):
            left.add(file)
    return returns


def test_the_counting_sees_every_return():
    stays = ["a", "b", "a", "c", "a", "b", "a"]
    assert returns_to_files_left(stays) == 4          # a (from b), a (from c), b, a
    paths = [(("a", "f"),), (("a", "f"), ("b", "g")), (("a", "f"), ("b", "g"), ("a", "h")), (("a", "f"), ("c", "k"))]
    assert file_sequence(paths) == ["a", "b", "a", "b", "a", "c", "a"]


def test_a_push_to_pose_request_makes_at_most_20_returns_to_a_file_already_left():
    model = load_model(package_config_path("planar_2link.yaml"))
    scene = load_scene(package_config_path("table_scene_planar_2link.yaml"))
    arm = ArmFinger.in_scene(model, scene)
    goal = push_goal(scene, scene.start_pose + np.array([0.06, 0.08, 0.0]), scene.start_pose)

    def request():
        return plan_push_motion(arm, scene, goal, arm.ready, 0.05, 0.2, 0.01, np.radians(5.0))

    request()           # compiles what is not cached yet, outside the profile
    stays = file_sequence(first_calls(request))
    returns = returns_to_files_left(stays)
    assert {"manipulation/push_to_pose.py", "manipulation/push_planning.py", "pushing/simulation.py",
            "pushing/prediction.py", "pushing/compiled.py"} <= set(stays), stays
    assert returns <= MAX_RETURNS, f"{returns} returns in {len(stays)} stays: " + " -> ".join(stays)
