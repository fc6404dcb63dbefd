"""ROS 2 tooling that is not a node: bringup (every node as its own process), launch support, topic recording,
live experiments."""
