"""DLPack through the core against the stand-in driver (no GPU), in a process
of its own (the driver path is read once per process): a cuabi buffer
exported by cuabi_buffer_export_dlpack (versioned and legacy capsules) and
taken back by cuabi_buffer_import_dlpack on the backend named by argv[1]: the
same pointer, the same bytes, the deleter run once (the export registry back
to where it was) when the taking buffer goes or an unconsumed capsule dies;
the handshake's refusal of stream 0. Prints "dlpack on the stand-in: ok"."""

from __future__ import annotations

import gc
import sys

import numpy as np

import cuabi
from cuabi import _dlpack


def main(backend: str) -> None:
    dev = cuabi.Device(0, backend=backend)
    buf = dev.to_device(np.arange(8, dtype=np.float32))
    before = _dlpack.live_exports()
    for max_version in ((1, 1), None):
        capsule = buf.as_array(np.float32, (2, 4)).__dlpack__(max_version=max_version)
        back = cuabi.from_dlpack(capsule, backend=backend)
        assert back.ptr == buf.ptr, (back.ptr, buf.ptr)
        assert back.shape == (2, 4), back.shape
        assert back.to_numpy().ravel().tolist() == list(range(8))
        assert _dlpack.live_exports() == before + 1
        del back, capsule
        gc.collect()
        assert _dlpack.live_exports() == before, "the deleter ran once, with the buffer"
    capsule = buf.__dlpack__(max_version=(1, 1))
    assert _dlpack.live_exports() == before + 1
    del capsule
    gc.collect()
    assert _dlpack.live_exports() == before, "an unconsumed capsule deletes its tensor"
    stream = dev.create_stream()
    stream.dlpack_handoff(-1)
    try:
        stream.dlpack_handoff(0)
    except cuabi.InvalidArgumentError as exc:
        assert "consumer_stream is 0" in str(exc), exc
    else:
        raise AssertionError("stream 0 was taken")
    print("dlpack on the stand-in: ok")


if __name__ == "__main__":
    main(sys.argv[1])
