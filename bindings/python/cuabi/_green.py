"""Green contexts and tensor maps: the public classes over the generated
``SmResourceBase``, ``GreenContextBase`` and ``TensorMapBase``.

What the generated layer cannot know is written here: each object keeps the
:class:`Device` it belongs to (so a green context's streams are ordinary
:class:`Stream` objects for every launch and copy), a split as a list of
groups and its remainder, and a tensor map as a kernel argument (its 128
bytes, by value)."""

from __future__ import annotations

from typing import TYPE_CHECKING, List, Tuple

from ._objects import GreenContextBase, SmResourceBase, TensorMapBase, register_owner

if TYPE_CHECKING:
    from ._device import Device

__all__ = ["SmResource", "GreenContext", "TensorMap", "TENSOR_MAP_BYTES"]

TENSOR_MAP_BYTES = 128  # CUABI_TENSOR_MAP_BYTES


class SmResource(SmResourceBase):
    """A set of a device's SMs (``cuabi_sm_resource``): all of a device's
    (:attr:`Device.sm_resource`), a green context's
    (:attr:`GreenContext.sm_resource`), or one part of a split. It keeps what
    it was made from alive.

    >>> groups, rest = dev.sm_resource.split_groups(2)   # two groups of the least size
    >>> green = groups[0].create_green_context()
    >>> s = green.create_stream()                         # an ordinary Stream
    """

    device: "Device"

    def split_groups(
        self, group_count: int, min_sm_count: int = 0
    ) -> Tuple[List["SmResource"], "SmResource"]:
        """Every group of a split and its remainder, as ``(groups, remainder)``."""
        groups = [self.split(group_count, min_sm_count, i) for i in range(group_count)]
        return groups, self.split(group_count, min_sm_count, group_count)

    def create_green_context(self) -> "GreenContext":
        """A green context on these SMs (cuabi_green_context_create)."""
        return GreenContext(self)

    def _describe(self) -> str:
        return f"{self.sm_count} SMs of device {self.device.ordinal}"


class GreenContext(GreenContextBase):
    """A context whose kernels run on one set of SMs (``cuabi_green_context``).
    Its streams (:meth:`create_stream`) are ordinary :class:`Stream` objects;
    each keeps the context alive, as the context keeps its resource."""

    def __init__(self, resource: SmResource) -> None:
        self._own(GreenContextBase.create(resource))
        self.device = resource.device

    def _describe(self) -> str:
        return f"{self.sm_count} SMs of device {self.device.ordinal}"


class TensorMap(TensorMapBase):
    """A TMA descriptor over a device buffer (``cuabi_tensor_map``), made by
    :meth:`tiled` or :meth:`im2col`, passed to a kernel's ``const
    __grid_constant__ CUtensorMap`` parameter by value: give the map itself
    as the argument. Dimension 0 is the innermost (``shape[0]`` is a row's
    element count); ``strides`` are in bytes with ``strides[0]`` the element
    size. The map keeps its buffer alive."""

    __cuabi_arg_size__ = TENSOR_MAP_BYTES

    @property
    def __cuabi_arg_bytes__(self) -> bytes:
        """The map's 128 bytes, as a kernel argument takes them."""
        return self.bytes


register_owner("cuabi_sm_resource", SmResource)
register_owner("cuabi_green_context", GreenContext)
register_owner("cuabi_tensor_map", TensorMap)
