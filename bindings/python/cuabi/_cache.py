"""The compile cache's folder, as the core finds, counts and clears it
(``cuabi_cache_get_dir``, ``_get_state``, ``_get_usage``,
``cuabi_cache_clear``); ``python -m cuabi`` reports and clears through these.
The folder's rules live in the core alone."""

from __future__ import annotations

from typing import Tuple, Union

from ._api import CacheState
from ._base import resolve_backend
from ._loader import Backend

__all__ = ["CacheState", "cache_dir", "cache_state", "cache_usage", "clear_cache"]

BackendArg = Union[Backend, str, None]


def cache_dir(backend: BackendArg = None) -> str:
    """The cache folder, also while the cache is off or the folder unused;
    :class:`~cuabi.NotFoundError` when there is none (no home folder)."""
    return resolve_backend(backend).get_string("cuabi_cache_get_dir")


def cache_state(backend: BackendArg = None) -> CacheState:
    """Whether compiles use the cache folder now, and if not, why."""
    return CacheState(int(resolve_backend(backend).get("cuabi_cache_get_state")))


def cache_usage(backend: BackendArg = None) -> Tuple[int, int]:
    """(entries, their size in bytes) in the cache folder; (0, 0) when it
    does not exist."""
    entries, size = resolve_backend(backend).get_many(
        "cuabi_cache_get_usage", outs=("uint64_t", "uint64_t")
    )
    return int(entries), int(size)


def clear_cache(backend: BackendArg = None) -> Tuple[int, int]:
    """Removes every entry (and unfinished write) of the cache folder;
    returns (entries removed, their size in bytes). A folder compiles do not
    use (owned or writable by others), one that cannot be read, or a file
    that cannot be removed raises :class:`~cuabi.FileIOError` naming it."""
    entries, size = resolve_backend(backend).get_many(
        "cuabi_cache_clear", outs=("uint64_t", "uint64_t")
    )
    return int(entries), int(size)
