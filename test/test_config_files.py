"""Start-up files read defensively (discrete_robot.config_files): the files that hung or crashed the nodes (issue
22) are refused in one line naming the file and the reason, without blocking."""

import os
import threading

from discrete_robot.config_files import MAX_FILE_BYTES, MAX_NESTING, load_yaml, parse_yaml, read_text, regular_file
from discrete_robot.errors import ModelError


def _refused_fast(call, *args):
    """The ModelError ``call(*args)`` raises; fails if it does not return at all (a blocking open or read)."""
    outcome = {}

    def run():
        try:
            call(*args)
        except ModelError as error:
            outcome["error"] = error
        else:
            outcome["error"] = None

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(30.0)
    assert not worker.is_alive(), f"{call.__name__}{args} blocked"
    assert outcome["error"] is not None, f"{call.__name__}{args} was accepted"
    return str(outcome["error"])


def test_a_fifo_a_device_and_a_directory_are_refused_without_blocking(tmp_path):
    fifo = tmp_path / "model.yaml"
    os.mkfifo(fifo)
    for call in (read_text, regular_file):
        assert "FIFO, not a regular file" in _refused_fast(call, fifo, "model_file")
        assert "character device" in _refused_fast(call, "/dev/zero", "model_file")
        assert "directory" in _refused_fast(call, tmp_path, "model_file")
    assert "cannot be read" in _refused_fast(read_text, tmp_path / "missing.yaml", "model_file")


def test_a_file_over_the_size_limit_is_refused_and_one_at_it_is_read(tmp_path):
    large = tmp_path / "large.yaml"
    large.write_bytes(b"#" * (MAX_FILE_BYTES + 1))
    message = _refused_fast(read_text, large, "model_file")
    assert message.startswith(f"model_file {large}: larger than {MAX_FILE_BYTES} bytes")
    assert "larger than" in _refused_fast(regular_file, large, "model_file")
    large.write_bytes(b"#" * MAX_FILE_BYTES)
    assert len(read_text(large, "model_file")) == MAX_FILE_BYTES


def test_non_utf8_text_is_refused_by_name(tmp_path):
    latin = tmp_path / "latin1.yaml"
    latin.write_bytes("name: bras articulé\n".encode("latin-1"))
    message = _refused_fast(read_text, latin, "scene_file")
    assert message == f"scene_file {latin}: not UTF-8 text (byte 18: 0xe9)"


def test_deep_nesting_is_refused_before_the_composer_recurses(tmp_path):
    deep = tmp_path / "deep.yaml"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    message = _refused_fast(load_yaml, deep, "model_file")    # libyaml's own flow limit (1000) or ours
    assert message.startswith(f"model_file {deep}: ") and "nest" in message and "\n" not in message
    block = "".join(f"{'  ' * k}k{k}:\n" for k in range(MAX_NESTING + 1)) + f"{'  ' * (MAX_NESTING + 1)}x: 1\n"
    assert "nested deeper" in _refused_fast(parse_yaml, block, "model")
    shallow = "".join(f"{'  ' * k}k{k}:\n" for k in range(MAX_NESTING - 1)) + f"{'  ' * (MAX_NESTING - 1)}x: 1\n"
    value = parse_yaml(shallow, "model")
    for k in range(MAX_NESTING - 1):
        value = value[f"k{k}"]
    assert value == {"x": 1}


def test_invalid_yaml_is_one_line_naming_the_source():
    message = _refused_fast(parse_yaml, "a: [1, 2\nb: {", "model file m.yaml")
    assert message.startswith("model file m.yaml: invalid YAML (") and "\n" not in message


def test_the_shipped_models_read_as_before():
    import yaml

    from discrete_robot.model.description import package_config_path

    for name in ("planar_2link.yaml", "arm_6dof.yaml", "space_robot_dual_arm.yaml"):
        path = package_config_path(name)
        assert load_yaml(path, "model_file") == yaml.safe_load(path.read_text())


def billion_laughs(levels: int = 9) -> str:
    """A YAML "billion laughs": each level lists the previous one 9 times by alias, 9**levels strings in all."""
    text = 'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n'
    for name, previous in zip("bcdefghijk"[:levels - 1], "abcdefghij", strict=False):
        text += f"{name}: &{name} [{', '.join([f'*{previous}'] * 9)}]\n"
    return text


def test_an_alias_bomb_is_refused_before_it_expands(tmp_path):
    """9⁹ = 387 million strings in 400 bytes: PyYAML would build it sharing nodes, and the first walk over the
    result (a JSON dump of a sweep spec) expanded it to 3.6 GB. Refused at the first alias, in a few kB."""
    import tracemalloc

    bomb = tmp_path / "bomb.yaml"
    bomb.write_text(billion_laughs())
    assert len(bomb.read_bytes()) < 501
    message = _refused_fast(load_yaml, bomb, "spec")
    assert message == f"spec {bomb}: YAML aliases are not accepted (*a, line 2): write the value out"
    tracemalloc.start()     # the parse alone (reading a file holds a buffer of the size limit for a moment)
    try:
        _refused_fast(parse_yaml, bomb.read_text(), "spec")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 2 ** 20
    merge = "base: &base {mass: 1.0}\nlink:\n  <<: *base\n"
    assert _refused_fast(parse_yaml, merge, "model") == ("model: YAML aliases are not accepted (*base, line 3): "
                                                         "write the value out")
    assert parse_yaml("a: &anchor 1\n", "model") == {"a": 1}     # an anchor nobody refers to is harmless


def test_an_integer_past_pythons_digit_limit_is_invalid_yaml():
    message = _refused_fast(parse_yaml, "seed: " + "9" * 5000 + "\n", "spec s.yaml")
    assert message.startswith("spec s.yaml: invalid YAML (Exceeds the limit (4300 digits)") and "\n" not in message
