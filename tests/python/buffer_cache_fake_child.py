"""The buffer cache (Device.buffer_cache) against the stand-in driver (no
GPU), in a process of its own (the driver path is read once per process), on
the backend named by argv[1]; argv[2] is the stand-in's path, for its
counters and fault injection. Each check prints "ok <name>"; the last line
is "buffer cache on the stand-in: ok". Any failure raises.

What it checks: one foreign call per allocation and per free through the
library, none for a block the cache holds; reuse by exact size and by stream
(a block freed on stream t goes to t's list); close() and collection hand a
block back on its allocation stream; a freed object stays dead (its calls
answer the core's InvalidHandleError); views defer, lent buffers bypass;
stats; trim (all, one stream), a closed stream's blocks freed in order on
it first; max_bytes and enabled; a block reused on another stream freed in
order there when not kept; the out-of-memory trim and retry; captures
bypass the cache; several threads never get one block twice; the stand-in
holds no more allocations after a trim than before the test."""

from __future__ import annotations

import ctypes
import gc
import sys
import threading
from typing import Any, Callable, Dict, List

import numpy as np

import cuabi
from cuabi._buffer_cache import CAPTURES

CUDA_ERROR_OUT_OF_MEMORY = 2  # cuda.h


class Counting:
    """Stands for a backend's lib and counts the cuabi_* functions looked up
    (each call of the object layer looks its function up once)."""

    def __init__(self, lib: Any) -> None:
        self._lib = lib
        self.names: List[str] = []

    def __getattr__(self, name: str) -> Any:
        if name.startswith("cuabi_"):
            self.names.append(name)
        return getattr(self._lib, name)


def check(name: str, fn: Callable[[], None]) -> None:
    fn()
    print(f"ok {name}", flush=True)


def main(backend_name: str, fake_path: str) -> None:
    fake = ctypes.CDLL(fake_path)
    fake.fake_live_resources.restype = ctypes.c_long
    fake.fake_calls.restype = ctypes.c_long
    fake.fake_fail_entry.argtypes = [ctypes.c_char_p, ctypes.c_long, ctypes.c_int, ctypes.c_int]
    b = cuabi.load_backend(backend_name)
    dev = cuabi.Device(0, backend=b)
    cache = dev.buffer_cache
    assert cache is cuabi.Device(0, backend=b).buffer_cache, "one cache per device"
    assert isinstance(cache, cuabi.BufferCache)
    s = dev.create_stream()
    t = dev.create_stream()
    # The first cached allocation makes the cache's released handle once
    # (a wrapped buffer, released at once): not counted below.
    dev.alloc(1, stream=s).free(s)
    cache.trim()
    baseline = fake.fake_live_resources()

    def counted(fn: Callable[[], Any]) -> List[str]:
        real = b.lib
        counting = Counting(real)
        b.lib = counting
        try:
            fn()
        finally:
            b.lib = real
        return counting.names

    def one_call_per_miss_none_per_hit() -> None:
        cache.trim()
        hits, misses = cache.hits, cache.misses
        got: Dict[str, Any] = {}
        names = counted(lambda: got.update(buf=dev.alloc(256, stream=s)))
        assert names == ["cuabi_buffer_alloc_async_with_pointer"], names
        buf = got["buf"]
        assert buf.kind is cuabi.BufferKind.STREAM_ORDERED and buf.nbytes == 256
        assert buf.shape == (256,) and buf.ptr != 0
        ptr = buf.ptr
        assert counted(lambda: buf.free(s)) == []
        assert buf.closed and cache.blocks == 1 and cache.held_bytes == 256
        fake.fake_reset()
        before = fake.fake_calls()
        names = counted(lambda: got.update(again=dev.alloc(256, stream=s)))
        assert names == [], names
        assert fake.fake_calls() == before, "a hit reached the driver"
        again = got["again"]
        assert again.ptr == ptr and not again.closed and cache.blocks == 0
        assert (cache.hits, cache.misses) == (hits + 1, misses + 1)
        # The block is the library's buffer still: copies work on it.
        again.copy_from_host(np.arange(64, dtype=np.float32))
        assert (again.copy_to_host(np.empty(64, np.float32)) == np.arange(64)).all()
        again.free(s)

    def sync_alloc_one_call_each_way() -> None:
        got: Dict[str, Any] = {}
        names = counted(lambda: got.update(buf=dev.alloc(4096)))
        assert names == ["cuabi_buffer_alloc_with_pointer"], names
        buf = got["buf"]
        assert buf.kind is cuabi.BufferKind.DEVICE and buf.nbytes == 4096
        live = fake.fake_live_resources()
        assert counted(buf.close) == ["cuabi_buffer_release"]
        assert fake.fake_live_resources() == live - 1, "cuMemFree ran at close()"
        typed = dev.alloc(64, np.float32, (4, 4))
        assert typed.shape == (4, 4) and typed.dtype == np.float32
        typed.close()

    def exact_size_and_stream() -> None:
        cache.trim()
        a = dev.alloc(512, stream=s)
        pa = a.ptr
        a.free(s)
        other = dev.alloc(256, stream=s)  # another size: a miss
        assert other.ptr != pa and cache.blocks == 1
        on_t = dev.alloc(512, stream=t)  # another stream: a miss
        pt = on_t.ptr
        assert pt != pa and cache.blocks == 1
        on_t.free(t)  # t's list
        back = dev.alloc(512, stream=s)
        assert back.ptr == pa
        # A block allocated on s and freed on t goes to t's list.
        back.free(t)
        x = dev.alloc(512, stream=t)
        y = dev.alloc(512, stream=t)
        assert {x.ptr, y.ptr} == {pa, pt}, "both blocks freed on t come back on t"
        assert dev.alloc(512, stream=s).ptr not in (pa, pt)
        for buf in (other, x, y):
            buf.close()

    def close_and_collection_hand_back() -> None:
        cache.trim()
        buf = dev.alloc(1024, stream=s)
        p = buf.ptr
        assert counted(buf.close) == []
        assert dev.alloc(1024, stream=s).ptr == p  # (collected at once: back again)
        gc.collect()
        assert cache.by_stream() == {b.handle_int(s.handle): (1, 1024)}
        dropped = dev.alloc(1024, stream=s)
        assert dropped.ptr == p
        del dropped
        assert cache.blocks == 1, "a collected buffer goes back on its stream"

    def freed_object_stays_dead() -> None:
        buf = dev.alloc(64, stream=s)
        buf.free(s)
        for call in (
            lambda: buf.free(s),
            lambda: buf.memset(0),
            lambda: buf.copy_to_host(np.empty(64, np.uint8)),
        ):
            try:
                call()
            except cuabi.InvalidHandleError as exc:
                assert "is not a live cuabi_buffer" in str(exc), exc
            else:
                raise AssertionError("a freed buffer's call reached a live block")
        try:
            buf.ptr
        except cuabi.InvalidHandleError:
            pass
        else:
            raise AssertionError("a freed buffer answered its address")
        buf.close()  # nothing more
        nxt = dev.alloc(64, stream=s)
        assert not nxt.closed
        nxt.memset(5, stream=s)
        assert (nxt.copy_to_host(np.empty(64, np.uint8), stream=s) == 5).all()
        nxt.free(s)

    def views_defer_and_lending_bypasses() -> None:
        cache.trim()
        buf = dev.alloc(256, stream=s)
        view = buf.as_array(np.float32)
        try:
            buf.free(s)
        except cuabi.InvalidArgumentError as exc:
            assert "live view" in str(exc)
        else:
            raise AssertionError("free() with a live view")
        assert not buf.closed
        buf.close()  # deferred until the view goes
        assert cache.blocks == 0 and not buf.closed
        del view
        assert buf.closed and cache.blocks == 1
        cache.trim()
        # A copy from a buffer keeps neither: both may still be cached.
        src = dev.alloc(256, stream=s)
        dst = dev.alloc(256, stream=s)
        dst.copy_from(src)
        src.free(s)
        assert cache.blocks == 1
        # Given to a call that may keep it (here the generated copy, which
        # takes it as another object's argument): freed through the library.
        lent = dev.alloc(300, stream=s)
        dst.copy(0, lent, 0, 256)
        live = fake.fake_live_resources()
        names = counted(lambda: lent.free(s))
        assert names == ["cuabi_buffer_free_async"], names
        assert cache.blocks == 1 and fake.fake_live_resources() == live - 1
        dst.free(s)

    def stats_and_trim() -> None:
        cache.trim()
        bufs = [dev.alloc(128, stream=s) for _ in range(3)] + [dev.alloc(4096, stream=t)]
        for buf in bufs[:3]:
            buf.free(s)
        bufs[3].free(t)
        assert cache.blocks == 4 and cache.held_bytes == 3 * 128 + 4096
        assert cache.by_stream() == {
            b.handle_int(s.handle): (3, 384),
            b.handle_int(t.handle): (1, 4096),
        }
        assert "4 blocks" in repr(cache)
        live = fake.fake_live_resources()
        assert cache.trim(t) == 4096 and cache.blocks == 3
        assert fake.fake_live_resources() == live - 1
        assert cache.trim() == 384 and cache.blocks == 0 and cache.held_bytes == 0
        assert fake.fake_live_resources() == live - 4

    def closing_a_stream_frees_its_blocks() -> None:
        cache.trim()
        u = dev.create_stream()
        dev.alloc(2048, stream=u).free(u)
        dev.alloc(2048, stream=s).free(s)
        live = fake.fake_live_resources()
        u.close()
        assert cache.blocks == 1, "the closed stream's block is freed, the other stays"
        assert fake.fake_live_resources() == live - 2  # its block and the stream itself
        try:
            dev.alloc(2048, stream=u)
        except cuabi.InvalidHandleError as exc:
            assert "stream is not a live cuabi_stream" in str(exc)
        else:
            raise AssertionError("an allocation on a closed stream")
        # A buffer whose allocation stream closed: close() frees it through
        # the library (the core keeps that stream for it).
        v = dev.create_stream()
        orphan = dev.alloc(64, stream=v)
        v.close()
        live = fake.fake_live_resources()
        orphan.close()
        # Its block and its stream, which the buffer kept alive in the core.
        assert cache.blocks == 1 and fake.fake_live_resources() == live - 2
        cache.trim()

    def limits_and_switch() -> None:
        cache.trim()
        cache.max_bytes = 1000
        try:
            dev.alloc(600, stream=s).free(s)
            live = fake.fake_live_resources()
            dev.alloc(600, stream=t).free(t)  # past the limit: freed at once
            assert cache.blocks == 1 and fake.fake_live_resources() == live
            cache.max_bytes = 0  # lower: trimmed
            assert cache.blocks == 0
        finally:
            cache.max_bytes = None
        dev.alloc(64, stream=s).free(s)
        cache.enabled = False
        try:
            assert cache.blocks == 0, "turned off, it is trimmed"
            live = fake.fake_live_resources()
            got: Dict[str, Any] = {}
            names = counted(lambda: got.update(buf=dev.alloc(64, stream=s)))
            assert names == ["cuabi_buffer_alloc_async_with_pointer"]
            assert counted(lambda: got["buf"].free(s)) == ["cuabi_buffer_free_async"]
            assert cache.blocks == 0 and fake.fake_live_resources() == live
        finally:
            cache.enabled = True

    def a_reused_block_is_freed_on_its_new_stream() -> None:
        cache.trim()
        buf = dev.alloc(777, stream=s)
        buf.free(t)  # to t's list; the library allocated it on s
        again = dev.alloc(777, stream=t)
        own = dev.alloc(778, stream=t)
        cache.enabled = False
        try:
            # Not kept: freed in order on t, where it was used last, not
            # released (which would free it on s).
            assert counted(again.close) == ["cuabi_buffer_free_async"]
            assert counted(own.close) == ["cuabi_buffer_release"]  # on t, its own
        finally:
            cache.enabled = True

    def out_of_memory_trims_and_retries() -> None:
        cache.trim()
        for _ in range(3):
            dev.alloc(8192, stream=t).free(t)  # one block, reused
        dev.alloc(16384, stream=t).free(t)
        assert cache.blocks == 2
        # The next cuMemAllocAsync fails for lack of memory: the cache is
        # trimmed and the allocation tried again, which succeeds.
        fake.fake_fail_entry(b"cuMemAllocAsync", 1, CUDA_ERROR_OUT_OF_MEMORY, 0)
        buf = dev.alloc(100, stream=s)
        assert cache.blocks == 0 and buf.nbytes == 100
        buf.free(s)
        cache.trim()
        # With nothing to trim, the failure is the caller's.
        fake.fake_fail_entry(b"cuMemAllocAsync", 1, CUDA_ERROR_OUT_OF_MEMORY, 0)
        try:
            dev.alloc(100, stream=s)
        except cuabi.OutOfMemoryError:
            pass
        else:
            raise AssertionError("an allocation failing for lack of memory succeeded")
        # The plain allocation too.
        dev.alloc(4096, stream=s).free(s)
        fake.fake_fail_entry(b"cuMemAlloc", 1, CUDA_ERROR_OUT_OF_MEMORY, 0)
        plain = dev.alloc(50)
        assert cache.blocks == 0 and plain.kind is cuabi.BufferKind.DEVICE
        plain.close()
        fake.fake_reset()

    def captures_bypass_the_cache() -> None:
        cache.trim()
        dev.alloc(4096, stream=s).free(s)
        hits = cache.hits
        with s.capture() as cap:
            assert CAPTURES[0] == 1
            inside = dev.alloc(4096, stream=s)
            assert cache.blocks == 1 and cache.hits == hits, "a cached block entered the graph"
            names = counted(lambda: inside.free(s))
            assert names == ["cuabi_buffer_free_async"], names  # the graph's free node
        assert CAPTURES[0] == 0
        cap.graph.close()
        assert inside._cache is None, "a buffer allocated in a capture is never cached"
        assert dev.alloc(4096, stream=s).ptr != 0 and cache.hits == hits + 1

    def threads_never_share_a_block() -> None:
        cache.trim()
        errors: List[BaseException] = []
        seen_twice: List[int] = []
        held_lock = threading.Lock()
        held: Dict[int, int] = {}

        def work(stream: cuabi.Stream) -> None:
            try:
                for _ in range(300):
                    bufs = [dev.alloc(256, stream=stream) for _ in range(4)]
                    with held_lock:
                        for buf in bufs:
                            if buf.ptr in held:
                                seen_twice.append(buf.ptr)
                            held[buf.ptr] = 1
                    with held_lock:
                        for buf in bufs:
                            del held[buf.ptr]
                    for buf in bufs:
                        buf.free(stream)
            except BaseException as exc:  # noqa: BLE001 - reported below
                errors.append(exc)

        threads = [threading.Thread(target=work, args=(st,)) for st in (s, s, t, t)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        assert not errors, errors
        assert not seen_twice, f"blocks handed out twice: {seen_twice[:4]}"
        assert cache.held_bytes == 256 * cache.blocks

    checks = [
        ("one call per miss, none per hit", one_call_per_miss_none_per_hit),
        ("plain allocation: one call each way", sync_alloc_one_call_each_way),
        ("reuse by exact size and by stream", exact_size_and_stream),
        ("close() and collection hand the block back", close_and_collection_hand_back),
        ("a freed object stays dead", freed_object_stays_dead),
        ("views defer, lending bypasses", views_defer_and_lending_bypasses),
        ("stats and trim", stats_and_trim),
        ("closing a stream frees its blocks", closing_a_stream_frees_its_blocks),
        ("max_bytes and enabled", limits_and_switch),
        ("a reused block is freed on its new stream", a_reused_block_is_freed_on_its_new_stream),
        ("out of memory trims and retries", out_of_memory_trims_and_retries),
        ("captures bypass the cache", captures_bypass_the_cache),
        ("threads never share a block", threads_never_share_a_block),
    ]
    for name, fn in checks:
        check(name, fn)
    cache.trim()
    gc.collect()
    s.synchronize()
    assert fake.fake_live_resources() == baseline, (
        f"the stand-in holds {fake.fake_live_resources() - baseline} more resources"
    )
    print("buffer cache on the stand-in: ok")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
