# Python functions that misbehave rather than compute wrongly, and things that are not functions:
# ropecheck must answer each with a one-line reason (exit 2) or a FAILED/HANG result, never hang
# or crash itself (tests/plugins/python_test.cc).
import ctypes
import os
import signal
import time

import numpy as np

not_callable = 42


def two_arguments(q, k):
    pass


def wrong_shape(q, k, positions, spec):
    return q[:, :1], k


def wrong_dtype(q, k, positions, spec):
    return q.astype(np.float64), k.astype(np.float64)


def not_a_pair(q, k, positions, spec):
    return q


def hangs(q, k, positions, spec):
    time.sleep(1000)


def segfaults(q, k, positions, spec):
    os.kill(os.getpid(), signal.SIGSEGV)


def exits(q, k, positions, spec):
    os._exit(3)


def writes_positions(q, k, positions, spec):
    positions[0] += 1  # read-only: numpy raises


def writes_positions_through_address(q, k, positions, spec):
    ctypes.c_int64.from_address(positions.ctypes.data).value += 1  # around numpy's flag


def writes_past_q(q, k, positions, spec):
    ctypes.c_float.from_address(q.ctypes.data + q.nbytes).value = 1.0


def declares_badly(q, k, positions, spec):
    pass


declares_badly.ropecheck = {"layout": ["interleaved"]}  # the key is "layouts"
