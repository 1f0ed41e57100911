"""A consumer of the cuabi package as a new user writes one: mypy --strict
must see every name of cuabi.__all__ (tests/CMakeLists.txt: python_typing_consumer)."""

from __future__ import annotations

from typing import Any, List, Tuple

import cuabi
from cuabi import (
    AccessPolicyWindow,
    AccessProperty,
    AddressMode,
    Array,
    ArrayDesc,
    ArrayFlag,
    ArrayFormat,
    BACKENDS,
    Backend,
    BufferCache,
    BufferKind,
    CacheState,
    CaptureMode,
    CompileError,
    CompileOptions,
    ConditionalType,
    ContextLostError,
    CopyPath,
    CoredumpFlag,
    CudaDriverError,
    CudaError,
    Device,
    DeviceArray,
    DeviceBuffer,
    DriverNotFoundError,
    Event,
    EventFlag,
    FaultedLaunch,
    FileIOError,
    FilterMode,
    ForkedError,
    FunctionAttribute,
    Graph,
    GraphInstantiateFlag,
    GraphNodeType,
    GraphExec,
    Health,
    HostFunctionError,
    InsufficientBufferError,
    InternalError,
    InvalidArgumentError,
    InvalidHandleError,
    Kernel,
    KernelName,
    LOCATION_HOST,
    LaunchConfig,
    LaunchFlag,
    LaunchRecord,
    Library,
    LibraryNotFoundError,
    Limit,
    LinkBackend,
    LinkInput,
    Linker,
    ManagedFlag,
    MemOpFlag,
    MemSyncDomain,
    MemoryAdvice,
    MemoryPool,
    MemoryPoolDesc,
    MemoryPoolFlag,
    PhysicalMemory,
    PhysicalMemoryFlag,
    AddressRange,
    VmAccess,
    Module,
    NameForm,
    NoDeviceError,
    NotFoundError,
    NotReadyError,
    NotSupportedError,
    NvrtcError,
    NvrtcNotFoundError,
    OutOfMemoryError,
    OutOfRangeError,
    PinnedBuffer,
    PreparedLaunch,
    Program,
    ReadMode,
    Stream,
    StreamFlag,
    StubDriverError,
    Surface,
    SyncPolicy,
    GreenContext,
    SmResource,
    ClusterSchedulingPolicy,
    CopyBatchFlag,
    CopyOp,
    Copy3dOp,
    ManagedRange,
    MemOp,
    TENSOR_MAP_BYTES,
    TensorDataType,
    TensorInterleave,
    TensorL2Promotion,
    TensorMap,
    TensorOobFill,
    TensorSwizzle,
    Texture,
    WaitCondition,
    cache_clear,
    from_dlpack,
    cache_dir,
    cache_state,
    cache_usage,
    capi,
    context_lost_message,
    copy_3d,
    coredump_set,
    device_count,
    driver_log_dump,
    driver_log_read,
    driver_path,
    driver_version,
    error_class,
    find_library,
    get_backend,
    init,
    load_backend,
    nvrtc_path,
    nvrtc_version,
    nvtx_mark,
    nvtx_range,
    nvtx_range_end,
    nvtx_range_pop,
    nvtx_range_push,
    nvtx_range_start,
    on_context_lost,
    set_default_backend,
    status_name,
    use_backend,
    version,
    version_string,
)


EXPORTED: List[Any] = [
    AccessPolicyWindow,
    AccessProperty,
    AddressMode,
    Array,
    ArrayDesc,
    ArrayFlag,
    ArrayFormat,
    BACKENDS,
    Backend,
    BufferCache,
    BufferKind,
    CacheState,
    CaptureMode,
    CompileError,
    CompileOptions,
    ConditionalType,
    ContextLostError,
    CopyPath,
    CoredumpFlag,
    CudaDriverError,
    CudaError,
    Device,
    DeviceArray,
    DeviceBuffer,
    DriverNotFoundError,
    Event,
    EventFlag,
    FaultedLaunch,
    FileIOError,
    FilterMode,
    ForkedError,
    FunctionAttribute,
    Graph,
    GraphInstantiateFlag,
    GraphNodeType,
    GraphExec,
    Health,
    HostFunctionError,
    InsufficientBufferError,
    InternalError,
    InvalidArgumentError,
    InvalidHandleError,
    Kernel,
    KernelName,
    LOCATION_HOST,
    LaunchConfig,
    LaunchFlag,
    LaunchRecord,
    Library,
    LibraryNotFoundError,
    Limit,
    LinkBackend,
    LinkInput,
    Linker,
    ManagedFlag,
    MemOpFlag,
    MemSyncDomain,
    MemoryAdvice,
    MemoryPool,
    MemoryPoolDesc,
    MemoryPoolFlag,
    PhysicalMemory,
    PhysicalMemoryFlag,
    AddressRange,
    VmAccess,
    Module,
    NameForm,
    NoDeviceError,
    NotFoundError,
    NotReadyError,
    NotSupportedError,
    NvrtcError,
    NvrtcNotFoundError,
    OutOfMemoryError,
    OutOfRangeError,
    PinnedBuffer,
    PreparedLaunch,
    Program,
    ReadMode,
    Stream,
    StreamFlag,
    StubDriverError,
    Surface,
    SyncPolicy,
    GreenContext,
    SmResource,
    ClusterSchedulingPolicy,
    CopyBatchFlag,
    CopyOp,
    Copy3dOp,
    ManagedRange,
    MemOp,
    TENSOR_MAP_BYTES,
    TensorDataType,
    TensorInterleave,
    TensorL2Promotion,
    TensorMap,
    TensorOobFill,
    TensorSwizzle,
    Texture,
    WaitCondition,
    cache_clear,
    from_dlpack,
    cache_dir,
    cache_state,
    cache_usage,
    capi,
    context_lost_message,
    copy_3d,
    coredump_set,
    device_count,
    driver_log_dump,
    driver_log_read,
    driver_path,
    driver_version,
    error_class,
    find_library,
    get_backend,
    init,
    load_backend,
    nvrtc_path,
    nvrtc_version,
    nvtx_mark,
    nvtx_range,
    nvtx_range_end,
    nvtx_range_pop,
    nvtx_range_push,
    nvtx_range_start,
    on_context_lost,
    set_default_backend,
    status_name,
    use_backend,
    version,
    version_string,
]


def handle(exc: cuabi.CudaError) -> str:
    if isinstance(exc, cuabi.DriverNotFoundError):
        return "no driver: " + exc.message
    return exc.name


def first_device() -> cuabi.Device:
    return cuabi.Device(0)


def window_over(stream: cuabi.Stream, buf: cuabi.DeviceBuffer, nbytes: int) -> float:
    """A value type in and out: the fields given, the rest the C init's."""
    stream.set_access_policy_window(
        AccessPolicyWindow(base=buf.ptr, bytes=nbytes, hit_property=cuabi.capi.AccessProperty.PERSISTING)
    )
    stream.set_access_policy_window(bytes=0)
    got: AccessPolicyWindow = stream.access_policy_window
    shape: ArrayDesc = Array(stream.device, (4, 8)).desc
    pool = MemoryPoolDesc.defaults()
    return (got.hit_ratio or 0.0) + (shape.width or 0) + (pool.max_bytes or 0)


def grown(device: cuabi.Device) -> Tuple[int, int]:
    """Virtual memory as a user types it: a growable buffer is a DeviceBuffer,
    a range's view is one too."""
    minimum, _ = device.vm_granularity
    buf: DeviceBuffer = device.alloc_growable(minimum, 4 * minimum)
    buf.grow(2 * minimum)
    mem = PhysicalMemory(device, minimum, exportable=True)
    rng = AddressRange(device, minimum)
    rng.map(0, mem)
    rng.set_access(0, minimum, device, VmAccess.READWRITE)
    view: DeviceBuffer = rng.buffer()
    fd: int = mem.export_fd()
    flag: PhysicalMemoryFlag = PhysicalMemoryFlag.EXPORTABLE
    return buf.reserved_size + view.nbytes + int(flag), fd


def annotated_step(device: cuabi.Device) -> float:
    """The NVTX scope as a context manager and a decorator, the free
    functions, health and the driver's log, as a user's script types them."""

    @nvtx_range("step", argb=0xFF00FF00)
    def step(x: int) -> float:
        return x / 2

    with nvtx_range("outer", domain="app") as scope:
        nvtx_mark(None, "tick", 0)
        nvtx_range_push(None, "inner", 0)
        nvtx_range_pop()
        rid: int = nvtx_range_start("app", "async", 0)
        nvtx_range_end(rid)
    again: nvtx_range = scope
    health: Health = device.health
    device.profiler_start()
    device.profiler_stop()
    device.set_coredump(0, None, CoredumpFlag.SKIP_ABORT)
    coredump_set(0, None, 0)
    log: str = driver_log_read(0) + context_lost_message()
    driver_log_dump("/tmp/driver.log")

    def told(message: str) -> None:
        print(message)

    previous = on_context_lost(told)
    on_context_lost(previous)
    state: CacheState = cache_state()
    entries, size = cache_usage()
    return step(len(log)) + health + state + entries + size + len(cache_dir()) + len(repr(again))


def faulted(device: cuabi.Device, stream: cuabi.Stream) -> List[str]:
    """A sticky fault's launches, as a server's log of it types them."""
    try:
        device.synchronize()
    except ContextLostError as exc:
        launches: Tuple[FaultedLaunch, ...] = exc.launches
        lines: List[str] = []
        for launch in launches:
            record: LaunchRecord = launch.record
            where = "default stream" if record.stream_id == 0 else f"stream {record.stream_id}"
            mine = record.stream_id == stream.id
            lines.append(f"{launch.kernel} grid {record.grid_x} on {where} {mine}")
        return lines
    return []


def cache_use(device: Device, stream: cuabi.Stream) -> Tuple[int, int]:
    """The buffer cache as a user reads and trims it."""
    cache: BufferCache = device.buffer_cache
    buf = device.alloc(256, stream=stream)
    buf.free(stream)
    cache.max_bytes = 1 << 30
    freed: int = cache.trim(stream)
    return cache.held_bytes + freed, cache.hits
