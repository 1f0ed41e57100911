// Sharing memory, pools and events with other processes. A cuabi IPC handle
// is CUABI_IPC_HANDLE_SIZE plain bytes: a magic, a version, what it names, the
// exporting process, the buffer's offset and size, the driver's own handle,
// the UUID of the GPU it lives on and a checksum, so a damaged or foreign
// handle is refused here rather than handed to the driver.
//
// Across GPUs. The exporter's GPU is found again in the importing process by
// its UUID (ordinals differ between processes). A buffer opened on another
// device is mapped there when that device can reach the exporter's GPU (peer
// access, enabled lazily by the driver for the mapping), and refused naming
// both devices when it cannot. An event opened from another process belongs
// to the context it was opened in; a stream of another device waits on it
// through a copy opened on the stream's device (Event::event_for), because
// the driver's cuStreamWaitEvent crashes on the opened event itself.
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "memory.hpp"

namespace cuabi {

namespace {

constexpr char kMagic[8] = {'c', 'u', 'a', 'b', 'i', 'I', 'P', 'C'};
constexpr uint32_t kVersion = 1;

enum class IpcKind : uint32_t { Memory = 1, PoolPointer = 2, Event = 3 };

struct IpcBlob {
  char magic[8];
  uint32_t version;
  uint32_t kind;
  uint64_t pid;
  uint64_t offset;  // of the buffer from the start of the exported allocation
  uint64_t size;    // of the buffer
  unsigned char payload[64];
  // The exporting GPU's UUID; all zero when the driver could not say (and in
  // handles of earlier releases, which left these bytes zero).
  unsigned char home_uuid[16];
  unsigned char reserved[4];
  uint32_t checksum;  // FNV-1a of every byte before it
};
static_assert(sizeof(IpcBlob) == CUABI_IPC_HANDLE_SIZE, "the IPC handle layout moved");
static_assert(sizeof(CUipcMemHandle) <= 64 && sizeof(CUipcEventHandle) <= 64 &&
                  sizeof(CUmemPoolPtrExportData) <= 64,
              "a driver handle outgrew the IPC handle");

uint32_t fnv1a(const void* data, size_t n) {
  const unsigned char* p = static_cast<const unsigned char*>(data);
  uint32_t h = 2166136261u;
  for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 16777619u;
  return h;
}

const char* kind_name(uint32_t kind) {
  switch (static_cast<IpcKind>(kind)) {
    case IpcKind::Memory:
      return "a buffer's";
    case IpcKind::PoolPointer:
      return "a pool allocation's";
    case IpcKind::Event:
      return "an event's";
  }
  return "an unknown";
}

// The UUID of `device`, or false when the driver cannot say.
bool uuid_of(CUdevice device, CUuuid* uuid) {
  if (driver().cuDeviceGetUuid(uuid, device) == CUDA_SUCCESS) return true;
  t_missing_entry_point = nullptr;  // a driver without it: the UUID stays unknown
  return false;
}

bool zero_uuid(const unsigned char* u) {
  for (int i = 0; i < 16; ++i)
    if (u[i]) return false;
  return true;
}

// The ordinal, in this process, of the GPU with `uuid`; -1 when none has it
// (or the handle carries no UUID). Asks the driver about devices only: no
// context is made on a device this process does not use.
int ordinal_of(const unsigned char* uuid) {
  if (zero_uuid(uuid)) return -1;
  const int n = Device::count();
  for (int i = 0; i < n; ++i) {
    CUdevice dev = 0;
    CUuuid u;
    if (driver().cuDeviceGet(&dev, i) == CUDA_SUCCESS && uuid_of(dev, &u) &&
        std::memcmp(u.bytes, uuid, 16) == 0)
      return i;
  }
  return -1;
}

std::string device_text(int ordinal) {
  return ordinal < 0 ? std::string("a GPU this process does not see")
                     : "device " + std::to_string(ordinal);
}

// Why a driver open failed, as far as cuabi can tell: the exporter gone.
std::string exporter_state(uint64_t pid) {
  if (pid > 0 && kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH)
    return "the exporting process (pid " + std::to_string(pid) + ") has ended";
  return "the exporting process (pid " + std::to_string(pid) + ") may have freed it, or ended";
}

void write_blob(IpcBlob& blob, IpcKind kind, const Device& home, uint64_t offset, uint64_t size,
                const void* payload, size_t payload_size, void* handle, size_t handle_size) {
  if (!handle) fail_invalid("handle is NULL");
  if (handle_size < CUABI_IPC_HANDLE_SIZE)
    fail(CUABI_ERROR_INSUFFICIENT_BUFFER, "handle_size is " + std::to_string(handle_size) +
                                              "; an IPC handle takes " +
                                              std::to_string(CUABI_IPC_HANDLE_SIZE) + " bytes");
  std::memset(&blob, 0, sizeof blob);
  std::memcpy(blob.magic, kMagic, sizeof kMagic);
  blob.version = kVersion;
  blob.kind = static_cast<uint32_t>(kind);
  blob.pid = static_cast<uint64_t>(getpid());
  blob.offset = offset;
  blob.size = size;
  std::memcpy(blob.payload, payload, payload_size);
  CUuuid uuid;
  if (uuid_of(home.device, &uuid)) std::memcpy(blob.home_uuid, uuid.bytes, sizeof blob.home_uuid);
  blob.checksum = fnv1a(&blob, offsetof(IpcBlob, checksum));
  std::memcpy(handle, &blob, sizeof blob);
}

// Reads and checks a handle of one of `kinds`; refuses one of this process.
IpcBlob read_blob(const void* handle, size_t handle_size, bool event) {
  if (!handle) fail_invalid("handle is NULL");
  if (handle_size != CUABI_IPC_HANDLE_SIZE)
    fail_invalid("handle_size is " + std::to_string(handle_size) + "; an IPC handle is " +
                 std::to_string(CUABI_IPC_HANDLE_SIZE) + " bytes");
  IpcBlob blob;
  std::memcpy(&blob, handle, sizeof blob);
  if (std::memcmp(blob.magic, kMagic, sizeof kMagic) != 0)
    fail_invalid("the handle is not a cuabi IPC handle (its first bytes are not the magic)");
  if (blob.version != kVersion)
    fail_invalid("the handle is of IPC handle version " + std::to_string(blob.version) +
                 "; this library reads version " + std::to_string(kVersion));
  if (blob.checksum != fnv1a(&blob, offsetof(IpcBlob, checksum)))
    fail_invalid("the handle's checksum does not match its bytes: it was damaged on the way");
  const bool is_event = blob.kind == static_cast<uint32_t>(IpcKind::Event);
  if (is_event != event)
    fail_invalid(std::string("the handle is ") + kind_name(blob.kind) + " handle, not " +
                 (event ? "an event's" : "a buffer's"));
  if (blob.pid == static_cast<uint64_t>(getpid()))
    fail_invalid(std::string("the handle was exported by this process; use the ") +
                 (event ? "event" : "buffer") +
                 " itself (the driver opens handles of other "
                 "processes only)");
  return blob;
}

// Refuses opening memory that lives on GPU `home` (-1: unknown) on `dev`
// when `dev` cannot reach it.
void check_reach(const Device& dev, int home, const char* what) {
  if (home < 0 || home == dev.ordinal) return;
  CUdevice home_dev = 0;
  int can = 0;
  check(driver().cuDeviceGet(&home_dev, home), "cuDeviceGet");
  check(driver().cuDeviceCanAccessPeer(&can, dev.device, home_dev), "cuDeviceCanAccessPeer");
  if (!can)
    fail_invalid(std::string("the handle is of ") + what + " on device " + std::to_string(home) +
                 " (the exporter's GPU), and device " + std::to_string(dev.ordinal) +
                 " cannot reach device " + std::to_string(home) +
                 "'s memory (no peer access between them): open it on device " +
                 std::to_string(home) + " and copy it to device " + std::to_string(dev.ordinal));
}

}  // namespace

// One mapping of another process's memory in one device's context.
struct IpcMapping {
  IpcMapping(Ref<Device> dev, CUdeviceptr base) : device(std::move(dev)), base(base) {
    epoch = device->epoch();
  }
  ~IpcMapping() {
    try {
      if (driver_ready() && device->epoch() == epoch) {
        device->make_current();
        driver().cuIpcCloseMemHandle(base);
      }
    } catch (...) {
      // The driver is gone or the device lost: nothing left to close.
    }
  }
  Ref<Device> device;
  uint32_t epoch = 0;
  CUdeviceptr base;
};

namespace {

// The live mappings by device and driver handle: the driver maps a handle
// once per context, so a second open shares the first one's mapping.
struct MappingKey {
  int ordinal;
  unsigned char handle[sizeof(CUipcMemHandle)];
  bool operator<(const MappingKey& o) const {
    if (ordinal != o.ordinal) return ordinal < o.ordinal;
    return std::memcmp(handle, o.handle, sizeof handle) < 0;
  }
};

std::shared_ptr<IpcMapping> open_mapping(const Ref<Device>& dev, const CUipcMemHandle& h, int home,
                                         uint64_t pid) {
  static std::mutex mutex;
  static std::map<MappingKey, std::weak_ptr<IpcMapping>> live;
  MappingKey key{dev->ordinal, {}};
  std::memcpy(key.handle, &h, sizeof key.handle);
  std::lock_guard<std::mutex> lock(mutex);
  auto it = live.find(key);
  if (it != live.end()) {
    if (auto shared = it->second.lock()) {
      if (shared->epoch == dev->epoch()) return shared;
    }
    live.erase(it);
  }
  CUdeviceptr p = 0;
  const CUresult r = driver().cuIpcOpenMemHandle(&p, h, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS);
  if (r != CUDA_SUCCESS) {
    std::string what = "cuIpcOpenMemHandle (the buffer of " + device_text(home) +
                       ", opened on device " + std::to_string(dev->ordinal) + "; " +
                       exporter_state(pid) + ")";
    check_failed(r, what.c_str());
  }
  auto mapping = std::make_shared<IpcMapping>(dev, p);
  live[key] = mapping;
  return mapping;
}

}  // namespace

void buffer_ipc_handle(const Buffer& b, void* handle, size_t handle_size) {
  IpcBlob blob;
  if (b.kind == CUABI_BUFFER_DEVICE || b.kind == CUABI_BUFFER_PITCHED) {
    b.enter();
    CUipcMemHandle h;
    check(driver().cuIpcGetMemHandle(&h, b.ptr), "cuIpcGetMemHandle");
    write_blob(blob, IpcKind::Memory, *b.device, 0, b.size, &h, sizeof h, handle, handle_size);
    return;
  }
  if (b.kind == CUABI_BUFFER_STREAM_ORDERED && b.pool && b.pool->ipc) {
    b.enter();
    CUmemPoolPtrExportData data;
    check(driver().cuMemPoolExportPointer(&data, b.ptr), "cuMemPoolExportPointer");
    write_blob(blob, IpcKind::PoolPointer, *b.device, 0, b.size, &data, sizeof data, handle,
               handle_size);
    return;
  }
  fail_invalid(
      b.kind == CUABI_BUFFER_STREAM_ORDERED
          ? "the buffer is stream-ordered from a pool made without "
            "CUABI_MEMORY_POOL_IPC; only such pools' allocations can be shared"
          : std::string("only buffers from cuabi_buffer_alloc, "
                        "cuabi_buffer_alloc_pitched, or cuabi_buffer_alloc_async from a "
                        "pool made with CUABI_MEMORY_POOL_IPC can be shared; this one is ") +
                (b.kind == CUABI_BUFFER_MANAGED    ? "managed memory"
                 : b.kind == CUABI_BUFFER_WRAPPED  ? "wrapped memory owned elsewhere"
                 : b.kind == CUABI_BUFFER_GROWABLE ? "a growable buffer"
                 : b.kind == CUABI_BUFFER_RANGE
                     ? "a buffer over an address range (share its physical memory with "
                       "cuabi_physical_memory_export_fd)"
                     : "opened from another process"));
}

Ref<Buffer> open_ipc_buffer(Ref<Device> dev, const Pin<MemoryPool>& pool, const void* handle,
                            size_t handle_size) {
  const IpcBlob blob = read_blob(handle, handle_size, false);
  if (blob.size == 0) fail_invalid("the handle names an empty buffer");
  const DriverApi& d = driver();
  if (blob.kind == static_cast<uint32_t>(IpcKind::PoolPointer)) {
    if (!pool)
      fail_invalid(
          "the handle is of a pool allocation: pass the pool, imported with "
          "cuabi_memory_pool_import_fd from the exporting process");
    if (!pool->imported)
      fail_invalid(
          "the pool was not imported from another process "
          "(cuabi_memory_pool_import_fd)");
    const int home = ordinal_of(blob.home_uuid);
    if (home >= 0 && home != pool->device->ordinal)
      fail_invalid("the handle is of a pool allocation on device " + std::to_string(home) +
                   " (the exporter's GPU), but the pool was imported on device " +
                   std::to_string(pool->device->ordinal) + ": import the pool on device " +
                   std::to_string(home));
    if (pool->device.get() != dev.get())
      fail_invalid("the pool was imported on device " + std::to_string(pool->device->ordinal) +
                   ", the buffer is opened on device " + std::to_string(dev->ordinal));
    dev->make_current();
    CUmemPoolPtrExportData data;
    std::memcpy(&data, blob.payload, sizeof data);
    CUdeviceptr p = 0;
    const CUresult r = d.cuMemPoolImportPointer(&p, pool->pool, &data);
    if (r != CUDA_SUCCESS) {
      const std::string what = "cuMemPoolImportPointer (" + exporter_state(blob.pid) + ")";
      check_failed(r, what.c_str());
    }
    Ref<Buffer> b = make<Buffer>(std::move(dev), CUABI_BUFFER_IPC, p + blob.offset,
                                 static_cast<size_t>(blob.size));
    b->pool = Ref<MemoryPool>::share(pool.get());
    return b;
  }
  if (pool)
    fail_invalid("the handle is of a plain device buffer, not a pool allocation: pass no pool");
  const int home = ordinal_of(blob.home_uuid);
  check_reach(*dev, home, "a buffer");
  dev->make_current();
  CUipcMemHandle h;
  std::memcpy(&h, blob.payload, sizeof h);
  std::shared_ptr<IpcMapping> mapping = open_mapping(dev, h, home, blob.pid);
  Ref<Buffer> b = make<Buffer>(std::move(dev), CUABI_BUFFER_IPC, mapping->base + blob.offset,
                               static_cast<size_t>(blob.size));
  b->ipc_mapping = std::move(mapping);
  return b;
}

void event_ipc_handle(const Event& e, void* handle, size_t handle_size) {
  if (!e.interprocess)
    fail_invalid(
        "the event was made without CUABI_EVENT_INTERPROCESS; only such events can be "
        "shared");
  e.enter();
  CUipcEventHandle h;
  check(driver().cuIpcGetEventHandle(&h, e.event), "cuIpcGetEventHandle");
  IpcBlob blob;
  write_blob(blob, IpcKind::Event, *e.device, 0, 0, &h, sizeof h, handle, handle_size);
}

Ref<Event> open_ipc_event(Ref<Device> dev, const void* handle, size_t handle_size) {
  const IpcBlob blob = read_blob(handle, handle_size, true);
  dev->make_current();
  CUipcEventHandle h;
  std::memcpy(&h, blob.payload, sizeof h);
  CUevent e = nullptr;
  const CUresult r = driver().cuIpcOpenEventHandle(&e, h);
  if (r != CUDA_SUCCESS) {
    const std::string what = "cuIpcOpenEventHandle (the event of " +
                             device_text(ordinal_of(blob.home_uuid)) + ", opened on device " +
                             std::to_string(dev->ordinal) + "; " + exporter_state(blob.pid) + ")";
    check_failed(r, what.c_str());
  }
  return make<Event>(std::move(dev), e, h);
}

int32_t export_pool(const MemoryPool& pool) {
  if (!pool.ipc)
    fail_invalid(pool.imported ? "the pool was imported; export it from the process that made it"
                               : "the pool was made without CUABI_MEMORY_POOL_IPC");
  pool.enter();
  int fd = -1;
  check(driver().cuMemPoolExportToShareableHandle(&fd, pool.pool,
                                                  CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0),
        "cuMemPoolExportToShareableHandle");
  return fd;
}

Ref<MemoryPool> import_pool(Ref<Device> dev, int32_t fd) {
  if (fd < 0) fail_invalid("fd is " + std::to_string(fd) + ", not a file descriptor");
  dev->make_current();
  CUmemoryPool pool = nullptr;
  check(driver().cuMemPoolImportFromShareableHandle(
            &pool, reinterpret_cast<void*>(static_cast<intptr_t>(fd)),
            CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0),
        "cuMemPoolImportFromShareableHandle");
  return make<MemoryPool>(std::move(dev), pool, true, false, true);
}

}  // namespace cuabi
