"""Launch configurations: grid, block, shared memory and the extended
launch options (cooperative, thread-block clusters, programmatic dependent
launch, priority) and the launch attributes (access-policy window, sync and
cluster-scheduling policies, memory-sync domain and map, shared-memory
carve-out, launch completion event, device-updatable kernel node)."""

from __future__ import annotations

import inspect
from typing import Any, Dict, Optional, Tuple, Union

from ._api import ClusterSchedulingPolicy, LaunchFlag, MemSyncDomain, SyncPolicy
from ._objects import AccessPolicyWindow
from ._base import check_i32, check_u32, dim3
from ._loader import Backend
from ._stream import Event, event_arg

__all__ = ["LaunchConfig", "Dim3"]

Dim3 = Union[int, Tuple[int, ...]]

_NO_CLUSTER = (0, 0, 0)


def _enum(kind: Any, value: Any, what: str) -> Any:
    """``value`` as the enum ``kind`` when it names one, else as the int it
    is (the core refuses an unknown value, naming it); None stays None."""
    if value is None:
        return None
    try:
        return kind(value)
    except ValueError:
        return check_i32(value, what)


class LaunchConfig:
    """How a kernel is launched (``cuabi_launch_config``): immutable and
    hashable, so one can be made once and used for every launch.

    >>> cfg = LaunchConfig(64, 256, cooperative=True)
    >>> kernel(cfg, (x, out, n), stream=s)           # or kernel.prepare(cfg)
    >>> cfg2 = cfg.replace(cluster=(2, 1, 1), cooperative=False)

    ``grid``, ``block`` and ``cluster`` are an int or a tuple of up to three
    ints (read back as three). Options:

    * ``cooperative``: every block resident at once, so the kernel may
      synchronise the whole grid (``CUABI_LAUNCH_COOPERATIVE``).
    * ``cluster``: thread-block cluster dimensions in blocks (None: none).
    * ``programmatic``: programmatic dependent launch; the kernel may start
      before the previous one on its stream finished, and waits for it with
      ``griddepcontrol.wait`` / ``cudaGridDependencySynchronize()``
      (``CUABI_LAUNCH_PROGRAMMATIC_SERIALIZATION``).
    * ``programmatic_event``: a :class:`~cuabi.Event` (made with
      ``timing=False``) recorded when the blocks trigger; with
      ``event_at_block_start``, when they start.
    * ``priority``: the launch's priority; 0 keeps the stream's.

    Launch attributes (None or their default: not set, the stream's or the
    kernel's applies); they reach a captured launch's graph kernel node too:

    * ``access_policy_window``: an :class:`~cuabi.AccessPolicyWindow` for
      this kernel's L2 accesses.
    * ``sync_policy``: a :class:`~cuabi.SyncPolicy`.
    * ``cluster_scheduling``: a :class:`~cuabi.ClusterSchedulingPolicy`.
    * ``mem_sync_domain``: a :class:`~cuabi.MemSyncDomain`.
    * ``mem_sync_domain_map``: ``(default, remote)``, the domain ids the two
      domains stand for.
    * ``shared_carveout``: the preferred shared-memory carve-out, 0 to 100
      percent.
    * ``completion_event``: a :class:`~cuabi.Event` (made with
      ``timing=False``) recorded once every block has started; another
      stream that waits for it may overlap the kernel.
    * ``device_updatable``: the kernel node a captured launch makes is
      device-updatable (only while the stream captures).

    The core checks the combination (cluster dimensions dividing the grid, a
    cooperative grid that fits the device ...) when the configuration is
    used, and its error names what is wrong.
    """

    grid: Tuple[int, int, int]
    block: Tuple[int, int, int]
    shared_mem: int
    cooperative: bool
    cluster: Optional[Tuple[int, int, int]]
    programmatic: bool
    programmatic_event: Optional[Event]
    event_at_block_start: bool
    priority: int
    access_policy_window: Optional[AccessPolicyWindow]
    sync_policy: Optional[SyncPolicy]
    mem_sync_domain: Optional[MemSyncDomain]
    mem_sync_domain_map: Optional[Tuple[int, int]]
    shared_carveout: Optional[int]
    completion_event: Optional[Event]
    cluster_scheduling: ClusterSchedulingPolicy
    device_updatable: bool
    _key: Tuple[Any, ...]
    __slots__ = tuple(__annotations__)  # each field above, and no __dict__

    def __init__(
        self,
        grid: Dim3 = 1,
        block: Dim3 = 1,
        shared_mem: int = 0,
        *,
        cooperative: bool = False,
        cluster: Optional[Dim3] = None,
        programmatic: bool = False,
        programmatic_event: Optional[Event] = None,
        event_at_block_start: bool = False,
        priority: int = 0,
        access_policy_window: Optional[AccessPolicyWindow] = None,
        sync_policy: Optional[SyncPolicy] = None,
        cluster_scheduling: ClusterSchedulingPolicy = ClusterSchedulingPolicy.DEFAULT,
        mem_sync_domain: Optional[MemSyncDomain] = None,
        mem_sync_domain_map: Optional[Tuple[int, int]] = None,
        shared_carveout: Optional[int] = None,
        completion_event: Optional[Event] = None,
        device_updatable: bool = False,
    ) -> None:
        for name, event in (
            ("programmatic_event", programmatic_event),
            ("completion_event", completion_event),
        ):
            if event is not None and not isinstance(event, Event):
                raise TypeError(
                    f"{name} must be a cuabi.Event or None, not {type(event).__name__}"
                )
        if access_policy_window is not None and not isinstance(
            access_policy_window, AccessPolicyWindow
        ):
            raise TypeError(
                "access_policy_window must be a cuabi.AccessPolicyWindow or None, not "
                f"{type(access_policy_window).__name__}"
            )
        domain_map = None
        if mem_sync_domain_map is not None:
            default_id, remote_id = mem_sync_domain_map
            domain_map = (
                check_i32(default_id, "mem_sync_domain_map[0]"),
                check_i32(remote_id, "mem_sync_domain_map[1]"),
            )
        values: Dict[str, Any] = {
            "grid": dim3(grid, "grid"),
            "block": dim3(block, "block"),
            "shared_mem": check_u32(shared_mem, "shared_mem"),
            "cooperative": bool(cooperative),
            "cluster": None if cluster is None else dim3(cluster, "cluster"),
            "programmatic": bool(programmatic),
            "programmatic_event": programmatic_event,
            "event_at_block_start": bool(event_at_block_start),
            "priority": check_i32(priority, "priority"),
            "access_policy_window": access_policy_window,
            "sync_policy": _enum(SyncPolicy, sync_policy, "sync_policy"),
            "cluster_scheduling": _enum(
                ClusterSchedulingPolicy, cluster_scheduling, "cluster_scheduling"
            ),
            "mem_sync_domain": _enum(MemSyncDomain, mem_sync_domain, "mem_sync_domain"),
            "mem_sync_domain_map": domain_map,
            "shared_carveout": (
                None if shared_carveout is None else check_i32(shared_carveout, "shared_carveout")
            ),
            "completion_event": completion_event,
            "device_updatable": bool(device_updatable),
        }
        attributes: Optional[Tuple[Any, ...]] = (
            id(access_policy_window),
            values["sync_policy"],
            int(values["cluster_scheduling"]),
            values["mem_sync_domain"],
            domain_map,
            values["shared_carveout"],
            id(completion_event),
        )
        if attributes == (id(None), None, 0, None, None, None, id(None)):
            attributes = None
        for name, value in values.items():
            object.__setattr__(self, name, value)
        object.__setattr__(
            self,
            "_key",
            (
                values["grid"],
                values["block"],
                values["shared_mem"],
                self.flags,
                values["cluster"],
                values["priority"],
                id(programmatic_event),
                attributes,
            ),
        )

    @classmethod
    def of(
        cls,
        grid: Union[Dim3, "LaunchConfig"],
        block: Optional[Dim3] = None,
        shared_mem: int = 0,
        **options: Any,
    ) -> "LaunchConfig":
        """``grid`` as it is when it is a LaunchConfig (options then replace
        its fields), else a new one of ``grid``, ``block`` and the options."""
        if isinstance(grid, LaunchConfig):
            if shared_mem:
                options["shared_mem"] = shared_mem
            return grid.replace(**options) if options else grid
        if block is None:
            raise TypeError("a launch needs a block size (or a LaunchConfig for grid)")
        return cls(grid, block, shared_mem, **options)

    @property
    def flags(self) -> LaunchFlag:
        """The ``CUABI_LAUNCH_*`` flags these options set."""
        flags = LaunchFlag(0)
        if self.cooperative:
            flags |= LaunchFlag.COOPERATIVE
        if self.programmatic:
            flags |= LaunchFlag.PROGRAMMATIC_SERIALIZATION
        if self.event_at_block_start:
            flags |= LaunchFlag.PROGRAMMATIC_EVENT_AT_BLOCK_START
        if self.device_updatable:
            flags |= LaunchFlag.DEVICE_UPDATABLE_KERNEL_NODE
        return flags

    @property
    def is_plain(self) -> bool:
        """True when only grid, block and shared memory are set."""
        return bool(self._key[3:] == (0, None, 0, id(None), None))

    def replace(self, **changes: Any) -> "LaunchConfig":
        """A copy with ``changes`` (any of the constructor's arguments)."""
        fields = {name: getattr(self, name) for name in self.__slots__ if name != "_key"}
        unknown = set(changes) - set(fields)
        if unknown:
            raise TypeError(f"LaunchConfig has no option {', '.join(sorted(unknown))}")
        fields.update(changes)
        return LaunchConfig(**fields)

    def as_struct(self, backend: Backend) -> Any:
        """A ``const cuabi_launch_config*`` argument for ``backend``."""
        event, window, completion = (
            self.programmatic_event, self.access_policy_window, self.completion_event
        )
        domain_map = self.mem_sync_domain_map or (None, None)
        attributes = None if self._key[-1] is None else {  # by the struct's fields
            "access_policy_window": (
                None if window is None else window._to_native(backend, "access_policy_window")[1]
            ),
            "sync_policy": self.sync_policy,
            "cluster_scheduling_policy": self.cluster_scheduling,
            "mem_sync_domain": self.mem_sync_domain,
            "mem_sync_domain_map_default": domain_map[0],
            "mem_sync_domain_map_remote": domain_map[1],
            "shared_carveout": self.shared_carveout,
            "completion_event": (
                None if completion is None else event_arg(completion, backend, "completion_event")
            ),
        }
        return backend.launch_config(
            self.grid,
            self.block,
            self.shared_mem,
            int(self.flags),
            self.cluster or _NO_CLUSTER,
            self.priority,
            None if event is None else event_arg(event, backend, "programmatic_event"),
            attributes,
        )

    @classmethod
    def from_struct(cls, backend: Backend, cfg: Any) -> "LaunchConfig":
        """A LaunchConfig of a ``cuabi_launch_config`` the core filled
        (grid, block, shared memory, flags, cluster and priority)."""
        v = backend.read_launch_config(cfg)
        flags = LaunchFlag(v["flags"])
        return cls(
            v["grid"],
            v["block"],
            v["shared_mem"],
            cooperative=LaunchFlag.COOPERATIVE in flags,
            cluster=None if v["cluster"] == _NO_CLUSTER else v["cluster"],
            programmatic=LaunchFlag.PROGRAMMATIC_SERIALIZATION in flags,
            event_at_block_start=LaunchFlag.PROGRAMMATIC_EVENT_AT_BLOCK_START in flags,
            priority=v["priority"],
            device_updatable=LaunchFlag.DEVICE_UPDATABLE_KERNEL_NODE in flags,
        )

    @property
    def threads(self) -> int:
        """Threads in the whole grid."""
        g, b = self.grid, self.block
        return g[0] * g[1] * g[2] * b[0] * b[1] * b[2]

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("a LaunchConfig is immutable; use replace()")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, LaunchConfig):
            return NotImplemented
        return (
            self._key == other._key
            and self.programmatic_event is other.programmatic_event
            and self.completion_event is other.completion_event
            and self.access_policy_window is other.access_policy_window
        )

    def __hash__(self) -> int:
        return hash(self._key)

    def __repr__(self) -> str:
        # Grid and block, then each field (in their order) that is not its default.
        parts = [f"grid={self.grid}", f"block={self.block}"]
        for name in self.__slots__[2:-1]:
            value = getattr(self, name)
            if value != _DEFAULTS[name]:
                parts.append(f"{name}={value!r}")
        return f"LaunchConfig({', '.join(parts)})"


# Each option's default, as LaunchConfig() takes it (its repr leaves them out).
_DEFAULTS = {n: p.default for n, p in inspect.signature(LaunchConfig).parameters.items()}
