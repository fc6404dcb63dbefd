"""Experiment sweeps on Ray: many runs of a core experiment over a grid and random draws of its inputs.

``python -m discrete_robot sweep run SPEC.yaml --output-dir DIR [--workers N] [--address ADDR] [--resume]``:
the spec (:mod:`.spec`) names an experiment (:mod:`.experiments`) and its inputs; the cases (:mod:`.cases`)
each have a stable id and seed; the engine (:mod:`.engine`) runs them on a local Ray instance or a cluster and
writes ``DIR/results.parquet`` as results arrive (:mod:`.results`), then ``DIR/summary.json`` and the plots
(:mod:`.plots`). docs/sweeps.md.
"""
