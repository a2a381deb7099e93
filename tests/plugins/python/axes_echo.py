# What a multi-axis call hands a Python function, read back by a test from the exception it
# raises: the spec's axis keys and the positions array as numpy holds it (tests/plugins/python_test.cc).
import json


def echo_axes(q, k, positions, spec):
    """Raises with the axis keys of its spec and the shape and rows of its positions."""
    raise LookupError(json.dumps({"axes": spec["axes"], "mrope_section": spec["mrope_section"],
                                  "shape": list(positions.shape), "dtype": str(positions.dtype),
                                  "positions": positions.tolist()}, sort_keys=True))


echo_axes.ropecheck = {"axes": ["mrope", "imrope", "vision"], "angles": "fp64"}


def declares_an_unknown_mode(q, k, positions, spec):
    pass


declares_an_unknown_mode.ropecheck = {"axes": ["mrope", "3d"]}
