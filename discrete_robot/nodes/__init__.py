"""ROS 2 nodes: thin layers that translate messages and parameters for the physics core."""
