"""Type hashes (RIHS01, REP 2011), constants and field defaults of a package's interface definitions.

Run on an upstream checkout to get the figures that test/system/test_vendor_interfaces.py records, e.g.

    git -C <control_msgs git dir> archive 6.8.0 control_msgs | tar -x -C /tmp/upstream
    .venv/bin/python vendor/type_hashes.py /tmp/upstream/control_msgs \\
        action/FollowJointTrajectory.action msg/JointTrajectoryControllerState.msg ...

It does what the distribution's build does (rosidl_adapter's .msg/.srv/.action -> .idl, then
rosidl_generator_type_description), with the dependencies' type descriptions taken from the installed
share folders of the ament prefixes, so its hashes are those a distribution build of the same files
gets. A hash covers the names, types and order of the fields of the type and of every type it nests;
it leaves out constants and default values, which are printed beside it.
"""

import argparse
import json
import os
import sys
import tempfile
from contextlib import redirect_stdout
from pathlib import Path


def _share_folders() -> list[str]:
    """'package:share folder' for every package in the ament prefixes, the generator's include paths."""
    includes = []
    for prefix in filter(None, os.environ.get("AMENT_PREFIX_PATH", sys.prefix).split(os.pathsep)):
        share = Path(prefix) / "share"
        if share.is_dir():
            includes += [f"{entry.name}:{entry}" for entry in share.iterdir() if entry.is_dir()]
    return includes


def _constants_and_defaults(idl_file: Path, package_dir: Path) -> tuple[dict, dict]:
    """{type name: {constant: value}} and {type name: {field: default}} of one .idl file."""
    from rosidl_parser import definition
    from rosidl_parser.parser import parse_idl_file

    content = parse_idl_file(definition.IdlLocator(package_dir, idl_file.relative_to(package_dir))).content
    messages = list(content.get_elements_of_type(definition.Message))
    for service in content.get_elements_of_type(definition.Service):
        messages += [service.request_message, service.response_message]
    for action in content.get_elements_of_type(definition.Action):
        messages += [action.goal, action.result, action.feedback]
    constants, defaults = {}, {}
    for message in messages:
        name = "/".join(message.structure.namespaced_type.namespaced_name())
        if message.constants:
            constants[name] = {constant.name: constant.value for constant in message.constants}
        fields = {member.name: member.get_annotation_value("default")["value"]
                  for member in message.structure.members if member.has_annotation("default")}
        if fields:
            defaults[name] = fields
    return constants, defaults


def describe(package_dir: Path, interfaces: list[str]) -> dict:
    """{'hashes': {type name: RIHS01 string}, 'constants': ..., 'defaults': ...} of the named interface files."""
    from rosidl_adapter import convert_to_idl
    from rosidl_generator_type_description import generate_type_hash

    package_dir = package_dir.resolve()
    package = package_dir.name
    result = {"hashes": {}, "constants": {}, "defaults": {}}
    with tempfile.TemporaryDirectory() as scratch:
        idl_dir, json_dir = Path(scratch, "idl"), Path(scratch, "json")
        with redirect_stdout(sys.stderr):  # the adapter reports every file it reads and writes
            idl_files = [convert_to_idl(package_dir, package, Path(name), idl_dir) for name in interfaces]
        for idl_file in idl_files:
            constants, defaults = _constants_and_defaults(idl_file, idl_dir)
            result["constants"].update(constants)
            result["defaults"].update(defaults)
        arguments = Path(scratch, "arguments.json")
        arguments.write_text(json.dumps({
            "package_name": package, "output_dir": str(json_dir),
            "idl_tuples": [f"{idl_dir}:{idl_file.relative_to(idl_dir)}" for idl_file in idl_files],
            "include_paths": [entry for entry in _share_folders() if not entry.startswith(f"{package}:")]}))
        for generated in generate_type_hash(str(arguments)):
            for entry in json.loads(Path(generated).read_text())["type_hashes"]:
                if entry["type_name"].startswith(f"{package}/"):
                    result["hashes"][entry["type_name"]] = entry["hash_string"]
    result["hashes"] = dict(sorted(result["hashes"].items()))
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("package_dir", type=Path, help="a package folder laid out as upstream's (msg/, srv/, action/)")
    parser.add_argument("interfaces", nargs="+", help="interface files relative to it, e.g. msg/TFMessage.msg")
    arguments = parser.parse_args(argv)
    json.dump(describe(arguments.package_dir, arguments.interfaces), sys.stdout, indent=1)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
