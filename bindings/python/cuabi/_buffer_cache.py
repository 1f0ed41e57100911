"""The cache of freed stream-ordered blocks: allocation at pool speed.

``Device.alloc(n, stream=s)`` from the device's default pool answers a block
that an earlier ``free(stream=s)`` (or ``close()``, or collection) of a
buffer of exactly ``n`` bytes handed back on ``s``, without calling the
library. Such a block is still the library's buffer: only the Python object
over it changes. Its reuse is correct by stream order, as the driver's own
pool is: work queued on ``s`` before the free runs before work queued after
the new allocation. A block freed on stream ``t`` goes to ``t``'s list.

What it keeps and why:

* **Exact sizes.** A block is reused only for the same byte count, so the
  core's range checks (copies, fills, views) hold for the size the user
  asked for, never a rounded one. The driver's pool underneath already
  reuses memory between sizes once a block is really freed.
* **The device's default pool only.** A pool made with
  :class:`~cuabi.MemoryPool` is the caller's to account for (its ``usage``
  and ``trim`` see every free at once), so its buffers bypass the cache.
* **Never across a capture.** While a capture begun through
  :class:`~cuabi.Stream` (``capture``, ``begin_capture``,
  ``begin_capture_to_graph``) is under way anywhere in the process, the
  cache is bypassed: an allocation becomes the graph's allocation node and a
  free its free node, as without the cache, and a buffer allocated then is
  never cached. Captures begun by another library on a cuabi stream are not
  seen: turn the cache off around them (``Device.buffer_cache.enabled``).
* **Nothing the core still lends.** A buffer given to a call that keeps it
  (a texture, a tensor map, a graph node, a 3D copy or batch description,
  any call taking it as a non-receiver argument) is freed through the
  library, which waits for those users, never cached.

:class:`BufferCache` (``Device.buffer_cache``) shows what it holds and its
hits, and gives the blocks back with :meth:`BufferCache.trim`. It is trimmed
by itself when an allocation fails for lack of memory (then the allocation
is tried again once), when its stream is closed (the blocks are freed in
order on it first), before ``Device.reset()``, at exit, and when the
default pool is trimmed. ``CUABI_BUFFER_CACHE=0`` in the environment turns
it off for the process.
"""

from __future__ import annotations

import atexit
import os
import threading
from typing import Any, Dict, List, Optional, Tuple

__all__ = ["BufferCache", "cache_for", "CAPTURES"]

# Captures begun through cuabi's Stream and not yet ended, process-wide
# (one cell, read on every allocation and free without a call).
CAPTURES: List[int] = [0]

_ENABLED_BY_DEFAULT = os.environ.get("CUABI_BUFFER_CACHE", "1").strip() not in ("0", "off", "no")

# Every cache made, by (backend, device ordinal).
_caches: Dict[Tuple[int, int], "BufferCache"] = {}
_caches_lock = threading.Lock()


class BufferCache:
    """The freed stream-ordered blocks of one device (and backend), by stream
    and exact size (see the module's description). ``Device.buffer_cache``.

    >>> cache = dev.buffer_cache
    >>> cache.held_bytes, cache.blocks, cache.hits, cache.misses
    >>> cache.trim()          # every block back to the pool, in order on its stream
    >>> cache.trim(stream)    # only those freed on ``stream``
    >>> cache.max_bytes = 1 << 30   # hold at most 1 GiB (None: no limit)
    >>> cache.enabled = False       # bypass it (and trim it) from now on
    """

    def __init__(self, backend: Any, ordinal: int) -> None:
        self._b = backend
        self.ordinal = ordinal
        # (stream handle, bytes) -> [(buffer handle, address, origin), ...]:
        # the stream handle is also the argument that frees the block on it;
        # origin is the handle of the stream the block was allocated on in
        # the library (where its release would free it).
        self._free: Dict[Tuple[Any, int], List[Tuple[Any, int, Any]]] = {}
        self._lock = threading.RLock()  # trims (a collection may run one mid-trim)
        self._on = _ENABLED_BY_DEFAULT
        self._held = 0  # the running byte count, for max_bytes
        self._max: Optional[int] = None
        self.hits = 0
        self.misses = 0
        # A released buffer handle: what a buffer object whose block went
        # back to the cache keeps, so that its later calls answer the core's
        # InvalidHandleError as after any free (made on first use).
        self._dead: Any = None

    def _dead_handle(self, device: Any) -> Any:
        """The released handle (see _dead), made once from ``device``: a
        wrapped buffer the library frees nothing for, released at once.
        None where it cannot be made (the block is then freed through the
        library)."""
        dead = self._dead
        if dead is None:
            b = self._b
            try:
                dead = b.get("cuabi_buffer_wrap", device._handle, 1, 1, out="cuabi_buffer")
            except Exception:
                return None
            b.lib.cuabi_buffer_release(dead)
            self._dead = dead
        return dead

    # -- what it holds -----------------------------------------------------------
    @property
    def enabled(self) -> bool:
        """Whether freed blocks are kept for reuse (settable; turning it off
        trims it)."""
        return self._on

    @enabled.setter
    def enabled(self, on: bool) -> None:
        self._on = bool(on)
        if not on:
            self.trim()

    @property
    def max_bytes(self) -> Optional[int]:
        """The most bytes the cache holds (None: no limit but the device's,
        where a failed allocation trims it); a free past it goes to the pool
        at once. Setting it lower trims the cache."""
        return self._max

    @max_bytes.setter
    def max_bytes(self, limit: Optional[int]) -> None:
        if limit is not None:
            limit = int(limit)
            if limit < 0:
                raise ValueError(f"max_bytes = {limit} is negative")
        self._max = limit
        if limit is not None and self._held > limit:
            self.trim()

    @property
    def held_bytes(self) -> int:
        """The bytes of the blocks held (freed, kept for reuse)."""
        return sum(n for _, n in self.by_stream().values())

    @property
    def blocks(self) -> int:
        """The number of blocks held."""
        return sum(k for k, _ in self.by_stream().values())

    def by_stream(self) -> Dict[int, Tuple[int, int]]:
        """{stream handle (as an int): (blocks, bytes)} of what is held."""
        out: Dict[int, Tuple[int, int]] = {}
        for (stream, size), entries in list(self._free.items()):
            count = len(entries)
            if count:
                key = self._b.handle_int(stream)
                n, total = out.get(key, (0, 0))
                out[key] = (n + count, total + size * count)
        return out

    def __repr__(self) -> str:
        state = "" if self._on else " (off)"
        return (
            f"<cuabi.BufferCache of device {self.ordinal}{state}: {self.blocks} blocks, "
            f"{self.held_bytes} bytes held, {self.hits} hits, {self.misses} misses>"
        )

    # -- taking and giving ---------------------------------------------------------
    # No lock on these two: each list's pop() and append() is atomic, so a
    # block goes to exactly one taker; the running byte count (_held, for
    # max_bytes) is made exact again by every trim. Lists stay in the dict
    # once made (a trim empties them in place), so a block given while a
    # trim runs is never lost.
    def _take(self, stream: Any, nbytes: int) -> Optional[Tuple[Any, int, Any]]:
        """A held block of ``nbytes`` freed on ``stream`` (a handle), or None."""
        entries = self._free.get((stream, nbytes))
        if not entries:
            return None
        try:
            entry = entries.pop()
        except IndexError:  # taken by another thread meanwhile
            return None
        self._held -= nbytes
        self.hits += 1
        return entry

    def _give(self, stream: Any, nbytes: int, handle: Any, ptr: int, origin: Any) -> bool:
        """Keeps a freed block; False when it must be freed through the
        library instead (cache off, over its limit)."""
        if not self._on:
            return False
        limit = self._max
        if limit is not None and self._held + nbytes > limit:
            return False
        entries = self._free.get((stream, nbytes))
        if entries is None:
            entries = self._free.setdefault((stream, nbytes), [])
        entries.append((handle, ptr, origin))
        self._held += nbytes
        return True

    def trim(self, stream: Any = None) -> int:
        """Frees every held block (only those freed on ``stream``, a
        :class:`~cuabi.Stream`, when given) back to the device's pool, each in
        order on the stream it was freed on; answers the bytes given back."""
        if stream is None:
            return self._trim()[0]
        return self._trim(stream._arg(self._b), only=True)[0]

    def _trim(self, stream_key: Any = None, only: bool = False) -> Tuple[int, List[Any]]:
        """(bytes freed, the stream handles they were freed on). ``stream_key``
        None with ``only`` False: every stream; with ``only``, that stream's
        lists are dropped too (its handle is going)."""
        taken: List[Tuple[Any, int, Any]] = []
        with self._lock:
            for key in list(self._free):
                if (stream_key is None and not only) or key[0] == stream_key:
                    entries = self._free[key] if not only else self._free.pop(key)
                    while entries:
                        try:
                            handle = entries.pop()[0]
                        except IndexError:
                            break
                        taken.append((key[0], key[1], handle))
            self._held = sum(size * len(e) for (_, size), e in list(self._free.items()))
        lib = self._b.lib
        freed = 0
        streams: List[Any] = []
        for stream, size, handle in taken:
            if not any(stream is s or stream == s for s in streams):
                streams.append(stream)
            try:
                if lib.cuabi_buffer_free_async(handle, stream):
                    # The stream was refused (closed meanwhile): the release
                    # frees the block in order on its own stream.
                    lib.cuabi_buffer_release(handle)
            except Exception:  # interpreter shutdown
                pass
            freed += size
        return freed, streams

    def _trim_for_memory(self) -> bool:
        """After an allocation failed for lack of memory: frees every held
        block and waits for the streams they were freed on, so the pool can
        hand their memory out again. True when anything was freed."""
        freed, streams = self._trim()
        lib = self._b.lib
        for stream in streams:
            try:
                lib.cuabi_stream_synchronize(stream)
            except Exception:
                pass
        return freed > 0

    def _drop_without_calls(self) -> None:
        """Forgets every block (a forked child, where CUDA cannot be called)."""
        with self._lock:
            self._free.clear()
            self._held = 0


def cache_for(backend: Any, ordinal: int) -> BufferCache:
    """The cache of device ``ordinal`` through ``backend`` (made once)."""
    key = (id(backend), ordinal)
    cache = _caches.get(key)
    if cache is None:
        with _caches_lock:
            cache = _caches.get(key)
            if cache is None:
                cache = _caches[key] = BufferCache(backend, ordinal)
    return cache


def stream_closing(stream: Any) -> None:
    """Frees the blocks held for ``stream`` in order on it, before its handle
    goes (Stream._on_release)."""
    if not _caches:
        return
    b = stream._b
    key = stream._handle
    for cache in list(_caches.values()):
        if cache._b is b and cache._free:
            cache._trim(key, only=True)


def trim_device(backend: Any, ordinal: int) -> None:
    """Frees what the cache of that device holds (before a reset, or when the
    default pool is trimmed)."""
    cache = _caches.get((id(backend), ordinal))
    if cache is not None and cache._free:
        cache._trim()


def _trim_all_at_exit() -> None:
    for cache in list(_caches.values()):
        try:
            cache._trim()
        except Exception:
            pass


def _forget_in_child() -> None:
    for cache in list(_caches.values()):
        cache._drop_without_calls()


atexit.register(_trim_all_at_exit)
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_in_child)
