"""Simulated manipulation: a table-top scene in which the simulated arm's fingertip pushes an object."""
