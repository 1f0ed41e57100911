"""Virtual memory: the public classes over the generated ``PhysicalMemoryBase``
and ``AddressRangeBase``.

The calls themselves (``map``, ``unmap``, ``set_access``, ``export_fd``,
``size``, ``pointer``, ``free``, which closes the object ...) are the
generated layer's; what is written here is what it cannot know: each object
keeps its :class:`Device`, and a view of a range is a :class:`DeviceBuffer`. The growable
buffer is a :class:`DeviceBuffer` too (:meth:`Device.alloc_growable`,
:meth:`DeviceBuffer.grow`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional

from ._hostmem import device_arg
from ._memory import DeviceBuffer, Shape
from ._objects import AddressRangeBase, BufferBase, PhysicalMemoryBase, register_owner

if TYPE_CHECKING:
    from ._device import Device

__all__ = ["PhysicalMemory", "AddressRange"]


class PhysicalMemory(PhysicalMemoryBase):
    """Device memory with no address yet (``cuabi_physical_memory``): map it
    into an :class:`AddressRange` to use it. Its size is a multiple of the
    device's :attr:`Device.vm_granularity` (the minimum).

    >>> mem = cuabi.PhysicalMemory(dev, 8 << 20, exportable=True)
    >>> fd = mem.export_fd()           # to another process, over a Unix socket
    >>> there = cuabi.PhysicalMemory.import_fd(dev, fd, 8 << 20)   # in that process
    """

    def __init__(self, device: "Device", nbytes: int, *, exportable: bool = False) -> None:
        dev = device_arg(device)
        self._own(PhysicalMemoryBase.create(dev, nbytes, exportable))
        self.device = dev

    def _describe(self) -> str:
        return f"{self.size} bytes on device {self.device_ordinal}"


class AddressRange(AddressRangeBase):
    """Reserved device addresses with no memory behind them
    (``cuabi_address_range``): :meth:`map` physical memory into it,
    :meth:`set_access` for other devices, and use it through
    :meth:`buffer`. It keeps what is mapped into it alive.

    >>> r = cuabi.AddressRange(dev, 64 << 20)
    >>> r.map(0, mem)
    >>> r.set_access(0, mem.size, other_dev, cuabi.VmAccess.READWRITE)
    >>> buf = r.buffer(0, mem.size, dtype="float32")   # a DeviceBuffer
    """

    def __init__(self, device: "Device", nbytes: int) -> None:
        dev = device_arg(device)
        self._own(AddressRangeBase.reserve(dev, nbytes))
        self.device = dev

    def buffer(
        self,
        offset: int = 0,
        nbytes: Optional[int] = None,
        *,
        device: Optional["Device"] = None,
        dtype: Any = None,
        shape: Shape = None,
    ) -> DeviceBuffer:
        """A :class:`DeviceBuffer` over ``nbytes`` (None: to the range's end)
        from ``offset``, used by ``device`` (None: the range's), which must
        have access to every byte (``cuabi_buffer_from_range``). The range
        cannot be unmapped while the buffer lives."""
        dev = self.device if device is None else device_arg(device)
        return BufferBase.from_range(self, dev, offset, nbytes)._typed(dtype, shape)

    def _describe(self) -> str:
        return f"0x{self.pointer:x} {self.size} bytes"


register_owner("cuabi_physical_memory", PhysicalMemory)
register_owner("cuabi_address_range", AddressRange)
