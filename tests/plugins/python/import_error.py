# A module whose import fails: ropecheck must say so in one line and exit 2.
import ropecheck_no_such_module_anywhere  # noqa: F401


def apply(q, k, positions, spec):
    pass
