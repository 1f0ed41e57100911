"""Batches: stream memory operations, copies, and prefetches and discards of
managed memory, each queued in one call (``Stream.mem_op_batch``,
``Stream.copy_batch``, ``Stream.prefetch_batch``, ``Stream.discard_batch``,
``Stream.discard_and_prefetch_batch``).

The elements are plain values (:class:`MemOp`, :class:`CopyOp`,
:class:`ManagedRange`) naming cuabi objects; this module only lays them out
as the C arrays the calls take. Every check, and the index of the element at
fault in a refusal's message (``ops[412]: ...``), is the library's."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, List, Optional, Sequence, Tuple, Union

from ._api import MemOpKind, WaitCondition
from ._base import check_size
from ._hostmem import host_address
from ._loader import Backend
from ._objects import BufferBase, HostBufferBase, register_layout

__all__ = ["MemOp", "CopyOp", "Copy3dOp", "ManagedRange"]


@dataclass
class MemOp:
    """One write or wait of :meth:`Stream.mem_op_batch`: the ``width``-byte
    word (4 or 8) at ``offset`` of ``buffer``, a device buffer or pinned host
    memory (a :class:`PinnedBuffer`). Make one with :meth:`write` or
    :meth:`wait`."""

    kind: int
    buffer: Any
    offset: int = 0
    value: int = 0
    width: int = 4
    condition: int = int(WaitCondition.GEQ)
    flags: int = 0

    @classmethod
    def write(cls, buffer: Any, offset: int, value: int, width: int = 4, flags: int = 0) -> "MemOp":
        """Writes ``value`` to the word (``Stream.write_value``)."""
        return cls(int(MemOpKind.WRITE), buffer, offset, value, width, int(WaitCondition.GEQ), flags)

    @classmethod
    def wait(
        cls,
        buffer: Any,
        offset: int,
        value: int,
        width: int = 4,
        condition: int = int(WaitCondition.GEQ),
        flags: int = 0,
    ) -> "MemOp":
        """Holds the stream's later work until the word meets ``condition``
        (a :class:`WaitCondition`) against ``value`` (``Stream.wait_value``)."""
        return cls(int(MemOpKind.WAIT), buffer, offset, value, width, int(condition), flags)


@dataclass
class CopyOp:
    """One copy of :meth:`Stream.copy_batch`: ``nbytes`` bytes from ``src``
    at ``src_offset`` to ``dst`` at ``dst_offset``. Each end is a device
    buffer, a :class:`PinnedBuffer`, or host memory (a NumPy array,
    bytearray, memoryview ...), which must stay alive and untouched until
    the stream reaches the copy."""

    dst: Any
    src: Any
    nbytes: int
    dst_offset: int = 0
    src_offset: int = 0


@dataclass
class Copy3dOp:
    """One box of :meth:`Stream.copy_3d_batch`: the arguments of
    :func:`cuabi.copy_3d` as a value. Each side is a NumPy array (host
    memory, which must stay alive and untouched until the stream reaches the
    copy), a :class:`DeviceBuffer` (pitched or not) or an :class:`Array`;
    ``extent = (width_bytes, height, depth)`` and the origins ``(x_bytes, y,
    z)`` as copy_3d takes them."""

    dst: Any
    src: Any
    extent: Optional[Union[int, Sequence[int]]] = None
    dst_origin: Union[int, Sequence[int]] = (0, 0, 0)
    src_origin: Union[int, Sequence[int]] = (0, 0, 0)
    dst_pitch: int = 0
    dst_height: int = 0
    src_pitch: int = 0
    src_height: int = 0


@dataclass
class ManagedRange:
    """A range of a managed buffer for :meth:`Stream.prefetch_batch` and the
    discards: ``nbytes`` (default: to the buffer's end) from ``offset``."""

    buffer: Any
    offset: int = 0
    nbytes: Optional[int] = None


def _handle(obj: Any, base: Any, b: Backend) -> Any:
    return obj._arg(b) if isinstance(obj, base) else b.NULL


def _array(b: Backend, ctype: str, count: int) -> Tuple[Any, int]:
    # At least one element, so that an empty batch reaches the library's
    # own refusal (count is 0) with a valid pointer.
    arr, _, size = b.struct(ctype, max(count, 1))
    return arr, size


def mem_op_array(b: Backend, ops: Sequence[MemOp]) -> Tuple[Any, int, List[Any]]:
    """The ``const cuabi_mem_op*`` array of ``ops``, its count and what keeps
    it alive."""
    arr, size = _array(b, "cuabi_mem_op", len(ops))
    keep: List[Any] = [arr, ops]
    for i, op in enumerate(ops):
        e = arr[i]
        e.struct_size = size
        e.kind = int(op.kind)
        e.width = check_size(op.width, f"ops[{i}].width")
        e.buffer = _handle(op.buffer, BufferBase, b)
        e.host_buffer = _handle(op.buffer, HostBufferBase, b)
        if not isinstance(op.buffer, (BufferBase, HostBufferBase)):
            raise TypeError(
                f"ops[{i}].buffer must be a cuabi.DeviceBuffer or cuabi.PinnedBuffer, "
                f"not {type(op.buffer).__name__}"
            )
        e.offset = check_size(op.offset, f"ops[{i}].offset")
        e.value = check_size(op.value, f"ops[{i}].value")
        e.condition = int(op.condition)
        e.flags = int(op.flags)
    return arr, len(ops), keep


register_layout("cuabi_mem_op", MemOp, mem_op_array)


def copy_op_array(b: Backend, ops: Sequence[CopyOp]) -> Tuple[Any, int, List[Any]]:
    """The ``const cuabi_copy_op*`` array of ``ops``, its count and what
    keeps it (and the host memory it names) alive."""
    arr, size = _array(b, "cuabi_copy_op", len(ops))
    keep: List[Any] = [arr, ops]
    for i, op in enumerate(ops):
        e = arr[i]
        e.struct_size = size
        e.bytes = check_size(op.nbytes, f"ops[{i}].nbytes")
        for end, obj, offset, writable in (
            ("dst", op.dst, op.dst_offset, True),
            ("src", op.src, op.src_offset, False),
        ):
            setattr(e, end + "_offset", check_size(offset, f"ops[{i}].{end}_offset"))
            if isinstance(obj, BufferBase):
                setattr(e, end + "_buffer", obj._arg(b))
            elif isinstance(obj, HostBufferBase):
                setattr(e, end + "_host_buffer", obj._arg(b))
            elif obj is not None:
                address, _, alive = host_address(obj, writable)
                keep.append(alive)
                setattr(e, end + "_host", b.pointer(address))
    return arr, len(ops), keep


register_layout("cuabi_copy_op", CopyOp, copy_op_array)


# How cuabi.copy_3d reads one box (its sides, origins, extent, pitches) and
# fills a cuabi_copy_3d_desc: registered by the arrays module, which imports
# this one.
_copy_3d_planner: Optional[Callable[..., Any]] = None


def register_copy_3d_planner(planner: Callable[..., Any]) -> None:
    """Sets what lays out each box of :meth:`Stream.copy_3d_batch`."""
    global _copy_3d_planner
    _copy_3d_planner = planner


def copy_3d_array(b: Backend, copies: Sequence[Copy3dOp]) -> Tuple[Any, int, List[Any]]:
    """The ``const cuabi_copy_3d_desc*`` array of ``copies``, each element
    laid out as :func:`cuabi.copy_3d` lays out its one, its count and what
    keeps it (and the host memory it names) alive."""
    if _copy_3d_planner is None:
        raise RuntimeError("cuabi.copy_3d's module is not loaded (import cuabi)")
    arr, size = _array(b, "cuabi_copy_3d_desc", len(copies))
    keep: List[Any] = [arr, copies]
    for i, c in enumerate(copies):
        plan = _copy_3d_planner(c, None)
        e = arr[i]
        e.struct_size = size  # every other field is set by fill
        plan.fill(b, e, keep)
    return arr, len(copies), keep


register_layout("cuabi_copy_3d_desc", Copy3dOp, copy_3d_array)


def managed_range_array(b: Backend, ranges: Sequence[ManagedRange]) -> Tuple[Any, int, List[Any]]:
    """The ``const cuabi_managed_range*`` array of ``ranges``, its count and
    what keeps it alive."""
    arr, size = _array(b, "cuabi_managed_range", len(ranges))
    keep: List[Any] = [arr, ranges]
    for i, r in enumerate(ranges):
        e = arr[i]
        e.struct_size = size
        if not isinstance(r.buffer, BufferBase):
            raise TypeError(
                f"ranges[{i}].buffer must be a cuabi.DeviceBuffer, not {type(r.buffer).__name__}"
            )
        e.buffer = r.buffer._arg(b)
        offset = check_size(r.offset, f"ranges[{i}].offset")
        e.offset = offset
        if r.nbytes is None:
            total = int(getattr(r.buffer, "nbytes"))
            e.bytes = total - offset if offset <= total else 0
        else:
            e.bytes = check_size(r.nbytes, f"ranges[{i}].nbytes")
    return arr, len(ranges), keep


register_layout("cuabi_managed_range", ManagedRange, managed_range_array)
