"""manipulation_node's memory of the object's poses (nodes/push_perception.StampedPoses): a ring of fixed arrays,
read by simulated time; checked against a plain list of every pose appended."""

import numpy as np

from discrete_robot.nodes.push_perception import StampedPoses


def test_the_ring_answers_as_a_list_of_its_last_poses_would():
    ring, appended = StampedPoses(capacity=7), []
    assert ring.last() is None and ring.at_or_after(0) is None and ring.between(0, 10).shape == (0, 3)
    rng = np.random.default_rng(1)
    stamps = np.cumsum(rng.integers(0, 3, 30))      # never decreasing, with repeats (a paused world)
    for stamp in stamps:
        pose = rng.normal(size=3)
        ring.append(int(stamp), pose)
        appended.append((int(stamp), pose))
        kept = appended[-7:]
        assert ring.last()[0] == kept[-1][0] and np.array_equal(ring.last()[1], kept[-1][1])
        for probe in range(int(stamps[0]) - 1, int(stamp) + 2):
            first = next(((t, p) for t, p in kept if t >= probe), None)
            found = ring.at_or_after(probe)
            assert (found is None) == (first is None)
            if first is not None:
                assert found[0] == first[0] and np.array_equal(found[1], first[1])
        low, high = int(stamp) - 4, int(stamp) - 1
        expected = np.array([p for t, p in kept if low <= t <= high]).reshape(-1, 3)
        assert np.array_equal(ring.between(low, high), expected)
