"""A warning for children forked after CUDA was initialised.

The driver's state does not survive fork(): in such a child every cuabi call
that touches the GPU raises ForkedError. ``multiprocessing`` forks by default
on Linux, so the child warns as soon as it starts, naming the fix, instead of
failing later at its first GPU call.
"""

from __future__ import annotations

import os
import warnings

_cuda_initialised = False


def note_cuda_initialised() -> None:
    """Called once a device has been opened in this process."""
    global _cuda_initialised
    _cuda_initialised = True


def _after_fork_in_child() -> None:
    global _cuda_initialised
    if not _cuda_initialised:
        return
    _cuda_initialised = False  # the child's own use of CUDA cannot work either
    warnings.warn(
        "cuabi: this process was forked after CUDA was initialised in its parent; "
        "CUDA cannot be used here (calls raise cuabi.ForkedError). With "
        "multiprocessing, use the 'spawn' or 'forkserver' start method: "
        "multiprocessing.set_start_method('spawn')",
        RuntimeWarning,
        stacklevel=2,
    )


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
