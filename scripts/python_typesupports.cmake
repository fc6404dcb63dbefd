# Included by scripts/setup_env.sh (CMAKE_PROJECT_INCLUDE, right after project()) when it builds an interface
# package into a venv of PyPI wheels, where only rclpy uses the messages: rclpy loads the C type supports alone,
# so the C++ generators (rosidl_generator_cpp and the three C++ type supports, about half of the build's CPU) are
# left out. rosidl_default_generators is found here first, so that its generators have registered themselves;
# the package's own find_package() of it then finds it done. A ROS 2 workspace build (colcon) never includes this
# file and generates every type support.
find_package(rosidl_default_generators REQUIRED)
list(FILTER AMENT_EXTENSIONS_rosidl_generate_idl_interfaces EXCLUDE REGEX "_cpp:")
