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
from functools import partial
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


# What sets one element of a batch's array: fill(b, element, index, item, keep).
Fill = Callable[[Backend, Any, int, Any, List[Any]], None]


def _laid_out(ctype: str, fill: Fill, b: Backend, items: Sequence[Any]) -> Tuple[Any, int, List[Any]]:
    """The ``const <ctype>*`` array of ``items``, its count and what keeps it
    (and the host memory it names) alive: each element's ``struct_size``,
    then ``fill(b, element, index, item, keep)``. At least one element, so
    that an empty batch reaches the library's own refusal (count is 0) with
    a valid pointer."""
    arr, _, size = b.struct(ctype, max(len(items), 1))
    keep: List[Any] = [arr, items]
    for i, item in enumerate(items):
        e = arr[i]
        e.struct_size = size
        fill(b, e, i, item, keep)
    return arr, len(items), keep


def _mem_op(b: Backend, e: Any, i: int, op: MemOp, keep: List[Any]) -> None:
    """Element ``i`` of a ``const cuabi_mem_op*`` array."""
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


register_layout("cuabi_mem_op", MemOp, partial(_laid_out, "cuabi_mem_op", _mem_op))


def _copy_op(b: Backend, e: Any, i: int, op: CopyOp, keep: List[Any]) -> None:
    """Element ``i`` of a ``const cuabi_copy_op*`` array (``keep`` keeps the
    host memory it names alive)."""
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


register_layout("cuabi_copy_op", CopyOp, partial(_laid_out, "cuabi_copy_op", _copy_op))


# How cuabi.copy_3d reads one box (its sides, origins, extent, pitches) and
# fills a cuabi_copy_3d_desc: registered by the arrays module, which imports
# this one.
_copy_3d_planner: Optional[Callable[..., Any]] = None


def register_copy_3d_planner(planner: Callable[..., Any]) -> None:
    """Sets what lays out each box of :meth:`Stream.copy_3d_batch`."""
    global _copy_3d_planner
    _copy_3d_planner = planner


def _copy_3d(b: Backend, e: Any, i: int, c: Copy3dOp, keep: List[Any]) -> None:
    """Element ``i`` of a ``const cuabi_copy_3d_desc*`` array, laid out as
    :func:`cuabi.copy_3d` lays out its one (``keep`` keeps the host memory
    it names alive)."""
    if _copy_3d_planner is None:
        raise RuntimeError("cuabi.copy_3d's module is not loaded (import cuabi)")
    _copy_3d_planner(c, None).fill(b, e, keep)  # every field but struct_size


register_layout("cuabi_copy_3d_desc", Copy3dOp, partial(_laid_out, "cuabi_copy_3d_desc", _copy_3d))


def _managed_range(b: Backend, e: Any, i: int, r: ManagedRange, keep: List[Any]) -> None:
    """Element ``i`` of a ``const cuabi_managed_range*`` array."""
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


register_layout(
    "cuabi_managed_range", ManagedRange, partial(_laid_out, "cuabi_managed_range", _managed_range)
)
