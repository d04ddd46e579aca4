"""The bottom layer: helpers every other package uses and no concept of its own.

- :mod:`common.registry`: names to classes, imported on first use (plug-ins by name);
- :mod:`common.settings`: dataclass fields that carry their bounds (settings structs);
- :mod:`common.trajectory`: the trajectory containers and model layout that the planner fills
  and the derivative providers read;
- :mod:`common.libmujoco`: libmujoco's C functions called from compiled (numba) code;
- :mod:`common.yamlfile`: a YAML file read with one-line errors naming the file (configs and
  model overlays);
- :mod:`common.handover`: the atomic hand-over of knots between compiled kernels on different
  threads.
"""
