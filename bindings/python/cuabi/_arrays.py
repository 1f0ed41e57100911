"""CUDA arrays, texture and surface objects, and copies of boxes in two and
three dimensions (with pitches) between host arrays, device buffers and
CUDA arrays."""

from __future__ import annotations

import sys
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Sequence, Tuple, Union

from ._api import ArrayFlag, ArrayFormat
from ._objects import ArrayBase, SurfaceBase, TextureBase, register_owner
from ._batch import Copy3dOp, register_copy_3d_planner
from ._base import Resource, check_size, check_u32
from ._loader import Backend, get_backend
from ._memory import DeviceArray, DeviceBuffer, _numpy, device_arg
from ._packing import register_pointer_type
from ._stream import Stream, call_ordered
from .errors import InvalidHandleError, OutOfRangeError

if TYPE_CHECKING:
    from ._device import Device

__all__ = ["Array", "Texture", "Surface", "copy_3d", "array_format"]

# The NumPy dtype of one channel of each array format, from its name (U8:
# uint8, S16: int16, F32: float32 ...).
_KINDS = {"U": "uint", "S": "int", "F": "float"}
_FORMAT_DTYPES: Dict[ArrayFormat, str] = {f: _KINDS[f.name[0]] + f.name[1:] for f in ArrayFormat}


def array_format(value: Any) -> ArrayFormat:
    """The ``cuabi_array_format`` of a cuabi.ArrayFormat (or its value), or of
    a NumPy dtype (``np.float32``, ``"uint8"`` ...) of one channel."""
    if isinstance(value, ArrayFormat):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        try:
            return ArrayFormat(value)
        except ValueError:
            raise ValueError(f"no array format has the value {value}") from None
    np = _numpy()
    try:
        dt = np.dtype(value)
    except TypeError:
        raise TypeError(
            f"dtype must be a NumPy dtype or a cuabi.ArrayFormat, not {type(value).__name__}"
        ) from None
    for fmt, name in _FORMAT_DTYPES.items():
        if dt == np.dtype(name):
            return fmt
    raise ValueError(
        f"no array format holds {dt}; use one of {', '.join(_FORMAT_DTYPES.values())}"
    )


def _format_dtype(fmt: ArrayFormat) -> Any:
    return _numpy().dtype(_FORMAT_DTYPES[fmt])


def _ints(value: Any, what: str) -> Tuple[int, ...]:
    """A shape, extent or origin: an int or a sequence of ints."""
    if isinstance(value, (str, bytes)):
        raise TypeError(f"{what} must be an int or a tuple of ints, not {type(value).__name__}")
    items = (value,) if hasattr(value, "__index__") else value
    try:
        items = tuple(items)
    except TypeError:
        raise TypeError(
            f"{what} must be an int or a tuple of ints, not {type(value).__name__}"
        ) from None
    out = []
    for i, item in enumerate(items):
        if isinstance(item, bool) or not hasattr(item, "__index__"):
            raise TypeError(f"{what}[{i}] must be an int, not {type(item).__name__}")
        out.append(check_size(item, f"{what}[{i}]"))
    return tuple(out)


def _xyz(value: Any, what: str, fill: int) -> Tuple[int, int, int]:
    """(x, y, z) from 1 to 3 ints in CUDA's order, the missing ones ``fill``."""
    dims = _ints(value, what)
    if not 1 <= len(dims) <= 3:
        raise ValueError(f"{what} must have 1 to 3 items (x, y, z), not {len(dims)}")
    full = dims + (fill,) * (3 - len(dims))
    return full[0], full[1], full[2]


# ---------------------------------------------------------------------------
# Arrays
# ---------------------------------------------------------------------------


class Array(ArrayBase):
    """A CUDA array (``cuabi_array``): 1D, 2D, 3D, layered or cubemap memory
    laid out for textures and surfaces.

    >>> arr = Array(dev, (height, width), np.float32)               # 2D
    >>> arr = Array(dev, (depth, height, width), "float32")         # 3D
    >>> arr = Array(dev, (layers, height, width), np.float32, layered=True)
    >>> arr = Array(dev, (6, size, size), np.float32, cubemap=True)  # texCubemap
    >>> arr = Array(dev, (h, w), np.uint8, channels=4, surface=True)
    >>> arr.copy_from(host); host2 = arr.copy_to()

    ``shape`` is in NumPy's order (an int for 1D). Each element is
    ``channels`` (1, 2 or 4) values of ``dtype`` (a NumPy dtype of 8, 16 or
    32-bit integers, float16 or float32, or a cuabi.ArrayFormat); a host
    array for it has the shape ``host_shape`` (the channels last when more
    than one) and that dtype. ``surface=True`` lets :class:`Surface` objects
    read and write it, ``gather=True`` texture gather (2D only).
    ``cubemap=True`` makes a cubemap, read with ``texCubemap``: six square
    faces, shape ``(6, size, size)`` with the faces in the order +X, -X,
    +Y, -Y, +Z, -Z; with ``layered=True`` too, ``(6 * cubemaps, size,
    size)``, read with ``texCubemapLayered``. The core checks the shape
    (square faces, a depth of 6 or a multiple of 6 when layered) and the
    extent against the device's limits."""

    def __init__(
        self,
        device: "Device",
        shape: Union[int, Sequence[int]],
        dtype: Any = "float32",
        channels: int = 1,
        *,
        layered: bool = False,
        surface: bool = False,
        gather: bool = False,
        cubemap: bool = False,
    ) -> None:
        dev = device_arg(device)
        fmt = array_format(dtype)
        dims = _ints(shape, "shape")
        if layered and len(dims) not in (2, 3):
            raise ValueError(
                "a layered array's shape is (layers, width) or (layers, height, width), "
                f"not {dims}"
            )
        if not 1 <= len(dims) <= 3:
            raise ValueError(
                "an array's shape is (width,), (height, width) or "
                f"(depth, height, width), not {dims}"
            )
        # (width, height, depth) from NumPy's order, 0 for the missing ones;
        # a layered array's layers (its first axis) are its depth.
        rest = dims[1:] if layered else dims
        width, height, depth = rest[::-1] + (0,) * (3 - len(dims)) + (dims[:1] if layered else ())
        flags = ArrayFlag(0)
        for on, flag in (
            (layered, ArrayFlag.LAYERED),
            (surface, ArrayFlag.SURFACE_LOAD_STORE),
            (gather, ArrayFlag.TEXTURE_GATHER),
            (cubemap, ArrayFlag.CUBEMAP),
        ):
            if on:
                flags |= flag
        nchannels = check_u32(channels, "channels")
        self._own(ArrayBase.create(
            dev, width=width, height=height, depth=depth, format=fmt, channels=nchannels,
            flags=flags,
        ))
        self.device = dev
        self.shape = dims
        self.format = fmt
        self.channels = nchannels
        self.layered = bool(layered)
        self.flags = flags
        self._extent = (width, height, depth)
        # Read once, as the shape is: copies count the widths in it.
        self._element_size = self.element_size

    @property
    def dtype(self) -> Any:
        """The NumPy dtype of one channel."""
        return _format_dtype(self.format)

    @property
    def host_shape(self) -> Tuple[int, ...]:
        """The shape of a host array holding the whole array: ``shape``, and
        the channels last when there are more than one."""
        return self.shape + ((self.channels,) if self.channels > 1 else ())

    @property
    def extent(self) -> Tuple[int, int, int]:
        """(width, height, depth) as the core has them: elements, rows (0
        for 1D), slices or layers (0 for 1D and 2D)."""
        return self._extent

    def describe(self) -> Dict[str, int]:
        """The array's description as the core holds it (``cuabi_array_get_desc``):
        width, height, depth, format, channels and flags, as ints (:attr:`desc`
        is the same as a :class:`cuabi.ArrayDesc`)."""
        return {name: int(value) for name, value in asdict(self.desc).items()}

    def _box(self) -> Tuple[int, int, int]:
        """The whole array as a copy box: (width in bytes, rows, slices)."""
        width, height, depth = self._extent
        return width * self.element_size, max(height, 1), max(depth, 1)

    def _check_host(self, arr: Any, what: str) -> None:
        """The host side is the binding's to check: the core sees only its address."""
        if arr.dtype != self.dtype:
            raise ValueError(
                f"{what} has dtype {arr.dtype}, but the array's elements are {self.dtype}"
            )
        if tuple(arr.shape) != self.host_shape:
            raise ValueError(
                f"{what} has shape {tuple(arr.shape)}, but the array's is {self.host_shape}"
            )

    def copy_from(self, src: Any, stream: Optional[Stream] = None) -> None:
        """Fills the whole array from ``src``: a NumPy array of
        :attr:`host_shape` and :attr:`dtype` (rows may be strided), a
        :class:`DeviceBuffer` (rows ``pitch`` bytes apart when it is pitched,
        else packed) or another Array of the same extent. Asynchronous on
        ``stream`` if given (then ``src`` must stay alive until the stream
        reaches the copy)."""
        np = _numpy()
        if isinstance(src, np.ndarray):
            self._check_host(src, "src")
        copy_3d(self, src, self._box(), stream=stream, _row_axes=self._row_axes())

    def copy_to(self, dst: Any = None, stream: Optional[Stream] = None) -> Any:
        """Copies the whole array into ``dst`` (a writable NumPy array of
        :attr:`host_shape` and :attr:`dtype`, a DeviceBuffer or an Array)
        and returns it; a new NumPy array when ``dst`` is None. With
        ``stream``, the copy is asynchronous: synchronize before reading."""
        np = _numpy()
        if dst is None:
            dst = np.empty(self.host_shape, self.dtype)
        elif isinstance(dst, np.ndarray):
            self._check_host(dst, "dst")
        copy_3d(dst, self, self._box(), stream=stream, _row_axes=self._row_axes())
        return dst

    def _row_axes(self) -> int:
        return 2 if self.channels > 1 else 1

    def _describe(self) -> str:
        layered = "layered " if self.layered else ""
        if ArrayFlag.CUBEMAP in self.flags:
            layered += "cubemap "
        return f"{layered}shape={self.shape} dtype={self.dtype} channels={self.channels}"


# ---------------------------------------------------------------------------
# Texture and surface objects
# ---------------------------------------------------------------------------


class _ObjectValue(Resource):
    """A texture or surface object: its 64-bit value passes, by value, as a
    kernel argument (8 bytes: ``cudaTextureObject_t``,
    ``cudaSurfaceObject_t``), in every launch form."""

    _value: Optional[int] = None
    _what = "object"

    def _on_release(self) -> None:
        # A kernel argument packs _value without a call (see _packing); None
        # makes that fail, and the general rules then raise through __cuabi_ptr__.
        self._value = None

    @property
    def __cuabi_ptr__(self) -> int:  # what a kernel argument passes
        value = self._value
        if self._closed or value is None:
            raise InvalidHandleError(f"the {self._what} was closed; its value is no longer valid")
        return value


class Texture(_ObjectValue, TextureBase):
    """A texture object (``cuabi_texture``) over an :class:`Array` or a
    :class:`DeviceBuffer`. Pass it to a kernel as it is: its 64-bit value
    is the ``cudaTextureObject_t`` parameter.

    >>> tex = Texture(arr, normalized_coords=True, filter_mode="linear")
    >>> tex = Texture(buf, dtype=np.float32)              # linear: tex1Dfetch
    >>> tex = Texture(pitched_buf, dtype=np.float32)      # rows by pitch: tex2D
    >>> kernel(grid, block, (tex, out, n))

    Over a buffer, the elements are ``channels`` values of ``dtype`` (default:
    the buffer's dtype, else float32), read from byte ``offset`` (a multiple
    of the device's texture alignment) as ``width`` elements (default: as
    many as fit), or, for a pitched buffer or with ``height``, as ``height``
    rows of ``width`` elements ``pitch`` bytes apart (default: the buffer's
    rows and pitch).

    ``address_mode`` ("clamp", "border", "wrap", "mirror"; one for every
    dimension, or a tuple (x, y, z)), ``filter_mode`` ("point", "linear"),
    ``read_mode`` ("element_type", "normalized_float"),
    ``normalized_coords`` and ``border_color`` (r, g, b, a) take the
    cuabi.AddressMode, FilterMode and ReadMode members too. The core checks
    the combination (wrap and mirror need normalised coordinates, linear
    filtering needs float reads, the range must lie inside the buffer).

    The texture keeps its source alive (``.source``)."""

    _what = "texture"

    def __init__(
        self,
        source: Union[Array, DeviceBuffer],
        *,
        address_mode: Any = "clamp",
        filter_mode: Any = "point",
        read_mode: Any = "element_type",
        normalized_coords: bool = False,
        border_color: Sequence[float] = (0.0, 0.0, 0.0, 0.0),
        dtype: Any = None,
        channels: Optional[int] = None,
        width: Optional[int] = None,
        height: Optional[int] = None,
        pitch: Optional[int] = None,
        offset: int = 0,
    ) -> None:
        if isinstance(source, DeviceArray):  # a typed view: its dtype, its buffer
            if dtype is None:
                dtype = source.dtype
            source = source.buffer
        if not isinstance(source, (Array, DeviceBuffer)):
            raise TypeError(
                "a texture's source must be a cuabi.Array or a cuabi.DeviceBuffer, "
                f"not {type(source).__name__}"
            )
        modes = (
            (address_mode,)
            if isinstance(address_mode, str) or not hasattr(address_mode, "__iter__")
            else tuple(address_mode)
        )
        if not 1 <= len(modes) <= 3:
            raise ValueError(f"address_mode must have 1 to 3 modes (x, y, z), not {len(modes)}")
        modes = modes + (modes[-1],) * (3 - len(modes))
        colour = tuple(border_color)
        if len(colour) != 4:
            raise ValueError(f"border_color must be 4 values (r, g, b, a), not {len(colour)}")
        b = source.backend
        if isinstance(source, Array):
            if dtype is not None or channels is not None:
                raise TypeError(
                    "dtype and channels describe a buffer's elements; an Array has its own"
                )
            # A buffer's range, refused by the core for an array when given.
            fields: Dict[str, Any] = dict(
                array=source._arg(b), offset=offset, width=width, height=height, pitch=pitch
            )
        else:
            fields = self._describe_buffer(b, source, dtype, channels, width, height, pitch, offset)
        fields.update(zip(("address_x", "address_y", "address_z"), modes))
        fields.update(zip(("border_r", "border_g", "border_b", "border_a"), colour))
        self._own(TextureBase.create(
            filter=filter_mode,
            read_mode=read_mode,
            normalized_coords=1 if normalized_coords else 0,
            backend=b,
            **fields,
        ))
        self.source = source  # kept alive with the texture, as the core keeps it
        self.device = source.device
        try:
            self._value = int(b.get("cuabi_texture_get_handle", self._handle, out="uint64_t"))
        except BaseException:
            self.close()
            raise

    @staticmethod
    def _describe_buffer(
        b: Backend,
        source: DeviceBuffer,
        dtype: Any,
        channels: Optional[int],
        width: Optional[int],
        height: Optional[int],
        pitch: Optional[int],
        offset: int,
    ) -> Dict[str, Any]:
        """fill_texture_desc's fields for a buffer, what is not given derived."""
        if dtype is None:
            fmt = ArrayFormat.F32 if source._dtype is None else array_format(source._dtype)
        else:
            fmt = array_format(dtype)
        nchannels = 1 if channels is None else check_u32(channels, "channels")
        element = int(_format_dtype(fmt).itemsize) * max(nchannels, 1)
        offset = check_size(offset, "offset")
        row_pitch = 0 if pitch is None else check_size(pitch, "pitch")
        rows = None if row_pitch else source._rows  # the buffer's own, unless a pitch is given
        if height is None:
            own_pitch = source.pitch
            if not (row_pitch or own_pitch):
                height = 0
            elif rows is not None:
                height = rows[1]
            else:  # as many rows as fit
                height = max(source.nbytes - offset, 0) // (row_pitch or own_pitch)
        height = check_size(height, "height")
        if width is None:
            if not height:
                width = max(source.nbytes - offset, 0) // element
            elif rows is not None:
                width = rows[0] // element
            else:
                width = (row_pitch or source.pitch) // element
        return dict(buffer=source._arg(b), offset=offset, width=width, height=height,
                    pitch=row_pitch, format=int(fmt), channels=nchannels)

    @property
    def tex_object(self) -> int:
        """The CUtexObject (``cudaTextureObject_t``) value."""
        return self.__cuabi_ptr__

    def _describe(self) -> str:
        return f"0x{self._value or 0:x} of {self.source!r}"


class Surface(_ObjectValue, SurfaceBase):
    """A surface object (``cuabi_surface``) over an :class:`Array` made with
    ``surface=True``: kernels read and write it (``surf2Dread``,
    ``surf2Dwrite``; x in bytes). Pass it to a kernel as it is: its 64-bit
    value is the ``cudaSurfaceObject_t`` parameter. It keeps its array
    alive (``.array``)."""

    _what = "surface"

    def __init__(self, array: Array) -> None:
        if not isinstance(array, Array):
            raise TypeError(f"a surface's array must be a cuabi.Array, not {type(array).__name__}")
        self._own(SurfaceBase.create(array))
        self.array = array
        self.device = array.device
        try:
            self._value = int(self._b.get("cuabi_surface_get_handle", self._handle, out="uint64_t"))
        except BaseException:
            self.close()
            raise

    @property
    def surf_object(self) -> int:
        """The CUsurfObject (``cudaSurfaceObject_t``) value."""
        return self.__cuabi_ptr__

    def _describe(self) -> str:
        return f"0x{self._value or 0:x} of {self.array!r}"


register_pointer_type(Texture, "_value")
register_pointer_type(Surface, "_value")


# ---------------------------------------------------------------------------
# Copies of boxes
# ---------------------------------------------------------------------------


@dataclass
class _Side:
    """One side of a copy: host memory, a buffer or an array."""

    what: str  # "src" or "dst"
    kind: str  # "host", "buffer" or "array"
    obj: Any
    address: int = 0
    # For host memory: the row in bytes, rows, slices, the row pitch, the
    # rows per slice (from the array's shape and strides).
    row_bytes: int = 0
    rows: int = 0
    slices: int = 0
    pitch: int = 0
    slice_rows: int = 0

    def box(self) -> Optional[Tuple[int, int, int]]:
        """What this side holds as a box, when it knows: a host array's
        shape, an Array's extent, a pitched buffer's rows."""
        if self.kind == "host":
            return self.row_bytes, self.rows, self.slices
        if self.kind == "array":
            return self.obj._box()  # type: ignore[no-any-return]
        rows = self.obj._rows
        return None if rows is None else (rows[0], rows[1], 1)


def _host_side(arr: Any, what: str, writable: bool, row_axes: int) -> _Side:
    """The geometry of a NumPy array as one side of a copy: its last axis
    (the last two with ``row_axes`` 2: elements of several channels) is the
    row, which must be contiguous; the axis before it counts rows, the one
    before that slices, and their strides give the pitches."""
    if writable and not arr.flags.writeable:
        raise ValueError(f"{what} is read-only; the copy needs to write into it")
    outer = arr.ndim - row_axes
    if outer < 0 or outer > 2:
        raise ValueError(
            f"{what} has {arr.ndim} dimensions; a copy takes 1 to {2 + row_axes} "
            "(slices, rows, the row" + (", channels)" if row_axes == 2 else ")")
        )
    shape, strides = tuple(arr.shape), tuple(arr.strides)
    step = int(arr.itemsize)
    for axis in range(arr.ndim - 1, outer - 1, -1):
        if shape[axis] != 1 and strides[axis] != step:
            raise ValueError(
                f"{what}'s rows are not contiguous (axis {axis} has a stride of "
                f"{strides[axis]} bytes, not {step}); use numpy.ascontiguousarray"
            )
        step *= shape[axis]
    row_bytes = step
    rows = shape[outer - 1] if outer >= 1 else 1
    slices = shape[outer - 2] if outer >= 2 else 1
    if outer >= 1 and rows > 1:
        pitch = strides[outer - 1]
    elif outer >= 2 and slices > 1:
        pitch = strides[outer - 2]  # one row per slice: the slices are the rows apart
    else:
        pitch = row_bytes
    if pitch < row_bytes:
        raise ValueError(
            f"{what}'s rows are {pitch} bytes apart, less than a row of {row_bytes} bytes "
            "(negative or overlapping strides)"
        )
    slice_rows = rows
    if outer >= 2 and slices > 1 and rows > 1:
        apart = strides[outer - 2]
        if apart <= 0 or apart % pitch or apart // pitch < rows:
            raise ValueError(
                f"{what}'s slices are {apart} bytes apart, not a whole number of its "
                f"{pitch}-byte rows covering its {rows} rows"
            )
        slice_rows = apart // pitch
    elif outer >= 2 and slices > 1:
        slice_rows = 1
    return _Side(
        what,
        "host",
        arr,
        int(arr.ctypes.data),
        row_bytes,
        rows,
        slices,
        pitch,
        slice_rows,
    )


def _side(obj: Any, what: str, writable: bool, row_axes: Optional[int]) -> _Side:
    if isinstance(obj, DeviceArray):
        obj = obj.buffer
    if isinstance(obj, DeviceBuffer):
        return _Side(what, "buffer", obj)
    if isinstance(obj, Array):
        return _Side(what, "array", obj)
    np = sys.modules.get("numpy")
    if np is not None and not isinstance(obj, np.ndarray) and isinstance(
        getattr(obj, "__array_interface__", None), dict
    ):
        obj = np.asarray(obj)
    if np is None or not isinstance(obj, np.ndarray):
        raise TypeError(
            f"{what} must be a NumPy array, a cuabi.DeviceBuffer or a cuabi.Array, "
            f"not {type(obj).__name__}"
        )
    if row_axes is None:
        row_axes = 2 if obj.ndim == 4 else 1
    return _host_side(obj, what, writable, row_axes)


def _check_host_box(
    side: _Side, origin: Tuple[int, int, int], extent: Tuple[int, int, int]
) -> None:
    """Host memory has no size the core could check: the box must lie inside
    the NumPy array, checked here as the core checks the other sides."""
    have = (side.row_bytes, side.rows, side.slices)
    units = ("bytes", "rows", "slices")
    for axis, start, length, limit, unit in zip("xyz", origin, extent, have, units):
        if start + length > limit:
            held = f"rows of {limit} bytes" if axis == "x" else f"{limit} {unit}"
            raise OutOfRangeError(
                f"copy_3d: the {side.what} box's {axis} range {start} + {length} "
                f"{unit} is past the end of the host array ({held})"
            )


def copy_3d(
    dst: Any,
    src: Any,
    extent: Optional[Union[int, Sequence[int]]] = None,
    *,
    dst_origin: Union[int, Sequence[int]] = (0, 0, 0),
    src_origin: Union[int, Sequence[int]] = (0, 0, 0),
    dst_pitch: int = 0,
    dst_height: int = 0,
    src_pitch: int = 0,
    src_height: int = 0,
    stream: Optional[Stream] = None,
    _row_axes: Optional[int] = None,
) -> None:
    """Copies a box of ``extent = (width_bytes, height, depth)`` from ``src``
    at ``src_origin = (x_bytes, y, z)`` to ``dst`` at ``dst_origin``
    (``cuabi_copy_3d``; asynchronous on ``stream`` if given, and then host
    memory must stay alive until the stream reaches the copy). Extents and
    origins are in CUDA's order (x first, x in bytes, on every side); a
    shorter tuple leaves height and depth 1, origins 0. Rows and slices
    count from 0.

    Each side is one of:

    * a NumPy array (host memory): its last axis is a row, which must be
      contiguous; the axes before it are rows and slices, and its strides
      give the pitches, so a slice of a larger array works as it is
      (``big[:, :w]``). A 4-D array is (slices, rows, row, channels). The
      box must lie inside it.
    * a :class:`DeviceBuffer`: rows ``pitch`` bytes apart (a pitched
      buffer's own, else ``*_pitch``, else the box's row) and slices
      ``*_height`` rows apart (0: the box's height).
    * an :class:`Array` (x in bytes of whole elements).

    Without ``extent``, the box is the whole of a host side (the source's
    first), else of an Array side, else of a pitched buffer's rows.

    >>> buf = dev.alloc_pitched(w * 4, h)
    >>> copy_3d(buf, host[:, :w])                  # host rows to pitched rows
    >>> copy_3d(out, buf)                          # and back, out of shape (h, w)
    >>> copy_3d(arr, host, (8 * 4, 2, 1), dst_origin=(4, 1, 0))   # a sub-box

    The core checks every range of the buffers and arrays before the
    driver sees it (OutOfRangeError names the side and the dimension)."""
    op = Copy3dOp(dst, src, extent, dst_origin, src_origin, dst_pitch, dst_height, src_pitch,
                  src_height)
    plan = _Copy3dPlan(op, _row_axes)
    b: Optional[Backend] = plan.backend()
    if b is None:
        b = stream.backend if isinstance(stream, Stream) else get_backend()
    arg, desc, size = b.struct("cuabi_copy_3d_desc")
    b.call("cuabi_copy_3d_desc_init", arg, size)
    keep: List[Any] = []
    plan.fill(b, desc, keep)
    call_ordered(b, "cuabi_copy_3d", stream, arg)
    del keep


class _Copy3dPlan:
    """One box copy's sides, origins, extent and pitches as copy_3d reads
    them (the host side checked against its NumPy array), ready to fill a
    ``cuabi_copy_3d_desc``: copy_3d's and Stream.copy_3d_batch's."""

    def __init__(self, op: Copy3dOp, row_axes: Optional[int]) -> None:
        s = _side(op.src, "src", False, row_axes)
        d = _side(op.dst, "dst", True, row_axes)
        src_at = _xyz(op.src_origin, "src_origin", 0)
        dst_at = _xyz(op.dst_origin, "dst_origin", 0)
        if op.extent is None:
            box = None
            for kind in ("host", "array", "buffer"):
                for side in (s, d):
                    if box is None and side.kind == kind:
                        box = side.box()
            if box is None:
                raise ValueError(
                    "copy_3d needs an extent (width_bytes, height, depth): neither side "
                    "is a host array, an Array or a pitched buffer that gives one"
                )
        else:
            box = _xyz(op.extent, "extent", 1)
        box = (box[0], max(box[1], 1), max(box[2], 1))  # 0 counts as 1, as in the core
        pitches = {"src": (op.src_pitch, op.src_height), "dst": (op.dst_pitch, op.dst_height)}
        for side, at in ((s, src_at), (d, dst_at)):
            pitch, height = pitches[side.what]
            if side.kind == "host":
                if pitch or height:
                    raise ValueError(
                        f"{side.what}_pitch and {side.what}_height describe a buffer; a host "
                        "array's strides give its pitches"
                    )
                _check_host_box(side, at, box)
        self.sides = ((s, src_at), (d, dst_at))
        self.box = box
        self.pitches = pitches

    def backend(self) -> Optional[Backend]:
        """The backend of the first device side, destination first."""
        for side, _ in reversed(self.sides):
            if side.kind != "host":
                return side.obj.backend  # type: ignore[no-any-return]
        return None

    def fill(self, b: Backend, desc: Any, keep: List[Any]) -> None:
        """Fills ``desc`` (a cuabi_copy_3d_desc with its defaults); what the
        call needs alive goes into ``keep``."""
        for side, at in self.sides:
            p = side.what
            pitch, height = self.pitches[p]
            if side.kind == "host":
                setattr(desc, f"{p}_host", b.pointer(side.address))
                keep.append(side.obj)
                pitch, height = side.pitch, side.slice_rows
            else:
                setattr(desc, f"{p}_{side.kind}", side.obj._arg(b))
            setattr(desc, f"{p}_x_bytes", at[0])
            setattr(desc, f"{p}_y", at[1])
            setattr(desc, f"{p}_z", at[2])
            setattr(desc, f"{p}_pitch", check_size(pitch, f"{p}_pitch"))
            setattr(desc, f"{p}_height", check_size(height, f"{p}_height"))
        desc.width_bytes, desc.height, desc.depth = self.box


register_copy_3d_planner(_Copy3dPlan)
register_owner("cuabi_array", Array)
register_owner("cuabi_texture", Texture)
register_owner("cuabi_surface", Surface)
