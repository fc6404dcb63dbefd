"""ROS 2 tooling that is not a node: launch support, topic recording, live experiments."""
