/**
 * @file
 * cuabi.h — the whole C API of cuabi.
 *
 * cuabi compiles CUDA C++ at run time (NVRTC), moves data and launches kernels
 * (CUDA driver API) behind one stable C ABI that any language can reach.
 *
 * @verbatim
 * ---------------------------------------------------------------------------
 * Conventions (read these once; every function follows them)
 * ---------------------------------------------------------------------------
 *
 * Names.     cuabi_<object>_<verb> (cuabi_buffer_copy, cuabi_last_error_clear,
 *            cuabi_function_launch); getters are cuabi_<object>_get_<what>.
 *            Calls on the library itself (cuabi_init, cuabi_version,
 *            cuabi_version_string) have no object. The receiver comes first,
 *            out-parameters last.
 *
 * Results.   Every function that can fail returns a cuabi_status. CUABI_SUCCESS
 *            is 0. On failure, out-parameters are left untouched and the
 *            calling thread's last-error state describes what failed:
 *            cuabi_last_error_message() (never NULL, UTF-8),
 *            cuabi_last_error_status(), cuabi_last_error_code() (the raw CUresult
 *            or nvrtcResult behind a CUDA/NVRTC failure) and, after a failed
 *            compile, cuabi_last_error_log(). A successful call does not clear
 *            that state: read it only after a call returned non-zero.
 *            No function aborts, prints, or lets a C++ exception escape.
 *
 * Calls that never touch the last-error state: every *_release function,
 *            cuabi_status_get_name, cuabi_status_get_description, cuabi_version,
 *            cuabi_version_string, and the cuabi_last_error_* readers.
 *
 * Handles.   Each object kind has its own opaque handle type. A handle is an
 *            encoded slot reference, not a pointer: a NULL, released, stale or
 *            wrong-kind handle is detected and answers CUABI_ERROR_INVALID_HANDLE.
 *            The caller owns every handle returned through an out-parameter and
 *            gives it back with the matching *_release function.
 *            Objects keep what they depend on alive (a module its device
 *            context, a function its module, a buffer its device context), so
 *            handles may be released in any order.
 *
 * Release.   *_release(NULL) is a no-op. Release never fails, never blocks on
 *            the GPU beyond what the driver does to free the resource, may run
 *            on any thread (a .NET finalizer, a Python __del__), and leaves the
 *            thread's last-error state untouched. Releasing an already released
 *            handle is detected and ignored.
 *
 * Threads.   Every function is thread-safe. Any handle may be used from any
 *            thread: each call makes its device's primary context current on
 *            the calling thread by itself (and leaves it current, as
 *            cudaSetDevice does). Work submitted to one stream from several
 *            threads is ordered by the driver, not by cuabi.
 *
 * Contexts.  cuabi uses each device's primary context, the one the CUDA
 *            runtime, CuPy and PyTorch use, so they share allocations,
 *            streams and events with cuabi in the same process.
 *
 * Strings.   UTF-8, NUL-terminated, unless a length is given.
 *
 * Two-call pattern for strings and blobs: pass buf = NULL to learn the size
 *            (in bytes, including the terminating NUL for strings) through
 *            *size; then pass a buffer of *size bytes. A buffer that is too
 *            small answers CUABI_ERROR_INSUFFICIENT_BUFFER, writes nothing and
 *            stores the size needed in *size.
 *
 * Structs.   No struct is passed or returned by value. A struct that may grow
 *            starts with its own size (struct_size). Fill one with its
 *            cuabi_<struct>_init function (any language) or start from its
 *            _INIT macro (C, C++): both give the same defaults. The library reads only the fields it knows; a
 *            larger struct from a newer header is accepted when the bytes past
 *            the fields this library knows are zero, and refused with
 *            CUABI_ERROR_NOT_SUPPORTED otherwise.
 *
 * Loading.   libcuabi has no link-time dependency on libcuda or libnvrtc. The
 *            driver (libcuda.so.1) and NVRTC (the newest libnvrtc.so.N found)
 *            are opened on first use; see cuabi_init. NVRTC and nvJitLink
 *            are looked for in $CUABI_NVRTC_PATH / $CUABI_NVJITLINK_PATH
 *            alone when set; else in pip's NVIDIA wheels beside libcuabi in
 *            its Python environment (site-packages/nvidia/cu13/lib ...) and
 *            $CONDA_PREFIX/lib, then on the loader's path, $CUDA_HOME and
 *            /usr/local/cuda. A function that needs an
 *            entry point the installed driver lacks answers
 *            CUABI_ERROR_NOT_SUPPORTED; nothing else is affected.
 *
 * fork().    A child forked after cuabi initialised CUDA cannot use CUDA:
 *            every call that would touch the GPU answers CUABI_ERROR_FORKED.
 *
 * ABI rules. Within a major version a release may add functions, statuses,
 *            enum values, flags and trailing struct fields (behind
 *            struct_size). It never changes or removes an existing function's
 *            signature or meaning, an enum value, or a struct's existing layout.
 *            Every enum is a named typedef 32 bits wide: its last enumerator,
 *            <ENUM>_FORCE32 = 0x7FFFFFFF, fixes the width on every compiler
 *            and is no value to pass. A flag set is a uint32_t typedef
 *            (cuabi_<object>_flags) holding an OR of its enum's
 *            cuabi_<object>_flag_bits. Handles are pointer-sized opaque
 *            values. cuabi targets 64-bit hosts only, as the CUDA driver
 *            does since CUDA 12: a handle's 64 bits encode a slot, the
 *            object's kind and the slot's generation, and this header
 *            refuses to compile for a 32-bit target.
 *
 * Description. cuabi.json, installed beside this header, describes every
 *            function, type, enum, struct and constant here, with its
 *            comment, for languages that generate their own binding.
 *
 * Comments.  A comment above a group of functions declared on consecutive
 *            lines, with no blank line or comment between them, documents
 *            each of them, in cuabi.json too; Doxygen reads each such group
 *            between its member-group marks.
 *
 * Roles.     cuabi.json also says what each function and parameter means,
 *            read from these naming rules:
 *            - A function's object is the longest handle name its name starts
 *              with (cuabi_host_buffer_get_size: host_buffer). Its receiver
 *              is its first parameter of that handle type. *_release
 *              releases; a call whose comment says it "releases the handle"
 *              consumes its receiver once it succeeds
 *              (cuabi_buffer_free_async); cuabi_<struct>_init(desc,
 *              struct_size) fills a struct; a function whose one new
 *              handle (`cuabi_X* out`) is of its own object constructs one,
 *              made from its first other handle if any
 *              (cuabi_buffer_alloc(device, ...)); *_set_* sets;
 *              *_get_* with out-parameters gets; `char* buf, size_t* size`
 *              (`void* buf, size_t* size`) returns a string (a blob) by the
 *              two-call pattern; with no receiver it is a library call.
 *            - Parameters: another handle is borrowed, `cuabi_X*` is a new
 *              owned handle, `const char*` a NUL-terminated string, `const
 *              void*`/`void*` followed by a size_t a host byte range in/out
 *              and its size, `const T*` or `T* const*` an array whose count
 *              is the size_t named num_<name> or a `count` right after it, a
 *              struct pointer a struct in (const) or out, a callback takes
 *              the `user_data` beside it, any other pointer is an
 *              out-parameter and any other value an input. An int32_t
 *              out-parameter whose comment reads "`x` receives 1 when" is a
 *              flag (1 or 0): a bool in each language.
 *            - A versioned struct naming cuabi objects or host memory (a
 *              handle or pointer field: cuabi_copy_3d_desc) is built: each
 *              binding lays it out from one type of its own (Python's
 *              Copy3dOp, Rust's Copy3d, C#'s Copy3D), and a function taking
 *              one is generated over that type. What it names is lasting
 *              where the library uses it after the call returns: for the
 *              receiver's life (a graph's node) or until the stream reaches
 *              the work (an *_async call, a stream's batch).
 *            - NULL: a cuabi_stream that is not the receiver may be NULL (the
 *              default stream) unless its comment says "(not NULL)"; a
 *              parameter whose comment reads `x` (NULL: meaning), `x` NULL:
 *              meaning, or `x` (optional) may be NULL.
 *            - Statuses: CUABI_SUCCESS, INVALID_HANDLE with a handle,
 *              INVALID_ARGUMENT with a pointer, INSUFFICIENT_BUFFER for the
 *              two-call pattern, NOT_READY for *_query, and each status the
 *              comment names.
 *            Where these rules do not decide, the comment ends with
 *            annotation lines, one per line (scripts/regen refuses a
 *            function its rules and annotations leave undecided, naming it):
 *              @param <name> <role> [count=<p>] [size=<p>] [of=<p>]
 *                  role: receiver handle in out out_handle inout string_in
 *                  array_in array_out count bytes_in bytes_out size
 *                  two_call_buf two_call_size struct_in struct_out callback
 *                  user_data
 *              @nullable <name>: <what NULL means>
 *              @call <constructor|getter|setter|action|release|string|blob|
 *                     struct_init|library>
 *              @idiom <launch|arg_packing|ipc|host_callback|host_view|dlpack>:
 *                  the bindings write this call's object form by hand
 *                  (launches, argument packing, IPC handle bytes, host
 *                  callbacks, host memory the call keeps using, DLPack
 *                  tensors handed over or taken over)
 *              @status CUABI_ERROR_<NAME>...
 *              @scope <name> <closing function> [thread]: every language
 *                  also makes a scope <name> that opens with this call and
 *                  closes with the other (Python: a context manager and
 *                  decorator; Rust: a guard; C#: an IDisposable; C++: RAII);
 *                  the closing function's parameters are this call's, by
 *                  name; `thread`: the scope belongs to the thread that
 *                  opened it (a Rust guard is then neither Send nor Sync)
 *            Without annotation the idioms are cuabi_function_launch*,
 *            cuabi_launch_plan_*, cuabi_graph_exec_set_kernel_node_args
 *            (launch), *_ipc* (ipc), a call with a callback (host_callback)
 *            and an *_async call with a host byte range (host_view).
 * @endverbatim
 */
#ifndef CUABI_CUABI_H
#define CUABI_CUABI_H

#include <stddef.h>
#include <stdint.h>

#if !defined(UINTPTR_MAX) || UINTPTR_MAX != 0xFFFFFFFFFFFFFFFFu
#error "cuabi targets 64-bit hosts only (as the CUDA driver does since CUDA 12)"
#endif

#if defined(_WIN32)
#define CUABI_CALL __cdecl
#if defined(CUABI_BUILDING)
#define CUABI_API __declspec(dllexport)
#else
#define CUABI_API __declspec(dllimport)
#endif
#else
#define CUABI_CALL
#define CUABI_API __attribute__((visibility("default")))
#endif

/* C++ gives each enum a fixed 32-bit signed underlying type, so any int32_t
 * value (a status from a newer library, say) is a valid value of it. */
#if defined(__cplusplus)
#define CUABI_ENUM_BASE : int32_t
#else
#define CUABI_ENUM_BASE
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------- */
/* Versions                                                                   */
/* ------------------------------------------------------------------------- */

/** The major version of this header. */
#define CUABI_VERSION_MAJOR 0
/** The minor version of this header. */
#define CUABI_VERSION_MINOR 3
/** The patch version of this header. */
#define CUABI_VERSION_PATCH 0
/** MAJOR * 10000 + MINOR * 100 + PATCH; compare with cuabi_version(). */
#define CUABI_VERSION_NUMBER \
  (CUABI_VERSION_MAJOR * 10000 + CUABI_VERSION_MINOR * 100 + CUABI_VERSION_PATCH)
#define CUABI_VERSION_STRINGIFY_(x) #x
#define CUABI_VERSION_STRINGIFY(x) CUABI_VERSION_STRINGIFY_(x)
/** The same version as text ("0.1.0"); built from the three numbers above. */
#define CUABI_VERSION_STRING                                                    \
  CUABI_VERSION_STRINGIFY(CUABI_VERSION_MAJOR) "." CUABI_VERSION_STRINGIFY(    \
      CUABI_VERSION_MINOR) "." CUABI_VERSION_STRINGIFY(CUABI_VERSION_PATCH)

/** The library's own version number, in the form of CUABI_VERSION_NUMBER. */
CUABI_API uint32_t CUABI_CALL cuabi_version(void);
/** The library's version as a static string, e.g. "0.1.0". Never NULL. */
CUABI_API const char* CUABI_CALL cuabi_version_string(void);

/* ------------------------------------------------------------------------- */
/* Status codes and the last error                                            */
/* ------------------------------------------------------------------------- */

/** What every call that can fail returns: CUABI_SUCCESS or why it failed. */
typedef enum cuabi_status CUABI_ENUM_BASE {
  /** The call succeeded. */
  CUABI_SUCCESS = 0,
  /** An argument is out of its domain: a NULL pointer, a zero or oversized
   * count, a kernel argument of the wrong size; the message names it. */
  CUABI_ERROR_INVALID_ARGUMENT = 1,
  /** A NULL, released, stale or wrong-kind handle. */
  CUABI_ERROR_INVALID_HANDLE = 2,
  /** Host or device memory could not be allocated. */
  CUABI_ERROR_OUT_OF_MEMORY = 3,
  /** The caller's buffer is too small; *size holds the size needed. */
  CUABI_ERROR_INSUFFICIENT_BUFFER = 4,
  /** An offset or length reaches past the end of a buffer, or an index past
   * the end of a list. */
  CUABI_ERROR_OUT_OF_RANGE = 5,
  /** A named thing does not exist: a kernel, a global, a name expression. */
  CUABI_ERROR_NOT_FOUND = 6,
  /** The installed driver or NVRTC lacks what this call needs. */
  CUABI_ERROR_NOT_SUPPORTED = 7,
  /** Work is still in flight (stream or event query). Not a failure. */
  CUABI_ERROR_NOT_READY = 8,
  /** libcuda.so.1 could not be loaded; the message lists every path tried. */
  CUABI_ERROR_DRIVER_NOT_FOUND = 9,
  /** The loaded libcuda is the toolkit's stub library, which cannot run
   * anything; the real driver is not installed or not on the search path. */
  CUABI_ERROR_STUB_DRIVER = 10,
  /** The driver works but there is no CUDA device, or the ordinal is past the
   * last device. */
  CUABI_ERROR_NO_DEVICE = 11,
  /** No libnvrtc could be loaded; the message lists every path tried. */
  CUABI_ERROR_NVRTC_NOT_FOUND = 12,
  /** NVRTC rejected the source or options; cuabi_last_error_log() and
   * cuabi_program_get_log() give its log. */
  CUABI_ERROR_COMPILE = 13,
  /** The device context hit a sticky fault (an illegal address, a trap, a
   * launch failure). The driver then fails this and every later CUDA call of
   * the process, on every device, cuabi_device_reset included; the recovery
   * it documents is to end the process and start a new one (other processes
   * are unaffected, on every device). Run untrusted kernels in a child
   * process to survive their faults. */
  CUABI_ERROR_CONTEXT_LOST = 14,
  /** The process forked after cuabi initialised CUDA; CUDA cannot be used in
   * the child. */
  CUABI_ERROR_FORKED = 15,
  /** Any other CUDA driver failure; cuabi_last_error_code() is the CUresult. */
  CUABI_ERROR_CUDA = 16,
  /** Any other NVRTC failure; cuabi_last_error_code() is the nvrtcResult. */
  CUABI_ERROR_NVRTC = 17,
  /** A file could not be read or written. */
  CUABI_ERROR_IO = 18,
  /** A bug in cuabi; please report it with the message. */
  CUABI_ERROR_INTERNAL = 19,
  /** A host function (cuabi_stream_launch_host_func) reported a failure; the
   * message is the one it gave. Answered by the stream's next synchronize. */
  CUABI_ERROR_HOST_FUNCTION = 20,
  CUABI_STATUS_FORCE32 = 0x7FFFFFFF
} cuabi_status;
/** One past the largest status this version defines. */
#define CUABI_STATUS_COUNT 21

/** The status's symbolic name ("CUABI_ERROR_INVALID_HANDLE"), or
 * "CUABI_ERROR_UNKNOWN" for a value this version does not define. Static;
 * never NULL. */
CUABI_API const char* CUABI_CALL cuabi_status_get_name(cuabi_status status);
/** The status's description, as the comment on its value above says it.
 * Static; never NULL. */
CUABI_API const char* CUABI_CALL cuabi_status_get_description(cuabi_status status);

/** The calling thread's last error. The message names the failing call, the
 * argument or parameter at fault, and for CUDA/NVRTC failures the library's
 * error name and explanation. Never NULL ("" before any failure); valid until
 * the next cuabi call on this thread. */
CUABI_API const char* CUABI_CALL cuabi_last_error_message(void);
/** The status of the calling thread's last failure, as the failed call
 * returned it; CUABI_SUCCESS before any failure and after
 * cuabi_last_error_clear. */
CUABI_API cuabi_status CUABI_CALL cuabi_last_error_status(void);
/** The CUresult or nvrtcResult behind the last error, 0 if none. */
CUABI_API int32_t CUABI_CALL cuabi_last_error_code(void);
/** The NVRTC log of the last failed compile on this thread (two-call pattern;
 * an empty string when the last error was no compile failure). */
CUABI_API cuabi_status CUABI_CALL cuabi_last_error_log(char* buf, size_t* size);
/** Resets this thread's last-error state to "no error". */
CUABI_API void CUABI_CALL cuabi_last_error_clear(void);

/** A kernel launch the core remembered. The core keeps the last launches of
 * each stream (and of each device's default stream); when a sticky fault
 * surfaces, on whatever call, the message of that call and of every later
 * CONTEXT_LOST failure names the launches not seen complete (no successful
 * synchronize or query of their stream or device since), most recent first,
 * and the last error carries them as data: cuabi_last_error_get_launch. */
typedef struct cuabi_launch_record {
  size_t struct_size; /**< sizeof(cuabi_launch_record) */
  /** The launch's number on its stream: 1 for the stream's first launch. */
  uint64_t sequence;
  /** The stream's id (cuabi_stream_get_id); 0 is the device's default
   * stream. */
  uint64_t stream_id;
  /** The device's ordinal. */
  int32_t device;
  /**@{*/
  uint32_t grid_x, grid_y, grid_z; /**< The grid's dimensions, in blocks. */
  /**@}*/
  /**@{*/
  uint32_t block_x, block_y, block_z; /**< The block's dimensions, in threads. */
  /**@}*/
  /** Dynamic shared memory, in bytes. */
  uint32_t shared_mem_bytes;
  /**@{*/
  /** The cluster dimensions the launch asked for; 0, 0, 0 for none. */
  uint32_t cluster_x, cluster_y, cluster_z;
  /**@}*/
  /** 1 when a line the driver logged during the failing call names this
   * launch's kernel, else 0. */
  uint32_t named_by_driver_log;
} cuabi_launch_record;

/** The defaults of cuabi_launch_record as an initialiser (C, C++); cuabi_launch_record_init
 * fills the same. */
#define CUABI_LAUNCH_RECORD_INIT { sizeof(cuabi_launch_record), 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 }

/** Fills `record` with the defaults of CUABI_LAUNCH_RECORD_INIT. */
CUABI_API cuabi_status CUABI_CALL cuabi_launch_record_init(cuabi_launch_record* record,
                                                           size_t struct_size);

/** How many launches the last error names: those not seen complete when a
 * sticky fault surfaced (0 for any error but CUABI_ERROR_CONTEXT_LOST). */
CUABI_API size_t CUABI_CALL cuabi_last_error_get_launch_count(void);
/** The last error's launch `index` (0 is the most recent), written into
 * `record` up to its struct_size. CUABI_ERROR_OUT_OF_RANGE past
 * cuabi_last_error_get_launch_count; CUABI_ERROR_INVALID_ARGUMENT for a NULL
 * `record` or a struct_size too small for its first field. The last-error
 * state is left as it is, failure or not. */
CUABI_API cuabi_status CUABI_CALL cuabi_last_error_get_launch(size_t index,
                                                              cuabi_launch_record* record);
/** The kernel name of the last error's launch `index` (two-call pattern). */
CUABI_API cuabi_status CUABI_CALL cuabi_last_error_get_launch_kernel(size_t index, char* buf,
                                                                     size_t* size);

/** Whether CUDA can still work in this process, answered without touching
 * the device (a server's health check). */
typedef enum cuabi_health CUABI_ENUM_BASE {
  /** No call has found the context lost. */
  CUABI_HEALTH_USABLE = 0,
  /** A call answered CUABI_ERROR_CONTEXT_LOST: the driver fails every later
   * CUDA call of the process, on every device; the recovery the driver
   * documents is a new process. cuabi_context_lost_get_message says which
   * call found it. */
  CUABI_HEALTH_LOST = 1,
  /** This process was forked from one that had initialised CUDA: CUDA
   * cannot be used here (CUABI_ERROR_FORKED). */
  CUABI_HEALTH_FORKED = 2,
  CUABI_HEALTH_FORCE32 = 0x7FFFFFFF
} cuabi_health;

/** The message of the call that first found the context lost, naming that
 * call (two-call pattern; "" while the context is usable). */
CUABI_API cuabi_status CUABI_CALL cuabi_context_lost_get_message(char* buf, size_t* size);

/** Called once per process, when a call first finds the context lost, on the
 * thread of that call after it has failed (no cuabi lock is held: it may
 * call cuabi, which answers CUABI_ERROR_CONTEXT_LOST for CUDA work).
 * `message` is that call's message, valid during the callback. */
typedef void(CUABI_CALL* cuabi_context_lost_fn)(void* user_data, const char* message);

/** Registers `callback` (NULL: none) with `user_data`, replacing any earlier
 * one. Registered after the context was lost, it is called at once, on this
 * thread, with the message of the call that found it. */
CUABI_API cuabi_status CUABI_CALL cuabi_set_context_lost_callback(cuabi_context_lost_fn callback,
                                                                  void* user_data);

/* ------------------------------------------------------------------------- */
/* Handles                                                                    */
/* ------------------------------------------------------------------------- */

typedef struct cuabi_device_s* cuabi_device;           /**< a GPU and its primary context */
typedef struct cuabi_program_s* cuabi_program;         /**< an NVRTC program */
typedef struct cuabi_module_s* cuabi_module;           /**< loaded device code */
typedef struct cuabi_function_s* cuabi_function;       /**< a kernel in a module */
typedef struct cuabi_buffer_s* cuabi_buffer;           /**< device memory */
typedef struct cuabi_host_buffer_s* cuabi_host_buffer; /**< page-locked host memory */
typedef struct cuabi_stream_s* cuabi_stream;           /**< a CUDA stream */
typedef struct cuabi_event_s* cuabi_event;             /**< a CUDA event */
typedef struct cuabi_graph_s* cuabi_graph;             /**< a captured graph */
typedef struct cuabi_graph_exec_s* cuabi_graph_exec;   /**< an instantiated graph */
typedef struct cuabi_launch_plan_s* cuabi_launch_plan; /**< a prepared launch */
typedef struct cuabi_memory_pool_s* cuabi_memory_pool; /**< a stream-ordered memory pool */
typedef struct cuabi_array_s* cuabi_array;             /**< a CUDA array (1D, 2D, 3D, layered) */
typedef struct cuabi_texture_s* cuabi_texture;         /**< a texture object */
typedef struct cuabi_surface_s* cuabi_surface;         /**< a surface object */
typedef struct cuabi_linker_s* cuabi_linker;           /**< a link of several device images */
typedef struct cuabi_library_s* cuabi_library;         /**< device code for every context */
typedef struct cuabi_physical_memory_s* cuabi_physical_memory; /**< device memory with no address */
typedef struct cuabi_address_range_s* cuabi_address_range;     /**< reserved device addresses */
typedef struct cuabi_graph_node_s* cuabi_graph_node;           /**< a node of a graph */

/* ------------------------------------------------------------------------- */
/* Loading and library information                                            */
/* ------------------------------------------------------------------------- */

/** Opens the CUDA driver and calls cuInit. Optional: every call that needs the
 * driver does this itself the first time. Idempotent and thread-safe; a
 * failure is remembered and answered again with the same message.
 *
 * The driver is looked for as: $CUABI_DRIVER_PATH alone when set; otherwise
 * "libcuda.so.1" through the dynamic loader, then the usual driver folders.
 * NVRTC (opened by the first compile) is looked for as: $CUABI_NVRTC_PATH
 * alone when set; otherwise a libnvrtc.so.N already loaded in the process,
 * then the loader's search path, then $CUDA_HOME/lib64, $CUDA_PATH/lib64 and
 * /usr/local/cuda/lib64, taking the highest N at the first place that has one.
 *
 * Returns CUABI_ERROR_DRIVER_NOT_FOUND (the message lists every path tried
 * and why each failed), CUABI_ERROR_STUB_DRIVER, or a CUDA failure of cuInit.
 * A machine with a driver but no GPU succeeds here; cuabi_device_get_count then
 * reports 0. */
CUABI_API cuabi_status CUABI_CALL cuabi_init(void);

/** The driver's CUDA version (e.g. 13000 for 13.0). */
CUABI_API cuabi_status CUABI_CALL cuabi_driver_get_version(int32_t* version);
/** Where the driver was loaded from (two-call pattern). */
CUABI_API cuabi_status CUABI_CALL cuabi_driver_get_path(char* buf, size_t* size);
/** The driver's own log (CUDA 12.9 drivers and later): the lines it wrote
 * about failing calls, kept by cuabi from the driver's opening, the last 256
 * of the process, oldest first, one per line as
 * "[hh:mm:ss.mmm][thread id][E or W] message" (two-call pattern). `last`:
 * only the last `last` lines (0: all kept). A failing call's message already
 * ends with the lines the driver logged during it ("; the driver logged:
 * ..."). CUABI_ERROR_NOT_SUPPORTED when the driver keeps no log. */
CUABI_API cuabi_status CUABI_CALL cuabi_driver_log_read(size_t last, char* buf, size_t* size);
/** Writes the lines of cuabi_driver_log_read (all kept) to the file `path`,
 * replacing it. CUABI_ERROR_IO (the errno in cuabi_last_error_code) when it
 * cannot be written; CUABI_ERROR_NOT_SUPPORTED as cuabi_driver_log_read. */
CUABI_API cuabi_status CUABI_CALL cuabi_driver_log_dump(const char* path);
/** NVRTC's version: `major` and `minor` receive its two numbers (12 and 8
 * for NVRTC 12.8). Opens NVRTC if needed; CUABI_ERROR_NVRTC_NOT_FOUND when
 * no libnvrtc loads. */
CUABI_API cuabi_status CUABI_CALL cuabi_nvrtc_get_version(int32_t* major, int32_t* minor);
/** Where NVRTC was loaded from (two-call pattern); opens NVRTC if needed. */
CUABI_API cuabi_status CUABI_CALL cuabi_nvrtc_get_path(char* buf, size_t* size);

/* ------------------------------------------------------------------------- */
/* Devices                                                                    */
/* ------------------------------------------------------------------------- */

/** Number of CUDA devices, in `count` (0 where the driver sees none). Opens
 * the driver if needed, answering as cuabi_init does when it cannot. */
CUABI_API cuabi_status CUABI_CALL cuabi_device_get_count(int32_t* count);
/** A handle to device `ordinal` that holds its primary context (retained
 * until the last object that needs it is released). Each call returns a new
 * handle; release each. CUABI_ERROR_NO_DEVICE for an ordinal out of range. */
CUABI_API cuabi_status CUABI_CALL cuabi_device_get(int32_t ordinal, cuabi_device* out);
/** Releases a handle of cuabi_device_get. The primary context stays retained
 * while any object made on the device still lives. */
CUABI_API void CUABI_CALL cuabi_device_release(cuabi_device device);

/** The ordinal the device was opened with (cuabi_device_get). */
CUABI_API cuabi_status CUABI_CALL cuabi_device_get_ordinal(cuabi_device device, int32_t* ordinal);
/** The device's name (two-call pattern). */
CUABI_API cuabi_status CUABI_CALL cuabi_device_get_name(cuabi_device device, char* buf,
                                                        size_t* size);
/** The device's compute capability: `major` and `minor` receive its two
 * numbers (9 and 0 for an sm_90 device). */
CUABI_API cuabi_status CUABI_CALL cuabi_device_get_compute_capability(cuabi_device device,
                                                                      int32_t* major,
                                                                      int32_t* minor);
/** The device's total memory in bytes (cuDeviceTotalMem); what is free now
 * is cuabi_device_get_memory_info's. */
CUABI_API cuabi_status CUABI_CALL cuabi_device_get_total_memory(cuabi_device device,
                                                                size_t* bytes);
/** Free and total device memory as the driver sees them now, in bytes:
 * `free_bytes` and `total_bytes` (cuMemGetInfo in the device's primary
 * context). */
CUABI_API cuabi_status CUABI_CALL cuabi_device_get_memory_info(cuabi_device device,
                                                               size_t* free_bytes,
                                                               size_t* total_bytes);
/** Any CUdevice_attribute of the driver, by its numeric value
 * `cu_attribute` (see cuda.h), in `value`. A value this driver does not
 * know answers CUABI_ERROR_INVALID_ARGUMENT. */
CUABI_API cuabi_status CUABI_CALL cuabi_device_get_attribute(cuabi_device device,
                                                             int32_t cu_attribute,
                                                             int32_t* value);
/** The primary context as a raw CUcontext value in `cu_context`, for
 * interop. cuabi keeps it retained while the device handle lives. */
CUABI_API cuabi_status CUABI_CALL cuabi_device_get_context(cuabi_device device,
                                                           uint64_t* cu_context);
/** Waits for all work on the device's primary context. */
CUABI_API cuabi_status CUABI_CALL cuabi_device_synchronize(cuabi_device device);
/** Whether `device` can still run work, in `health` (cuabi_health), without
 * touching it. The answer is the process's: a lost context or a fork
 * concerns every device. */
CUABI_API cuabi_status CUABI_CALL cuabi_device_get_health(cuabi_device device,
                                                          cuabi_health* health);
/** Lowest and highest stream priorities, in `least` and `greatest`;
 * numerically lower is higher priority. */
CUABI_API cuabi_status CUABI_CALL cuabi_device_get_stream_priority_range(cuabi_device device,
                                                                         int32_t* least,
                                                                         int32_t* greatest);
/** Resets the device's primary context (cuDevicePrimaryCtxReset): frees
 * every allocation, module, stream and event on it, in this process and in
 * every library sharing the primary context (CUDA runtime, CuPy, PyTorch).
 * Every cuabi object made on this device before the reset is then unusable
 * (its calls answer CUABI_ERROR_CONTEXT_LOST; releasing it stays safe):
 * recreate what you need. The device handle itself stays valid.
 * After a sticky fault (CUABI_ERROR_CONTEXT_LOST) the driver refuses the
 * device to the process for good, and this answers CUABI_ERROR_CONTEXT_LOST
 * too: start a new process. */
CUABI_API cuabi_status CUABI_CALL cuabi_device_reset(cuabi_device device);

/** A limit of a device's primary context (cuCtxSetLimit), shared with every
 * library using that context in the process. */
typedef enum cuabi_limit {
  /** Bytes of stack for each GPU thread. */
  CUABI_LIMIT_STACK_SIZE = 0,
  /** Bytes of the buffer device-side printf writes into; what does not fit
   * by the next synchronize is lost. Set it before the first launch of a
   * kernel that prints: the driver refuses a change after that. */
  CUABI_LIMIT_PRINTF_FIFO_SIZE = 1,
  /** Bytes of the heap that device-side malloc and new draw from. Set it
   * before the first launch of a kernel that allocates. */
  CUABI_LIMIT_MALLOC_HEAP_SIZE = 2,
  /** Bytes of L2 set aside for accesses marked persisting (an access-policy
   * window); at most the device's
   * CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE, 0 where it has none. */
  CUABI_LIMIT_PERSISTING_L2_CACHE_SIZE = 3,
  CUABI_LIMIT_FORCE32 = 0x7FFFFFFF
} cuabi_limit;

/** The current value of `limit` in `device`'s primary context, in bytes.
 * An unknown `limit` answers CUABI_ERROR_INVALID_ARGUMENT naming it. */
CUABI_API cuabi_status CUABI_CALL cuabi_device_get_limit(cuabi_device device, cuabi_limit limit,
                                                         size_t* value);
/** Sets `limit` of `device`'s primary context to `value` bytes; the driver may
 * round it up (read it back with cuabi_device_get_limit). Refused with
 * CUABI_ERROR_INVALID_ARGUMENT naming the limit and the bound: an unknown
 * limit, a persisting-L2 size past the device's maximum (the maximum in the
 * message). A printf FIFO or malloc heap size set after a kernel that uses
 * printf or malloc ran on the context is refused by the driver: that answers
 * CUABI_ERROR_INVALID_ARGUMENT saying so. */
CUABI_API cuabi_status CUABI_CALL cuabi_device_set_limit(cuabi_device device, cuabi_limit limit,
                                                         size_t value);
/** Returns every persisting L2 line of `device` to normal
 * (cuCtxResetPersistingL2Cache). */
CUABI_API cuabi_status CUABI_CALL cuabi_device_reset_persisting_l2(cuabi_device device);

/* ------------------------------------------------------------------------- */
/* Programs (NVRTC)                                                           */
/* ------------------------------------------------------------------------- */

/** Creates an NVRTC program from `source` (NUL-terminated). `name` is the
 * file name used in diagnostics (NULL: "cuabi_program.cu"). `num_headers`
 * headers are given as parallel arrays: `header_sources` holds their
 * contents and `header_names` the names they are included by.
 * @param header_sources array_in count=num_headers
 * @param header_names array_in count=num_headers
 * @nullable name: "cuabi_program.cu" */
CUABI_API cuabi_status CUABI_CALL cuabi_program_create(const char* source, const char* name,
                                                       size_t num_headers,
                                                       const char* const* header_sources,
                                                       const char* const* header_names,
                                                       cuabi_program* out);
/** Destroys the program (nvrtcDestroyProgram) with its output and log.
 * Modules loaded from its output do not need it. */
CUABI_API void CUABI_CALL cuabi_program_release(cuabi_program program);

/** Registers a name expression (e.g. "write_scalar<float>") before compiling,
 * so its lowered (mangled) name can be queried afterwards. */
CUABI_API cuabi_status CUABI_CALL cuabi_program_add_name_expression(cuabi_program program,
                                                                    const char* expression);
/** Compiles with the `num_options` raw NVRTC options of `options` (e.g.
 * "--gpu-architecture=sm_90", "--std=c++17"), passed to NVRTC as they are;
 * cuabi_program_compile_with takes the same options as typed values.
 * With an "sm_XY" architecture NVRTC makes CUBIN; with "compute_XY", PTX.
 * A program compiles once: a second call answers CUABI_ERROR_INVALID_ARGUMENT.
 * Returns CUABI_ERROR_COMPILE when NVRTC rejects the code or the options; the
 * log is kept either way. */
CUABI_API cuabi_status CUABI_CALL cuabi_program_compile(cuabi_program program, size_t num_options,
                                                        const char* const* options);
/** The compile log (two-call pattern); "" before compiling. */
CUABI_API cuabi_status CUABI_CALL cuabi_program_get_log(cuabi_program program, char* buf,
                                                        size_t* size);
/** The PTX (two-call pattern; a NUL-terminated string, its size counting the
 * NUL). CUABI_ERROR_NOT_FOUND before a successful compile or when NVRTC made
 * no PTX. */
CUABI_API cuabi_status CUABI_CALL cuabi_program_get_ptx(cuabi_program program, char* buf,
                                                        size_t* size);
/** The CUBIN (two-call pattern; binary). CUABI_ERROR_NOT_FOUND before a
 * successful compile or when NVRTC made none (a compute_XY target makes only
 * PTX). */
CUABI_API cuabi_status CUABI_CALL cuabi_program_get_cubin(cuabi_program program, void* buf,
                                                          size_t* size);
/** The LTO-IR of a program compiled with "-dlto" (two-call pattern; binary),
 * for a link-time-optimising link (cuabi_linker_add_program does this
 * itself). CUABI_ERROR_NOT_FOUND before a successful compile or when the
 * program was compiled without "-dlto". */
CUABI_API cuabi_status CUABI_CALL cuabi_program_get_lto_ir(cuabi_program program, void* buf,
                                                           size_t* size);
/** The lowered name of a registered name expression (two-call pattern). */
CUABI_API cuabi_status CUABI_CALL cuabi_program_get_lowered_name(cuabi_program program,
                                                                 const char* expression,
                                                                 char* buf, size_t* size);

/* ------------------------------------------------------------------------- */
/* Modules and functions                                                      */
/* ------------------------------------------------------------------------- */

/** What cuabi_module_compile produces. */
typedef enum cuabi_output CUABI_ENUM_BASE {
  /** Machine code for the device's own sm_XY: no JIT at load. */
  CUABI_OUTPUT_CUBIN = 0,
  /** PTX for compute_XY: the driver JITs it at load. */
  CUABI_OUTPUT_PTX = 1,
  CUABI_OUTPUT_FORCE32 = 0x7FFFFFFF
} cuabi_output;

/** Flags for cuabi_compile_desc.flags: an OR of cuabi_compile_flag_bits. */
typedef uint32_t cuabi_compile_flags;
/** The bits of cuabi_compile_flags. */
typedef enum cuabi_compile_flag_bits CUABI_ENUM_BASE {
  /** Neither read nor write the on-disk cache for this compile. */
  CUABI_COMPILE_NO_CACHE = 1 << 0,
  CUABI_COMPILE_FLAG_BITS_FORCE32 = 0x7FFFFFFF
} cuabi_compile_flag_bits;

/** The C++ dialect of a compile (cuabi_compile_desc.cxx_standard): the
 * value is the standard's year, CUABI_STD_DEFAULT leaves NVRTC's own
 * (C++17 for NVRTC 12). Any other value is refused with
 * CUABI_ERROR_INVALID_ARGUMENT. */
typedef enum cuabi_cxx_standard CUABI_ENUM_BASE {
  CUABI_STD_DEFAULT = 0, /**< NVRTC's own (C++17 for NVRTC 12) */
  CUABI_STD_CXX03 = 3,  /* --std=c++03 */
  CUABI_STD_CXX11 = 11, /* --std=c++11 */
  CUABI_STD_CXX14 = 14, /* --std=c++14 */
  CUABI_STD_CXX17 = 17, /* --std=c++17 */
  CUABI_STD_CXX20 = 20, /* --std=c++20 */
  CUABI_CXX_STANDARD_FORCE32 = 0x7FFFFFFF
} cuabi_cxx_standard;

/** What to compile, for cuabi_module_compile (and the options of
 * cuabi_program_compile_with). Start from CUABI_COMPILE_DESC_INIT or
 * cuabi_compile_desc_init.
 *
 * Options come two ways. The typed ones (arch to relocatable, added in 0.3)
 * are turned into NVRTC options by the library, one spelling each, in the
 * order of the fields: "--gpu-architecture=<arch>", "--std=c++NN",
 * "--define-macro=<define>" per define, "--include-path=<path>" per path,
 * "--use_fast_math", "--generate-line-info", "--device-debug",
 * "--dlink-time-opt", "--relocatable-device-code=true". The raw `options`
 * follow them, passed to NVRTC as they are: the way to any option without
 * a field ("--fmad=false", "-maxrregcount=64").
 *
 * Every typed value is checked before NVRTC runs; a bad one answers
 * CUABI_ERROR_INVALID_ARGUMENT, the message naming the field, the index
 * for an array ("desc->defines[2]") and why:
 *   arch          "sm_XY", "sm_XYa" or "sm_XYf" (CUBIN) or "compute_XY"
 *                 (PTX) with two or three digits; refused when an entry of
 *                 `options` names an architecture too. Whether NVRTC knows
 *                 the architecture is NVRTC's to say (CUABI_ERROR_COMPILE).
 *   cxx_standard  a cuabi_cxx_standard value.
 *   defines       "NAME", "NAME=VALUE", "F(a,b)=VALUE": NAME is an identifier
 *                 (ASCII letters, digits and '_', not starting with a
 *                 digit), optionally followed at once by a function-like
 *                 macro's parameter list: identifiers separated by commas,
 *                 the last one may be "...", no parameter twice, no
 *                 whitespace anywhere before '='. VALUE is any text on one
 *                 line (no line break). NULL, empty, a name starting with a
 *                 digit or holding whitespace or another character are
 *                 refused.
 *   include_paths non-empty strings.
 *   fast_math, line_info, device_debug, lto, relocatable: 0 or 1.
 *   lto           cuabi_module_compile refuses 1: an LTO compile makes
 *                 LTO-IR, which no module loads; compile a cuabi_program
 *                 with it and link it (cuabi_linker_add_program).
 *
 * A caller built against an older header (struct_size 88, without the
 * typed fields) keeps working: the typed options are then all unset. */
typedef struct cuabi_compile_desc {
  size_t struct_size;                    /**< sizeof(cuabi_compile_desc) */
  const char* source;                    /**< CUDA C++ source, NUL-terminated */
  const char* name;                      /**< file name for diagnostics; NULL: "cuabi_program.cu" */
  const char* const* options;            /**< raw NVRTC options, after the typed ones */
  size_t num_options;                    /**< the number of `options` */
  const char* const* header_sources;     /**< contents of each header */
  const char* const* header_names;       /**< include name of each header */
  size_t num_headers;                    /**< the number of headers */
  const char* const* name_expressions;   /**< e.g. "write_scalar<float>" */
  size_t num_name_expressions;           /**< the number of `name_expressions` */
  cuabi_output output;                   /**< CUABI_OUTPUT_CUBIN (default) or _PTX */
  cuabi_compile_flags flags;             /**< CUABI_COMPILE_* */
  /* The typed options (0.3). */
  const char* arch;                      /**< "sm_90", "compute_90"; NULL: the device's own */
  const char* const* defines;            /**< "N", "N=4", "SQUARE(x)=((x)*(x))" */
  size_t num_defines;                    /**< the number of `defines` */
  const char* const* include_paths;      /**< folders searched by `#include`, in order */
  size_t num_include_paths;              /**< the number of `include_paths` */
  cuabi_cxx_standard cxx_standard;       /**< CUABI_STD_DEFAULT: NVRTC's own */
  int32_t fast_math;                     /**< 1: fast, less precise math */
  int32_t line_info;                     /**< 1: source lines for profilers */
  int32_t device_debug;                  /**< 1: debuggable, unoptimised device code */
  int32_t lto;                           /**< 1: LTO-IR for a link-time-optimising link */
  int32_t relocatable;                   /**< 1: relocatable device code, for a link */
} cuabi_compile_desc;

/** The defaults of cuabi_compile_desc as an initialiser (C, C++); cuabi_compile_desc_init fills
 * the same. */
#define CUABI_COMPILE_DESC_INIT                                                                 \
  { sizeof(cuabi_compile_desc), NULL, NULL, NULL, 0, NULL, NULL, 0, NULL, 0, CUABI_OUTPUT_CUBIN, \
    0, NULL, NULL, 0, NULL, 0, CUABI_STD_DEFAULT, 0, 0, 0, 0, 0 }

/** Fills `desc` with the defaults of CUABI_COMPILE_DESC_INIT (no source, no
 * options, headers or name expressions, CUBIN output, no flags, every typed
 * option unset), as cuabi_launch_config_init does for its struct. */
CUABI_API cuabi_status CUABI_CALL cuabi_compile_desc_init(cuabi_compile_desc* desc,
                                                          size_t struct_size);

/** Compiles a program with the options of `desc`: its typed options (arch,
 * cxx_standard, defines, include_paths, fast_math, line_info, device_debug,
 * lto, relocatable), turned into NVRTC options and checked exactly as
 * cuabi_module_compile does, followed by its raw `options`. The program
 * already has its source, name, headers and name expressions, and a
 * program's compile never goes through the cache: those fields of `desc`
 * (source, name, header_*, num_headers, name_expressions,
 * num_name_expressions), `output` and `flags` must keep their defaults, and
 * a set one is refused with CUABI_ERROR_INVALID_ARGUMENT naming it. Without
 * `arch` (and no architecture among `options`) NVRTC's default architecture
 * is used. Otherwise as cuabi_program_compile. */
CUABI_API cuabi_status CUABI_CALL cuabi_program_compile_with(cuabi_program program,
                                                             const cuabi_compile_desc* desc);

/** Compiles `desc` for `device` and loads the result: the one call from source
 * to a module. Unless `arch` or the raw options name an architecture, the
 * target is the device's own: "-arch=sm_XY" for CUBIN (so the driver never
 * JITs) or "-arch=compute_XY" for PTX; if NVRTC is older than the device, the
 * newest architecture NVRTC knows is used as PTX.
 *
 * Compiled images go through an on-disk cache keyed on the source, the
 * headers, every option (typed and raw), the name expressions, the target,
 * and the NVRTC and driver versions. Entries are written atomically
 * (temporary file, then rename), carry a checksum, and a corrupt or foreign
 * entry is discarded and rebuilt, never loaded. The cache folder is
 * $CUABI_CACHE_DIR, else $XDG_CACHE_HOME/cuabi, else ~/.cache/cuabi;
 * CUABI_CACHE=0 (or CUABI_COMPILE_NO_CACHE) turns it off. A folder owned by
 * another user or writable by others is not used. A cache that cannot be
 * read or written never fails a compile. cuabi_cache_get_dir,
 * cuabi_cache_get_state, cuabi_cache_get_usage and cuabi_cache_clear look at
 * and empty the folder by these same rules.
 *
 * Name expressions are resolved and kept with the module:
 * cuabi_module_get_function accepts them as names.
 * CUABI_ERROR_COMPILE: cuabi_last_error_log() has NVRTC's log. */
CUABI_API cuabi_status CUABI_CALL cuabi_module_compile(cuabi_device device,
                                                       const cuabi_compile_desc* desc,
                                                       cuabi_module* out);
/** Loads CUBIN, PTX or fatbin bytes. `size` is the image's length in bytes
 * (PTX need not be NUL-terminated when its length is given). */
CUABI_API cuabi_status CUABI_CALL cuabi_module_load_data(cuabi_device device, const void* image,
                                                         size_t size, cuabi_module* out);
/** Loads a CUBIN, PTX or fatbin file: the bytes at `path`, read whole, as
 * cuabi_module_load_data loads them. CUABI_ERROR_IO (the errno in
 * cuabi_last_error_code) when the file cannot be opened or read;
 * CUABI_ERROR_INVALID_ARGUMENT for an empty one. */
CUABI_API cuabi_status CUABI_CALL cuabi_module_load_file(cuabi_device device, const char* path,
                                                         cuabi_module* out);
/** Releases the module handle. The module is unloaded once no function
 * taken from it lives (each keeps its module loaded); a library's module
 * leaves the library to cuabi_library_release. */
CUABI_API void CUABI_CALL cuabi_module_release(cuabi_module module);

/** `hit` receives 1 when the module's image came from the compile cache
 * (cuabi_module_compile, cuabi_linker_link), else 0. */
CUABI_API cuabi_status CUABI_CALL cuabi_module_get_from_cache(cuabi_module module, int32_t* hit);
/** A kernel by its name, or by a name expression given at compile time.
 * CUABI_ERROR_NOT_FOUND when the module has no such kernel. The function
 * keeps its module alive. */
CUABI_API cuabi_status CUABI_CALL cuabi_module_get_function(cuabi_module module, const char* name,
                                                            cuabi_function* out);
/** The lowered name of a name expression given at compile time (two-call). */
CUABI_API cuabi_status CUABI_CALL cuabi_module_get_lowered_name(cuabi_module module,
                                                                const char* expression,
                                                                char* buf, size_t* size);
/** NVRTC's log of the compile that made this module, warnings included,
 * also after a successful compile (two-call pattern). "" for a module the
 * compile cache served (the compile that made the image showed its log) and
 * for one loaded from an image, a file, a link or a library. */
CUABI_API cuabi_status CUABI_CALL cuabi_module_get_compile_log(cuabi_module module, char* buf,
                                                               size_t* size);
/** How a kernel's name is given. */
typedef enum cuabi_name_form CUABI_ENUM_BASE {
  /** As the C++ demangler writes it: "doublify(float*)", with the return
   * type for a template's instance ("void ops::scale<float>(float*,
   * float)"); an extern "C" kernel's name as it is. */
  CUABI_NAME_DEMANGLED = 0,
  /** The symbol in the image ("_Z5scaleIfEvPfi"), as cuModuleGetFunction
   * takes it. */
  CUABI_NAME_SYMBOL = 1,
  CUABI_NAME_FORM_FORCE32 = 0x7FFFFFFF
} cuabi_name_form;
/** The number of kernels in the module, in `count` (cuModuleGetFunctionCount;
 * driver 12.4 or newer, CUABI_ERROR_NOT_SUPPORTED before). */
CUABI_API cuabi_status CUABI_CALL cuabi_module_get_kernel_count(cuabi_module module,
                                                                size_t* count);
/** The name of kernel `index` (0 to count - 1, in the driver's order) in
 * `form` (two-call pattern). An index past the end answers
 * CUABI_ERROR_OUT_OF_RANGE. */
CUABI_API cuabi_status CUABI_CALL cuabi_module_get_kernel_name(cuabi_module module, size_t index,
                                                               cuabi_name_form form, char* buf,
                                                               size_t* size);
/** A __device__ global by its `name`: its device address in `device_ptr`
 * and its size in bytes in `bytes`. CUABI_ERROR_NOT_FOUND when the module
 * has no global of that name. */
CUABI_API cuabi_status CUABI_CALL cuabi_module_get_global(cuabi_module module, const char* name,
                                                          uint64_t* device_ptr, size_t* bytes);
/** Releases a kernel handle of cuabi_module_get_function; its module stays
 * loaded while anything else needs it. */
CUABI_API void CUABI_CALL cuabi_function_release(cuabi_function function);

/** The number of the kernel's parameters, in `count`, as the driver reports
 * them (cuFuncGetParamInfo, driver 12.4 or newer; CUABI_ERROR_NOT_SUPPORTED
 * before that). */
CUABI_API cuabi_status CUABI_CALL cuabi_function_get_param_count(cuabi_function function,
                                                                 size_t* count);
/** One kernel parameter's place in the packed argument block. */
typedef struct cuabi_param_info {
  size_t offset; /**< bytes from the start of the block */
  size_t size;   /**< bytes */
} cuabi_param_info;
/** The kernel's whole parameter layout in one call: `params` receives one
 * cuabi_param_info per parameter, in order, and `args_size` (optional) the
 * block's length. `*count` is the capacity of `params` on the way in and the
 * number of parameters on the way out; with params = NULL only the count and
 * args_size are written. A capacity that is too small answers
 * CUABI_ERROR_INSUFFICIENT_BUFFER, writes no parameter and stores the count
 * needed.
 * @idiom arg_packing
 * @call getter
 * @param params array_out count=count
 * @param count inout
 * @nullable params: only the count and args_size are written */
CUABI_API cuabi_status CUABI_CALL cuabi_function_get_params(cuabi_function function,
                                                            cuabi_param_info* params,
                                                            size_t* count, size_t* args_size);
/** Checks, before any launch, that arguments of these byte sizes fit the
 * kernel: `count` against its parameter count and each size against its
 * parameter. A binding calls it once per argument signature it will write
 * (not per launch); a mismatch answers CUABI_ERROR_INVALID_ARGUMENT with the
 * same message a launch would give ("kernel 'saxpy' parameter 4 is 8 bytes,
 * but the argument given is 4 bytes"). */
CUABI_API cuabi_status CUABI_CALL cuabi_function_check_arg_sizes(cuabi_function function,
                                                                 const size_t* sizes,
                                                                 size_t count);
/** As cuabi_function_check_arg_sizes for one parameter: `index` must name a
 * parameter and `size` equal its size. For bindings that write arguments one
 * at a time (a plan's typed setters). */
CUABI_API cuabi_status CUABI_CALL cuabi_function_check_arg_size(cuabi_function function,
                                                                size_t index, size_t size);
/** The byte length of the packed argument block for cuabi_function_launch_packed:
 * the last parameter's offset plus its size (0 for no parameters). */
CUABI_API cuabi_status CUABI_CALL cuabi_function_get_args_size(cuabi_function function,
                                                               size_t* size);
/** The name the kernel was looked up by (two-call pattern): the name
 * expression ("write_scalar<float>") when it was found through one, else
 * its symbol name. */
CUABI_API cuabi_status CUABI_CALL cuabi_function_get_name(cuabi_function function, char* buf,
                                                          size_t* size);

/** The values of the driver's CUfunction_attribute that cuabi names; any
 * other CUfunction_attribute value may be passed as well. */
typedef enum cuabi_function_attribute CUABI_ENUM_BASE {
  /** The most threads per block the kernel can be launched with. */
  CUABI_FUNC_MAX_THREADS_PER_BLOCK = 0,
  /** Bytes of static shared memory per block. */
  CUABI_FUNC_SHARED_SIZE_BYTES = 1,
  /** Bytes of constant memory. */
  CUABI_FUNC_CONST_SIZE_BYTES = 2,
  /** Bytes of local memory per thread. */
  CUABI_FUNC_LOCAL_SIZE_BYTES = 3,
  /** Registers per thread. */
  CUABI_FUNC_NUM_REGS = 4,
  /** The PTX virtual architecture, major * 10 + minor. */
  CUABI_FUNC_PTX_VERSION = 5,
  /** The binary architecture, major * 10 + minor. */
  CUABI_FUNC_BINARY_VERSION = 6,
  /** The most dynamic shared memory per block (settable). */
  CUABI_FUNC_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8,
  /** The preferred shared memory carve-out, in percent of the most (settable;
   * -1 for no preference). */
  CUABI_FUNC_PREFERRED_SHARED_MEMORY_CARVEOUT = 9,
  /** 1 when the kernel must be launched with a cluster size (__cluster_dims__
   * or a launch with cluster dimensions). */
  CUABI_FUNC_CLUSTER_SIZE_MUST_BE_SET = 10,
  /** The cluster width, height and depth the kernel was compiled for
   * (__cluster_dims__); 0 when it names none. Settable before the first
   * launch when the kernel names none. */
  CUABI_FUNC_REQUIRED_CLUSTER_WIDTH = 11,
  /** The cluster height, as CUABI_FUNC_REQUIRED_CLUSTER_WIDTH. */
  CUABI_FUNC_REQUIRED_CLUSTER_HEIGHT = 12,
  /** The cluster depth, as CUABI_FUNC_REQUIRED_CLUSTER_WIDTH. */
  CUABI_FUNC_REQUIRED_CLUSTER_DEPTH = 13,
  /** 1 to allow clusters larger than the portable 8 blocks, where the device
   * can run them (settable). */
  CUABI_FUNC_NON_PORTABLE_CLUSTER_SIZE_ALLOWED = 14,
  /** The driver's CUclusterSchedulingPolicy preference (settable). */
  CUABI_FUNC_CLUSTER_SCHEDULING_POLICY_PREFERENCE = 15,
  CUABI_FUNCTION_ATTRIBUTE_FORCE32 = 0x7FFFFFFF
} cuabi_function_attribute;
/** Any CUfunction_attribute, by its numeric value `attribute`, in `value`.
 * A value this driver does not know answers CUABI_ERROR_INVALID_ARGUMENT. */
CUABI_API cuabi_status CUABI_CALL cuabi_function_get_attribute(cuabi_function function,
                                                               cuabi_function_attribute attribute,
                                                               int32_t* value);
/** Sets the settable CUfunction_attribute `attribute` (e.g. the dynamic
 * shared memory limit) to `value`. A value the driver refuses, or an
 * attribute it cannot set, answers CUABI_ERROR_INVALID_ARGUMENT naming both
 * (with the driver's logged reason where it gave one). */
CUABI_API cuabi_status CUABI_CALL cuabi_function_set_attribute(cuabi_function function,
                                                               cuabi_function_attribute attribute,
                                                               int32_t value);

/* ------------------------------------------------------------------------- */
/* The compile cache                                                          */
/* ------------------------------------------------------------------------- */

/* The cache folder's rules, as cuabi_module_compile applies them, for tools
 * that report or empty it (the `cuabi` program, `python -m cuabi`). The
 * folder is found from the environment at each call; none of these calls
 * creates it. Its entries are the files named <64 hex digits>.cubin-cache in
 * it; ".tmp-*" files are writes in progress or never finished. */

/** Whether compiles use the cache folder now, and if not, why. */
typedef enum cuabi_cache_state CUABI_ENUM_BASE {
  /** The folder exists and compiles read and write it. */
  CUABI_CACHE_STATE_IN_USE = 0,
  /** The folder does not exist yet: the first compile creates it (mode 0700). */
  CUABI_CACHE_STATE_NOT_CREATED = 1,
  /** CUABI_CACHE is 0, off or false: compiles neither read nor write it. */
  CUABI_CACHE_STATE_OFF = 2,
  /** No folder: CUABI_CACHE_DIR is unset, XDG_CACHE_HOME is no absolute path,
   * and there is no home folder. */
  CUABI_CACHE_STATE_NO_FOLDER = 3,
  /** The path exists but is not a folder: not used. */
  CUABI_CACHE_STATE_NOT_A_FOLDER = 4,
  /** Owned by another user: not used (they could plant images). */
  CUABI_CACHE_STATE_OWNED_BY_OTHERS = 5,
  /** Writable by its group or by others: not used (they could plant images). */
  CUABI_CACHE_STATE_WRITABLE_BY_OTHERS = 6,
  /** The path cannot be looked at (a folder above it is not searchable): not used. */
  CUABI_CACHE_STATE_UNREADABLE = 7,
  CUABI_CACHE_STATE_FORCE32 = 0x7FFFFFFF
} cuabi_cache_state;

/** The cache folder (two-call pattern): $CUABI_CACHE_DIR, else
 * $XDG_CACHE_HOME/cuabi (an absolute XDG_CACHE_HOME), else ~/.cache/cuabi
 * (the home folder from $HOME, else the user database); also while the
 * cache is off or the folder not used. CUABI_ERROR_NOT_FOUND when there is
 * none (CUABI_CACHE_STATE_NO_FOLDER). */
CUABI_API cuabi_status CUABI_CALL cuabi_cache_get_dir(char* buf, size_t* size);
/** Whether compiles use the cache folder now, in `state`
 * (cuabi_cache_state). */
CUABI_API cuabi_status CUABI_CALL cuabi_cache_get_state(cuabi_cache_state* state);
/** The number of entries in the cache folder and their size in bytes,
 * counted whatever its state; 0 and 0 when the folder does not exist.
 * CUABI_ERROR_NOT_FOUND when there is no folder; CUABI_ERROR_IO (the errno
 * in cuabi_last_error_code) when it cannot be read. */
CUABI_API cuabi_status CUABI_CALL cuabi_cache_get_usage(uint64_t* entries, uint64_t* bytes);
/** Removes every entry of the cache folder, and every unfinished write, also
 * while the cache is off; `entries` and `bytes` receive
 * how many entries were removed and their size. A folder that does not
 * exist is empty: 0 and 0. CUABI_ERROR_NOT_FOUND when there is no folder.
 * CUABI_ERROR_IO when the folder is not one cuabi would use (not a folder,
 * owned by another user, writable by others: nothing is removed), cannot be
 * read, or a file in it cannot be removed (the message names it and how many
 * entries were removed before; the errno is in cuabi_last_error_code). */
CUABI_API cuabi_status CUABI_CALL cuabi_cache_clear(uint64_t* entries, uint64_t* bytes);

/* ------------------------------------------------------------------------- */
/* Linking device code, and libraries                                         */
/* ------------------------------------------------------------------------- */

/** What a linker input is. */
typedef enum cuabi_link_input CUABI_ENUM_BASE {
  /** Told by the bytes (ELF: CUBIN; a fatbin; LTO-IR; otherwise PTX text) or,
   * for a file, by its extension (.cubin, .ptx, .fatbin, .ltoir, .o, .a). */
  CUABI_LINK_INPUT_AUTO = 0,
  /** Machine code for one architecture (-rdc=true for code other inputs call). */
  CUABI_LINK_INPUT_CUBIN = 1,
  /** PTX text, compiled for the linker's device. */
  CUABI_LINK_INPUT_PTX = 2,
  /** NVRTC's or nvcc's LTO-IR ("-dlto"); needs the nvJitLink backend. */
  CUABI_LINK_INPUT_LTO_IR = 3,
  /** A fat binary holding CUBIN or PTX for several architectures. */
  CUABI_LINK_INPUT_FATBIN = 4,
  /** A host object holding device code (nvcc -rdc -c). */
  CUABI_LINK_INPUT_OBJECT = 5,
  /** A static library of such objects (a device library compiled once). */
  CUABI_LINK_INPUT_LIBRARY = 6,
  CUABI_LINK_INPUT_FORCE32 = 0x7FFFFFFF
} cuabi_link_input;

/** Which linker does the work. */
typedef enum cuabi_link_backend CUABI_ENUM_BASE {
  /** nvJitLink when it loads, else the driver's linker. */
  CUABI_LINK_BACKEND_AUTO = 0,
  /** nvJitLink (libnvJitLink.so.N, opened on first use like NVRTC; looked for
   * as $CUABI_NVJITLINK_PATH alone when set, else as NVRTC is):
   * LTO-IR and link-time optimisation. */
  CUABI_LINK_BACKEND_NVJITLINK = 1,
  /** The driver's cuLink*: CUBIN, PTX, fatbin, objects and libraries; no
   * LTO-IR and no options. */
  CUABI_LINK_BACKEND_DRIVER = 2,
  CUABI_LINK_BACKEND_FORCE32 = 0x7FFFFFFF
} cuabi_link_backend;

/** Flags for cuabi_link_desc.flags: an OR of cuabi_link_flag_bits. */
typedef uint32_t cuabi_link_flags;
/** The bits of cuabi_link_flags. */
typedef enum cuabi_link_flag_bits CUABI_ENUM_BASE {
  /** Link-time optimisation over the LTO-IR inputs ("-lto"). */
  CUABI_LINK_LTO = 1 << 0,
  /** Neither read nor write the on-disk cache for this link. */
  CUABI_LINK_NO_CACHE = 1 << 1,
  CUABI_LINK_FLAG_BITS_FORCE32 = 0x7FFFFFFF
} cuabi_link_flag_bits;

/** How to link. Start from cuabi_link_desc_init or CUABI_LINK_DESC_INIT. */
typedef struct cuabi_link_desc {
  size_t struct_size; /**< sizeof(cuabi_link_desc) */
  cuabi_link_backend backend; /**< which linker; CUABI_LINK_BACKEND_AUTO by default */
  cuabi_link_flags flags; /**< CUABI_LINK_* */
  /** nvJitLink options ("-O3", "-lineinfo", "-maxrregcount=64"); the target
   * "-arch=sm_XY" of the linker's device is added unless one is given. */
  const char* const* options;
  size_t num_options; /**< the number of `options` */
} cuabi_link_desc;

/** The defaults of cuabi_link_desc as an initialiser (C, C++); cuabi_link_desc_init fills the
 * same. */
#define CUABI_LINK_DESC_INIT \
  { sizeof(cuabi_link_desc), CUABI_LINK_BACKEND_AUTO, 0, NULL, 0 }

/** Fills `desc` with the defaults of CUABI_LINK_DESC_INIT (either backend, no
 * flags, no options). */
CUABI_API cuabi_status CUABI_CALL cuabi_link_desc_init(cuabi_link_desc* desc, size_t struct_size);

/** A linker for `device`: add inputs, then cuabi_linker_link. `desc` NULL:
 * the defaults. CUABI_LINK_BACKEND_NVJITLINK where nvJitLink cannot be
 * loaded answers CUABI_ERROR_NOT_FOUND listing every path tried. */
CUABI_API cuabi_status CUABI_CALL cuabi_linker_create(cuabi_device device,
                                                      const cuabi_link_desc* desc,
                                                      cuabi_linker* out);
/** Releases the linker and the inputs it copied. A module it linked does not
 * need it. */
CUABI_API void CUABI_CALL cuabi_linker_release(cuabi_linker linker);
/** The backend the linker uses (AUTO resolved). */
CUABI_API cuabi_status CUABI_CALL cuabi_linker_get_backend(cuabi_linker linker,
                                                           cuabi_link_backend* backend);
/** Adds the `size` bytes at `data` as an input of `kind`; `name` (NULL:
 * "input<N>") names the input in the log. The bytes are copied. NULL data,
 * 0 bytes, or AUTO for bytes that are no input cuabi can tell answer
 * CUABI_ERROR_INVALID_ARGUMENT; an input the backend cannot take (LTO-IR
 * for the driver) answers CUABI_ERROR_NOT_SUPPORTED. */
CUABI_API cuabi_status CUABI_CALL cuabi_linker_add_data(cuabi_linker linker,
                                                        cuabi_link_input kind, const void* data,
                                                        size_t size, const char* name);
/** Adds the file at `path` as an input of `kind` (read now: a later change
 * to the file is not seen); AUTO goes by the file's extension, then its
 * bytes. The refusals of cuabi_linker_add_data, and CUABI_ERROR_IO (the
 * errno in cuabi_last_error_code) when the file cannot be opened or read. */
CUABI_API cuabi_status CUABI_CALL cuabi_linker_add_file(cuabi_linker linker,
                                                        cuabi_link_input kind, const char* path);
/** Adds a compiled program's output: its LTO-IR when compiled with "-dlto",
 * else its CUBIN, else its PTX. Compile device code meant for another
 * program's kernels with "-rdc=true" (or "-dlto"). */
CUABI_API cuabi_status CUABI_CALL cuabi_linker_add_program(cuabi_linker linker,
                                                           cuabi_program program);
/** Links what was added and loads the result on the linker's device. A
 * linker links once. Linked images go through the compile cache, keyed on
 * every input's kind, name and bytes, the options, the backend, the target
 * and the library and driver versions; cuabi_module_get_from_cache says
 * whether this one came from it. A link error answers CUABI_ERROR_COMPILE
 * with the linker's log (cuabi_last_error_log, cuabi_linker_get_log). */
CUABI_API cuabi_status CUABI_CALL cuabi_linker_link(cuabi_linker linker, cuabi_module* out);
/** The link's log, information and errors (two-call pattern); "" before
 * linking and after a link served from the cache. */
CUABI_API cuabi_status CUABI_CALL cuabi_linker_get_log(cuabi_linker linker, char* buf,
                                                       size_t* size);
/** The linked CUBIN (two-call pattern; binary), for loading elsewhere (a
 * library, another device of the same architecture, a file).
 * CUABI_ERROR_NOT_FOUND before a successful link. */
CUABI_API cuabi_status CUABI_CALL cuabi_linker_get_image(cuabi_linker linker, void* buf,
                                                         size_t* size);

/** Loads an image (CUBIN, PTX or fatbin bytes, as cuabi_module_load_data
 * takes them: the `size` bytes at `image`) as a library (cuLibraryLoadData,
 * CUDA 12+): loaded once, usable in every device's context, which is what
 * the driver recommends for code not tied to one context. Bytes that are
 * no image answer CUABI_ERROR_INVALID_ARGUMENT here, not at their first
 * use. */
CUABI_API cuabi_status CUABI_CALL cuabi_library_load_data(const void* image, size_t size,
                                                          cuabi_library* out);
/** Loads a CUBIN, PTX or fatbin file as a library: the bytes at `path`, read
 * whole, as cuabi_library_load_data loads them. CUABI_ERROR_IO (the errno
 * in cuabi_last_error_code) when the file cannot be opened or read. */
CUABI_API cuabi_status CUABI_CALL cuabi_library_load_file(const char* path, cuabi_library* out);
/** Unloads the library once no module made from it is in use. */
CUABI_API void CUABI_CALL cuabi_library_release(cuabi_library library);
/** The library as a module of `device`'s context: its kernels
 * (cuabi_module_get_function, plain C++ names included), globals and
 * listing, without loading the image again. The module keeps the library
 * alive. */
CUABI_API cuabi_status CUABI_CALL cuabi_library_get_module(cuabi_library library,
                                                           cuabi_device device,
                                                           cuabi_module* out);

/* ------------------------------------------------------------------------- */
/* Launch                                                                     */
/* ------------------------------------------------------------------------- */

/** Flags for cuabi_launch_config.flags: an OR of cuabi_launch_flag_bits. */
typedef uint32_t cuabi_launch_flags;
/** The bits of cuabi_launch_flags. */
typedef enum cuabi_launch_flag_bits CUABI_ENUM_BASE {
  /** A cooperative launch: every block of the grid is resident at once, so
   * the kernel may synchronise the whole grid (cooperative groups'
   * grid.sync()). A grid larger than the device can keep resident for this
   * block size and shared memory is refused before the driver sees it. */
  CUABI_LAUNCH_COOPERATIVE = 1 << 0,
  /** Programmatic dependent launch: this kernel may start before the
   * previous kernel on its stream has finished, once every block of that
   * kernel has called cudaTriggerProgrammaticLaunchCompletion() or exited;
   * it must call cudaGridDependencySynchronize() before reading what the
   * previous kernel wrote. */
  CUABI_LAUNCH_PROGRAMMATIC_SERIALIZATION = 1 << 1,
  /** With programmatic_event: the event fires when every block has started,
   * instead of when every block has triggered or exited. */
  CUABI_LAUNCH_PROGRAMMATIC_EVENT_AT_BLOCK_START = 1 << 2,
  /** The kernel node this launch makes when its stream captures a graph is
   * device-updatable (its arguments may be changed from a kernel). Only for
   * a launch on a stream that is capturing; a launch outside a capture is
   * refused before the driver sees it. A graph with such a node is
   * instantiated once. */
  CUABI_LAUNCH_DEVICE_UPDATABLE_KERNEL_NODE = 1 << 3,
  CUABI_LAUNCH_FLAG_BITS_FORCE32 = 0x7FFFFFFF
} cuabi_launch_flag_bits;

/** How a host thread waits in a synchronize on the stream's work. */
typedef enum cuabi_sync_policy {
  /** The driver's choice (the default). */
  CUABI_SYNC_POLICY_AUTO = 1,
  /** Spin on the CPU: the lowest latency, a busy core. */
  CUABI_SYNC_POLICY_SPIN = 2,
  /** Spin, yielding the core to other threads between checks. */
  CUABI_SYNC_POLICY_YIELD = 3,
  /** Sleep until the work is done: an idle core, more latency. */
  CUABI_SYNC_POLICY_BLOCKING_SYNC = 4,
  CUABI_SYNC_POLICY_FORCE32 = 0x7FFFFFFF
} cuabi_sync_policy;

/** The memory-synchronisation domain of a stream's kernels: a fence in one
 * domain need not wait for the memory traffic of the other (kernels that
 * talk to other GPUs, such as NCCL's, run in the remote one). */
typedef enum cuabi_mem_sync_domain {
  /** The domain of a stream's kernels unless set. */
  CUABI_MEM_SYNC_DOMAIN_DEFAULT = 0,
  /** The domain for kernels that talk to other GPUs. */
  CUABI_MEM_SYNC_DOMAIN_REMOTE = 1,
  CUABI_MEM_SYNC_DOMAIN_FORCE32 = 0x7FFFFFFF
} cuabi_mem_sync_domain;

/** How accesses to memory are kept in L2. */
typedef enum cuabi_access_property {
  /** Kept in L2 as any access is. */
  CUABI_ACCESS_PROPERTY_NORMAL = 0,
  /** Less likely to stay in L2. */
  CUABI_ACCESS_PROPERTY_STREAMING = 1,
  /** More likely to stay in L2, in the part set aside with
   * CUABI_LIMIT_PERSISTING_L2_CACHE_SIZE. */
  CUABI_ACCESS_PROPERTY_PERSISTING = 2,
  CUABI_ACCESS_PROPERTY_FORCE32 = 0x7FFFFFFF
} cuabi_access_property;

/** An L2 access-policy window: of the accesses to [base, base + bytes), the
 * fraction hit_ratio gets hit_property and the rest miss_property. Start
 * from CUABI_ACCESS_POLICY_WINDOW_INIT or cuabi_access_policy_window_init. */
typedef struct cuabi_access_policy_window {
  size_t struct_size; /**< sizeof(cuabi_access_policy_window) */
  /** The device address where the window starts. */
  uint64_t base;
  /** The window's length; at most the device's
   * CU_DEVICE_ATTRIBUTE_MAX_ACCESS_POLICY_WINDOW_SIZE; 0: no window. */
  size_t bytes;
  /** From 0 to 1. */
  float hit_ratio;
  cuabi_access_property hit_property;  /**< the property of the hit_ratio fraction */
  cuabi_access_property miss_property; /**< the property of the other accesses */
} cuabi_access_policy_window;

/** The defaults of cuabi_access_policy_window as an initialiser (C, C++);
 * cuabi_access_policy_window_init fills the same. */
#define CUABI_ACCESS_POLICY_WINDOW_INIT                                                         \
  { sizeof(cuabi_access_policy_window), 0, 0, 1.0f, CUABI_ACCESS_PROPERTY_PERSISTING,           \
    CUABI_ACCESS_PROPERTY_STREAMING }

/** How a cluster's blocks are placed on the device's multiprocessors
 * (cuabi_launch_config.cluster_scheduling_policy). */
typedef enum cuabi_cluster_scheduling_policy CUABI_ENUM_BASE {
  /** The driver's choice. */
  CUABI_CLUSTER_SCHEDULING_DEFAULT = 0,
  /** A cluster's blocks spread over the multiprocessors. */
  CUABI_CLUSTER_SCHEDULING_SPREAD = 1,
  /** The hardware balances a cluster's blocks over the multiprocessors. */
  CUABI_CLUSTER_SCHEDULING_LOAD_BALANCING = 2,
  CUABI_CLUSTER_SCHEDULING_POLICY_FORCE32 = 0x7FFFFFFF
} cuabi_cluster_scheduling_policy;

/** How a kernel is launched. Start from cuabi_launch_config_init or
 * CUABI_LAUNCH_CONFIG_INIT. The fields after shared_mem_bytes came with
 * version 0.2 and the launch attributes after programmatic_event with 0.3;
 * a struct from an older header (struct_size 40 or 64) is read with the
 * defaults of the fields it lacks. A configuration that uses any of them
 * goes through the driver's extended launch (cuLaunchKernelEx). */
typedef struct cuabi_launch_config {
  size_t struct_size; /**< sizeof(cuabi_launch_config) */
  /**@{*/
  uint32_t grid_x, grid_y, grid_z; /**< The grid's dimensions, in blocks (each > 0). */
  /**@}*/
  /**@{*/
  uint32_t block_x, block_y, block_z; /**< The block's dimensions, in threads (each > 0). */
  /**@}*/
  uint32_t shared_mem_bytes; /**< dynamic shared memory per block, in bytes */
  cuabi_launch_flags flags; /**< CUABI_LAUNCH_* */
  /**@{*/
  /** Thread-block cluster dimensions in blocks; 0, 0, 0 for no cluster. Each
   * must divide the grid's dimension. At most 8 blocks per cluster unless
   * the kernel allows more (CUABI_FUNC_NON_PORTABLE_CLUSTER_SIZE_ALLOWED) and
   * the device can run them (cuabi_function_get_max_cluster_size). */
  uint32_t cluster_x, cluster_y, cluster_z;
  /**@}*/
  /** The launch's priority; 0 keeps the stream's. Within
   * cuabi_device_get_stream_priority_range. */
  int32_t priority;
  /** Recorded when the kernel's blocks trigger (or start, with
   * CUABI_LAUNCH_PROGRAMMATIC_EVENT_AT_BLOCK_START); a later kernel that
   * waits for it may overlap this one's tail. NULL: none. The event must be
   * made with CUABI_EVENT_DISABLE_TIMING on the kernel's device. */
  cuabi_event programmatic_event;
  /* Launch attributes (0.3). A configuration with none of them set costs a
   * launch nothing more; each set one is checked against the kernel and the
   * device before the driver sees it. They reach the kernel node a captured
   * launch makes as they reach a launch. */
  /** The L2 access-policy window of this kernel's accesses; bytes 0 (the
   * default): none, the stream's applies. Refused with the bound: bytes past
   * the device's CU_DEVICE_ATTRIBUTE_MAX_ACCESS_POLICY_WINDOW_SIZE, a
   * hit_ratio outside [0, 1], an unknown property, a base of 0. Its
   * struct_size is not read (the config's versions it). */
  cuabi_access_policy_window access_policy_window;
  /** How a host thread waits for this kernel; 0 (the default): the
   * stream's. The driver takes a synchronization policy for a stream only:
   * a known cuabi_sync_policy here answers CUABI_ERROR_NOT_SUPPORTED (set it
   * with cuabi_stream_set_sync_policy), an unknown one
   * CUABI_ERROR_INVALID_ARGUMENT. */
  cuabi_sync_policy sync_policy;
  /** How a cluster's blocks are placed on multiprocessors; the default
   * (CUABI_CLUSTER_SCHEDULING_DEFAULT) leaves it to the driver. Another
   * needs a device that launches clusters. */
  cuabi_cluster_scheduling_policy cluster_scheduling_policy;
  /** The kernel's memory-synchronisation domain, a cuabi_mem_sync_domain;
   * -1 (the default): the stream's. */
  int32_t mem_sync_domain;
  /** The domain map: the domain ids the default and the remote domain stand
   * for, each below the device's CU_DEVICE_ATTRIBUTE_MEM_SYNC_DOMAIN_COUNT;
   * both -1 (the default): the stream's map. Both are given or neither. */
  int32_t mem_sync_domain_map_default;
  int32_t mem_sync_domain_map_remote; /**< see mem_sync_domain_map_default */
  /** The preferred shared-memory carve-out, in percent of the most shared
   * memory (0: the most L1, 100: the most shared memory), from 0 to 100; -1
   * (the default): the kernel's (CUABI_FUNC_PREFERRED_SHARED_MEMORY_CARVEOUT
   * or the driver's choice). A hint the driver may not follow. */
  int32_t shared_carveout;
  /** Recorded once every block of the kernel has started (best effort: no
   * earlier than that), so that work on another stream that waits for it
   * may overlap the kernel. NULL (the default): none. The event must be made
   * with CUABI_EVENT_DISABLE_TIMING on the kernel's device and not be
   * interprocess. */
  cuabi_event completion_event;
} cuabi_launch_config;

/** The defaults of cuabi_launch_config as an initialiser (C, C++); cuabi_launch_config_init
 * fills the same. */
#define CUABI_LAUNCH_CONFIG_INIT                                                          \
  { sizeof(cuabi_launch_config), 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, NULL,                \
    CUABI_ACCESS_POLICY_WINDOW_INIT, (cuabi_sync_policy)0,                                \
    CUABI_CLUSTER_SCHEDULING_DEFAULT, -1, -1, -1, -1, NULL }

/** Fills `config` with the defaults of CUABI_LAUNCH_CONFIG_INIT (a 1x1x1 grid
 * of 1x1x1 blocks, no dynamic shared memory, no flags, no cluster, the
 * stream's priority, no programmatic event). `struct_size` is the size of
 * the caller's struct, sizeof(cuabi_launch_config) of the header it was
 * built with: a smaller, older struct gets the fields it has, a larger one
 * gets zeros past the fields this library knows. CUABI_ERROR_INVALID_ARGUMENT
 * for NULL or a size smaller than the first version of the struct. */
CUABI_API cuabi_status CUABI_CALL cuabi_launch_config_init(cuabi_launch_config* config,
                                                           size_t struct_size);

/** Launches `function` with the configuration `config` (its grid, block,
 * shared memory and the extended options of cuabi_launch_config) on `stream`
 * (NULL: the device's default stream) with the driver's own argument
 * convention, as cuLaunchKernel takes it: `params` holds `num_params`
 * pointers, each to one argument's value.
 *
 * The configuration is checked before the driver sees it (no zero dimension,
 * a block within the kernel's and the device's limits, shared memory within
 * the device's limit), and `num_params` against the kernel's parameter count;
 * a mismatch answers CUABI_ERROR_INVALID_ARGUMENT and the message says which.
 * The sizes behind the pointers cannot be checked here: use
 * cuabi_function_launch_sized or cuabi_function_launch_packed for that. */
CUABI_API cuabi_status CUABI_CALL cuabi_function_launch(cuabi_function function,
                                               const cuabi_launch_config* config,
                                               cuabi_stream stream, void* const* params,
                                               size_t num_params);
/** As cuabi_function_launch (`config`, `stream`, `params` and `num_params`
 * the same), and each argument's size in bytes is checked against the
 * kernel's parameter: `param_sizes` holds `num_params` sizes, one for each
 * pointer of `params`. Passing a 4-byte value to a size_t parameter answers
 * CUABI_ERROR_INVALID_ARGUMENT naming the parameter, instead of running.
 * @param param_sizes array_in count=num_params */
CUABI_API cuabi_status CUABI_CALL cuabi_function_launch_sized(cuabi_function function,
                                                     const cuabi_launch_config* config,
                                                     cuabi_stream stream, void* const* params,
                                                     const size_t* param_sizes,
                                                     size_t num_params);
/** As cuabi_function_launch (`config` and `stream` the same), with every
 * argument in one block, `args`, laid out at the kernel's parameter offsets
 * (cuabi_function_get_params); `args_size` must equal
 * cuabi_function_get_args_size. One foreign call per launch for a binding. */
CUABI_API cuabi_status CUABI_CALL cuabi_function_launch_packed(cuabi_function function,
                                                      const cuabi_launch_config* config,
                                                      cuabi_stream stream, const void* args,
                                                      size_t args_size);

/** A prepared launch of `function` with `config` on `stream` (NULL: the
 * device's default stream): the function, configuration and stream checked
 * once, as cuabi_function_launch checks them, and an argument block owned by
 * the plan, laid out at the kernel's parameter offsets. A binding writes the
 * arguments into that block in place and launches with one call of one
 * argument: the fastest way to launch the same kernel many times. The plan
 * keeps its function and stream alive. Launching reads the block as it is at
 * the call; one thread at a time should write a plan's block and launch it
 * (plans are cheap: make one per thread). */
CUABI_API cuabi_status CUABI_CALL cuabi_launch_plan_create(cuabi_function function,
                                                           const cuabi_launch_config* config,
                                                           cuabi_stream stream,
                                                           cuabi_launch_plan* out);
/** Frees the plan and its argument block (the address
 * cuabi_launch_plan_get_args gave is then invalid), and lets go of the
 * function and stream it kept alive. */
CUABI_API void CUABI_CALL cuabi_launch_plan_release(cuabi_launch_plan plan);
/** The plan's argument block: its address in `args` (valid until the plan
 * is released, zero-filled at creation, 64-byte aligned) and its size in
 * `size`, which equals cuabi_function_get_args_size. */
CUABI_API cuabi_status CUABI_CALL cuabi_launch_plan_get_args(cuabi_launch_plan plan, void** args,
                                                             size_t* size);
/** Launches the plan's function with the block's current contents. */
CUABI_API cuabi_status CUABI_CALL cuabi_launch_plan_launch(cuabi_launch_plan plan);

/* ------------------------------------------------------------------------- */
/* Occupancy                                                                  */
/* ------------------------------------------------------------------------- */

/** How many blocks of `block_size` threads, each with `dynamic_shared_bytes`
 * of dynamic shared memory, one multiprocessor keeps resident at once. */
CUABI_API cuabi_status CUABI_CALL cuabi_function_get_active_blocks_per_sm(
    cuabi_function function, uint32_t block_size, size_t dynamic_shared_bytes,
    uint32_t* blocks);
/** The block size that maximises occupancy, in `block_size`, and the
 * smallest grid that fills the device at that size, in `min_grid_size`.
 * Each block uses `shared_bytes_per_block` + `shared_bytes_per_thread` *
 * block size of dynamic shared memory (no callback crosses the ABI). Where
 * two sizes give the same occupancy the larger wins, as with the driver's
 * cuOccupancyMaxPotentialBlockSize. `block_size_limit` caps the answer (0:
 * the kernel's own limit; a limit above the kernel's own is refused). */
CUABI_API cuabi_status CUABI_CALL cuabi_function_suggest_block_size(
    cuabi_function function, size_t shared_bytes_per_block, size_t shared_bytes_per_thread,
    uint32_t block_size_limit, uint32_t* block_size, uint32_t* min_grid_size);
/** A launch configuration, written into `config`, for `elements` independent
 * work items, one per thread: a 1-D block of the size
 * cuabi_function_suggest_block_size gives, and as many blocks as cover
 * `elements` (at most the device's grid limit), with shared_mem_bytes set
 * from the two shared-memory rules (`shared_bytes_per_block`,
 * `shared_bytes_per_thread`, as cuabi_function_suggest_block_size takes
 * them). The other fields are the defaults. `config->struct_size` must be
 * set; `elements` = 0 is refused. */
CUABI_API cuabi_status CUABI_CALL cuabi_function_suggest_config(
    cuabi_function function, uint64_t elements, size_t shared_bytes_per_block,
    size_t shared_bytes_per_thread, cuabi_launch_config* config);
/** The most dynamic shared memory, in `bytes`, each block can have while
 * `blocks_per_sm` blocks of `block_size` threads stay resident on one
 * multiprocessor. */
CUABI_API cuabi_status CUABI_CALL cuabi_function_get_available_dynamic_shared(
    cuabi_function function, uint32_t blocks_per_sm, uint32_t block_size, size_t* bytes);
/** The largest cluster size (in blocks) the device can run `function` with,
 * in `cluster_size`, for `config`'s grid, block and shared memory (its
 * cluster fields are not read). */
CUABI_API cuabi_status CUABI_CALL cuabi_function_get_max_cluster_size(
    cuabi_function function, const cuabi_launch_config* config, uint32_t* cluster_size);
/** How many clusters of `config`'s cluster dimensions can be resident on the
 * device at once. */
CUABI_API cuabi_status CUABI_CALL cuabi_function_get_max_active_clusters(
    cuabi_function function, const cuabi_launch_config* config, uint32_t* clusters);

/* ------------------------------------------------------------------------- */
/* Device memory                                                              */
/* ------------------------------------------------------------------------- */

/** Allocates `bytes` (> 0) of device memory. */
CUABI_API cuabi_status CUABI_CALL cuabi_buffer_alloc(cuabi_device device, size_t bytes,
                                                     cuabi_buffer* out);
/** Wraps device memory owned by someone else (CuPy, PyTorch, the runtime)
 * without taking ownership: release frees nothing. `device_ptr` is the
 * memory's device address (a CUdeviceptr) and `bytes` its size; neither may
 * be 0 (CUABI_ERROR_INVALID_ARGUMENT). The owner must keep it alive while
 * the buffer is used. */
CUABI_API cuabi_status CUABI_CALL cuabi_buffer_wrap(cuabi_device device, uint64_t device_ptr,
                                                    size_t bytes, cuabi_buffer* out);
/** Frees the buffer's memory as its kind says (cuabi_buffer_kind), once no
 * texture object reads it: a stream-ordered buffer in order on the stream
 * it was allocated on, a wrapped buffer not at all (its owner frees it), an
 * IPC buffer by unmapping, once the last buffer opened over that mapping is
 * released. */
CUABI_API void CUABI_CALL cuabi_buffer_release(cuabi_buffer buffer);
/** The raw CUdeviceptr in `ptr`, for interop and as a kernel argument. */
CUABI_API cuabi_status CUABI_CALL cuabi_buffer_get_pointer(cuabi_buffer buffer, uint64_t* ptr);
/** The buffer's size in bytes, as allocated, wrapped or opened (a pitched
 * buffer's is pitch * height). */
CUABI_API cuabi_status CUABI_CALL cuabi_buffer_get_size(cuabi_buffer buffer, size_t* bytes);
/** The ordinal of the device the buffer's memory belongs to. */
CUABI_API cuabi_status CUABI_CALL cuabi_buffer_get_device_ordinal(cuabi_buffer buffer,
                                                                  int32_t* ordinal);

/**@{*/
/** Every copy is checked against the buffers' sizes first: a range past the
 * end answers CUABI_ERROR_OUT_OF_RANGE before the driver sees it. A copy of 0
 * bytes succeeds and does nothing. `bytes` bytes are copied from byte
 * `src_offset` of the buffer `src` or into byte `dst_offset` of the buffer
 * `dst`; the host side is the host address `src` (to the device) or `dst`
 * (from it).
 * The synchronous forms (no stream argument) run on the default stream after
 * the work already queued there, and return once the device has finished
 * them. They are not ordered against streams made with
 * CUABI_STREAM_NON_BLOCKING: synchronise such a stream first.
 * The *_async forms are ordered on `stream` (NULL: the default stream) and
 * return at once; the host memory must stay valid until the stream reaches
 * the copy, and is copied asynchronously only if it is pinned
 * (cuabi_host_buffer_alloc, cuabi_host_buffer_register). */
CUABI_API cuabi_status CUABI_CALL cuabi_buffer_copy_from_host(cuabi_buffer dst, size_t dst_offset,
                                                              const void* src, size_t bytes);
CUABI_API cuabi_status CUABI_CALL cuabi_buffer_copy_to_host(cuabi_buffer src, size_t src_offset,
                                                            void* dst, size_t bytes);
CUABI_API cuabi_status CUABI_CALL cuabi_buffer_copy_from_host_async(cuabi_buffer dst,
                                                                    size_t dst_offset,
                                                                    const void* src, size_t bytes,
                                                                    cuabi_stream stream);
CUABI_API cuabi_status CUABI_CALL cuabi_buffer_copy_to_host_async(cuabi_buffer src,
                                                                  size_t src_offset, void* dst,
                                                                  size_t bytes,
                                                                  cuabi_stream stream);
/**@}*/
/**@{*/
/** Device to device, on one device or between two (directly or through the
 * host: cuabi_buffer_get_copy_path): `bytes` bytes from byte `src_offset` of
 * `src` to byte `dst_offset` of `dst`, checked against both buffers' sizes
 * as above (CUABI_ERROR_OUT_OF_RANGE). Overlapping ranges of the same memory
 * answer CUABI_ERROR_INVALID_ARGUMENT. The *_async form is ordered on
 * `stream` (NULL: the default stream), which must be of `dst`'s device. */
CUABI_API cuabi_status CUABI_CALL cuabi_buffer_copy(cuabi_buffer dst, size_t dst_offset,
                                                    cuabi_buffer src, size_t src_offset,
                                                    size_t bytes);
CUABI_API cuabi_status CUABI_CALL cuabi_buffer_copy_async(cuabi_buffer dst, size_t dst_offset,
                                                          cuabi_buffer src, size_t src_offset,
                                                          size_t bytes, cuabi_stream stream);
/**@}*/
/**@{*/
/** Sets `bytes` bytes from byte `offset` of `buffer` to `value`; a range past
 * the buffer's end answers CUABI_ERROR_OUT_OF_RANGE, and 0 bytes do nothing.
 * The synchronous form returns once the device has finished; the *_async
 * form is ordered on `stream` (NULL: the default stream). */
CUABI_API cuabi_status CUABI_CALL cuabi_buffer_memset(cuabi_buffer buffer, size_t offset,
                                                      uint8_t value, size_t bytes);
CUABI_API cuabi_status CUABI_CALL cuabi_buffer_memset_async(cuabi_buffer buffer, size_t offset,
                                                            uint8_t value, size_t bytes,
                                                            cuabi_stream stream);
/**@}*/

/* ------------------------------------------------------------------------- */
/* Page-locked host memory                                                    */
/* ------------------------------------------------------------------------- */

/** Allocates `bytes` (> 0) of pinned host memory, usable from every context. */
CUABI_API cuabi_status CUABI_CALL cuabi_host_buffer_alloc(cuabi_device device, size_t bytes,
                                                   cuabi_host_buffer* out);
/** Pins existing host memory in place (e.g. a NumPy array's data) until the
 * handle is released: the `bytes` bytes at `ptr` (neither NULL nor 0:
 * CUABI_ERROR_INVALID_ARGUMENT). The memory must outlive the handle.
 * @idiom host_view */
CUABI_API cuabi_status CUABI_CALL cuabi_host_buffer_register(cuabi_device device, void* ptr,
                                                      size_t bytes, cuabi_host_buffer* out);
/** Frees (cuabi_host_buffer_alloc) or unpins (cuabi_host_buffer_register) the memory. */
CUABI_API void CUABI_CALL cuabi_host_buffer_release(cuabi_host_buffer buffer);
/** The host address of the pinned memory: the allocation, or the `ptr` that
 * was registered. Valid while the handle lives. */
CUABI_API cuabi_status CUABI_CALL cuabi_host_buffer_get_pointer(cuabi_host_buffer buffer,
                                                                void** ptr);
/** The pinned memory's size in bytes, as allocated or registered. */
CUABI_API cuabi_status CUABI_CALL cuabi_host_buffer_get_size(cuabi_host_buffer buffer,
                                                             size_t* bytes);

/* ------------------------------------------------------------------------- */
/* Kinds of device memory                                                     */
/* ------------------------------------------------------------------------- */

/** How a buffer's memory was obtained; decides how it is freed. */
typedef enum cuabi_buffer_kind CUABI_ENUM_BASE {
  /** cuabi_buffer_alloc (cuMemAlloc). */
  CUABI_BUFFER_DEVICE = 0,
  /** cuabi_buffer_alloc_async: from a memory pool, in stream order. */
  CUABI_BUFFER_STREAM_ORDERED = 1,
  /** cuabi_buffer_alloc_managed: visible to the host and every device. */
  CUABI_BUFFER_MANAGED = 2,
  /** cuabi_buffer_alloc_pitched: rows padded to the device's alignment. */
  CUABI_BUFFER_PITCHED = 3,
  /** cuabi_buffer_wrap: owned by someone else; release frees nothing. */
  CUABI_BUFFER_WRAPPED = 4,
  /** cuabi_buffer_open_ipc: another process's memory, mapped here. */
  CUABI_BUFFER_IPC = 5,
  /** cuabi_buffer_alloc_growable: reserved addresses with memory mapped
   * behind them as the buffer grows (cuabi_buffer_grow). */
  CUABI_BUFFER_GROWABLE = 6,
  /** cuabi_buffer_from_range: a view of memory mapped into an address range,
   * which it keeps alive; release unmaps nothing. */
  CUABI_BUFFER_RANGE = 7,
  CUABI_BUFFER_KIND_FORCE32 = 0x7FFFFFFF
} cuabi_buffer_kind;

/** How the buffer's memory was obtained, in `kind` (cuabi_buffer_kind). */
CUABI_API cuabi_status CUABI_CALL cuabi_buffer_get_kind(cuabi_buffer buffer,
                                                        cuabi_buffer_kind* kind);

/** A location for prefetches and advice: a device ordinal, or the host. */
#define CUABI_LOCATION_HOST (-1)

/* ------------------------------------------------------------------------- */
/* Stream-ordered allocation and memory pools                                 */
/* ------------------------------------------------------------------------- */

/** Flags for cuabi_memory_pool_desc: an OR of cuabi_memory_pool_flag_bits. */
typedef uint32_t cuabi_memory_pool_flags;
/** The bits of cuabi_memory_pool_flags. */
typedef enum cuabi_memory_pool_flag_bits CUABI_ENUM_BASE {
  /** The pool can be shared with other processes as a file descriptor
   * (cuabi_memory_pool_export_fd), and its allocations through
   * cuabi_buffer_get_ipc_handle. */
  CUABI_MEMORY_POOL_IPC = 1 << 0,
  CUABI_MEMORY_POOL_FLAG_BITS_FORCE32 = 0x7FFFFFFF
} cuabi_memory_pool_flag_bits;

/** A new pool's properties. Start from cuabi_memory_pool_desc_init or
 * CUABI_MEMORY_POOL_DESC_INIT. */
typedef struct cuabi_memory_pool_desc {
  size_t struct_size; /**< sizeof(cuabi_memory_pool_desc) */
  /** The most the pool may reserve, in bytes; 0: no limit but the device's. */
  uint64_t max_bytes;
  /** Memory the pool keeps reserved when a stream synchronizes instead of
   * giving it back to the device, in bytes (0: give everything back). */
  uint64_t release_threshold;
  cuabi_memory_pool_flags flags; /**< CUABI_MEMORY_POOL_* */
} cuabi_memory_pool_desc;

/** The defaults of cuabi_memory_pool_desc as an initialiser (C, C++);
 * cuabi_memory_pool_desc_init fills the same. */
#define CUABI_MEMORY_POOL_DESC_INIT { sizeof(cuabi_memory_pool_desc), 0, 0, 0 }

/** Fills `desc` with the defaults of CUABI_MEMORY_POOL_DESC_INIT (as
 * cuabi_launch_config_init does for its struct). */
CUABI_API cuabi_status CUABI_CALL cuabi_memory_pool_desc_init(cuabi_memory_pool_desc* desc,
                                                              size_t struct_size);
/** A new pool of `device`'s memory. `desc` NULL: the defaults. */
CUABI_API cuabi_status CUABI_CALL cuabi_memory_pool_create(cuabi_device device,
                                                           const cuabi_memory_pool_desc* desc,
                                                           cuabi_memory_pool* out);
/** The device's default pool, the one cuabi_buffer_alloc_async uses when
 * given no pool (and the CUDA runtime's cudaMallocAsync, CuPy's and
 * PyTorch's stream-ordered allocators share). Releasing the handle leaves
 * the pool itself alone. */
CUABI_API cuabi_status CUABI_CALL cuabi_device_get_default_memory_pool(cuabi_device device,
                                                                       cuabi_memory_pool* out);
/** Destroys a pool made here once every buffer allocated from it is freed
 * (buffers keep their pool alive). */
CUABI_API void CUABI_CALL cuabi_memory_pool_release(cuabi_memory_pool pool);
/** Sets the memory, in `bytes`, that the pool keeps reserved when a stream
 * synchronizes instead of giving it back to the device (0: give everything
 * back; cuabi_memory_pool_desc.release_threshold). */
CUABI_API cuabi_status CUABI_CALL cuabi_memory_pool_set_release_threshold(cuabi_memory_pool pool,
                                                                          uint64_t bytes);
/** The pool's release threshold in bytes (see
 * cuabi_memory_pool_set_release_threshold). */
CUABI_API cuabi_status CUABI_CALL cuabi_memory_pool_get_release_threshold(cuabi_memory_pool pool,
                                                                          uint64_t* bytes);
/** Gives reserved memory back to the device until the pool holds at most
 * `keep_bytes` it is not using; memory in use is never given back. */
CUABI_API cuabi_status CUABI_CALL cuabi_memory_pool_trim(cuabi_memory_pool pool,
                                                         size_t keep_bytes);
/** The bytes the pool has reserved from the device, in `reserved_bytes`,
 * and of those the bytes its live allocations use, in `used_bytes`. */
CUABI_API cuabi_status CUABI_CALL cuabi_memory_pool_get_usage(cuabi_memory_pool pool,
                                                              uint64_t* reserved_bytes,
                                                              uint64_t* used_bytes);
/** A new file descriptor for the pool in `fd`, owned by the caller: pass it
 * to another process (inherit it, or send it over a Unix socket) for
 * cuabi_memory_pool_import_fd, then close it. A pool made without
 * CUABI_MEMORY_POOL_IPC, or one imported, answers
 * CUABI_ERROR_INVALID_ARGUMENT. */
CUABI_API cuabi_status CUABI_CALL cuabi_memory_pool_export_fd(cuabi_memory_pool pool,
                                                              int32_t* fd);
/** Opens a pool another process exported, on `device`. `fd` stays the
 * caller's to close. */
CUABI_API cuabi_status CUABI_CALL cuabi_memory_pool_import_fd(cuabi_device device, int32_t fd,
                                                              cuabi_memory_pool* out);

/** Allocates `bytes` (> 0) in stream order on `stream` (NULL: the default
 * stream) from `pool` (NULL: the device's default pool): the memory may be
 * used by work on `stream` queued after this call, and by other streams
 * once they wait for it (an event). Cheap, does not synchronise the device,
 * and can be captured into a graph (the graph then owns an allocation node;
 * free the buffer in the same capture with cuabi_buffer_free_async, or
 * after the graph ran).
 * Releasing the buffer frees it in order on the stream it was allocated on
 * (kept alive by the buffer): work on other streams that uses it must be
 * ordered before that stream or be finished. */
CUABI_API cuabi_status CUABI_CALL cuabi_buffer_alloc_async(cuabi_device device, size_t bytes,
                                                           cuabi_memory_pool pool,
                                                           cuabi_stream stream,
                                                           cuabi_buffer* out);
/** Frees a stream-ordered buffer in order on `stream` (NULL: the default
 * stream), after the work queued there before it, and releases the handle:
 * cuabi never touches that memory again and the handle answers
 * CUABI_ERROR_INVALID_HANDLE from then on. A buffer of another kind answers
 * CUABI_ERROR_INVALID_ARGUMENT (release it instead); so does a buffer a
 * texture object still uses; the handle stays valid after these refusals.
 * Once the checks pass the handle is released even if the driver then
 * refuses the free: the buffer is then freed as its release frees it. */
CUABI_API cuabi_status CUABI_CALL cuabi_buffer_free_async(cuabi_buffer buffer,
                                                          cuabi_stream stream);

/* Allocation that answers the address too: one call per buffer for a
 * binding's object (its handle and its address), where cuabi_buffer_alloc
 * or cuabi_buffer_alloc_async and then cuabi_buffer_get_pointer take two. */

/** cuabi_buffer_alloc (`bytes` > 0 of device memory, cuMemAlloc) that also
 * answers the new buffer's device address in `ptr`, as
 * cuabi_buffer_get_pointer would. The same checks and statuses as
 * cuabi_buffer_alloc (CUABI_ERROR_OUT_OF_MEMORY when the device has too
 * little memory); on failure neither `out` nor `ptr` is written. */
CUABI_API cuabi_status CUABI_CALL cuabi_buffer_alloc_with_pointer(cuabi_device device,
                                                                  size_t bytes,
                                                                  cuabi_buffer* out,
                                                                  uint64_t* ptr);
/** cuabi_buffer_alloc_async that also answers the new buffer's device
 * address in `ptr`, as cuabi_buffer_get_pointer would: `bytes` (> 0) in
 * stream order on `stream` (NULL: the default stream) from `pool` (NULL: the
 * device's default pool). The same checks, statuses and stream order as
 * cuabi_buffer_alloc_async (CUABI_ERROR_OUT_OF_MEMORY when the pool cannot
 * grow); on failure neither `out` nor `ptr` is written. */
CUABI_API cuabi_status CUABI_CALL cuabi_buffer_alloc_async_with_pointer(cuabi_device device,
                                                                        size_t bytes,
                                                                        cuabi_memory_pool pool,
                                                                        cuabi_stream stream,
                                                                        cuabi_buffer* out,
                                                                        uint64_t* ptr);

/* ------------------------------------------------------------------------- */
/* Managed (unified) memory                                                   */
/* ------------------------------------------------------------------------- */

/** Flags for cuabi_buffer_alloc_managed: an OR of cuabi_managed_flag_bits. */
typedef uint32_t cuabi_managed_flags;
/** The bits of cuabi_managed_flags. */
typedef enum cuabi_managed_flag_bits CUABI_ENUM_BASE {
  /** Attached to the host at first: only the host and streams it is attached
   * to may touch it (CU_MEM_ATTACH_HOST). Without it every stream may. */
  CUABI_MANAGED_ATTACH_HOST = 1 << 0,
  CUABI_MANAGED_FLAG_BITS_FORCE32 = 0x7FFFFFFF
} cuabi_managed_flag_bits;

/** Allocates `bytes` (> 0) of managed memory on `device`: one address valid
 * on the host and on every device, migrated on demand. `flags` is an OR of
 * cuabi_managed_flag_bits (0: every stream may touch it; unknown bits answer
 * CUABI_ERROR_INVALID_ARGUMENT).
 *
 * When the host may touch it (through cuabi_buffer_get_host_pointer): on a
 * device whose CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS (89) is 1
 * (Linux with a Pascal or newer GPU), at any time, with the usual data-race
 * rules: what a kernel writes is seen by the host after the kernel is known
 * to have finished (a synchronize), and the host must not write what a
 * running kernel reads. Where that attribute is 0, the host must not touch
 * any managed memory while any kernel runs on the device: synchronise the
 * device first. */
CUABI_API cuabi_status CUABI_CALL cuabi_buffer_alloc_managed(cuabi_device device, size_t bytes,
                                                             cuabi_managed_flags flags,
                                                             cuabi_buffer* out);
/** The host address of a managed buffer in `ptr` (the same value as its
 * device pointer). Another kind of buffer answers
 * CUABI_ERROR_INVALID_ARGUMENT. */
CUABI_API cuabi_status CUABI_CALL cuabi_buffer_get_host_pointer(cuabi_buffer buffer, void** ptr);
/** Migrates [offset, offset + bytes) of a managed buffer to `location` (a
 * device ordinal or CUABI_LOCATION_HOST) in order on `stream` (NULL: the
 * default stream), ahead of its use there. */
CUABI_API cuabi_status CUABI_CALL cuabi_buffer_prefetch_async(cuabi_buffer buffer, size_t offset,
                                                              size_t bytes, int32_t location,
                                                              cuabi_stream stream);

/** Advice on how a managed range is used (the driver's CUmem_advise). */
typedef enum cuabi_memory_advice CUABI_ENUM_BASE {
  /** Mostly read: every reader keeps its own copy. `location` unused. */
  CUABI_ADVISE_SET_READ_MOSTLY = 1,
  /** Undoes CUABI_ADVISE_SET_READ_MOSTLY. `location` unused. */
  CUABI_ADVISE_UNSET_READ_MOSTLY = 2,
  /** Keep the pages at `location` where possible. */
  CUABI_ADVISE_SET_PREFERRED_LOCATION = 3,
  /** Undoes CUABI_ADVISE_SET_PREFERRED_LOCATION. */
  CUABI_ADVISE_UNSET_PREFERRED_LOCATION = 4,
  /** `location` (a device) keeps a mapping, so it never faults on them. */
  CUABI_ADVISE_SET_ACCESSED_BY = 5,
  /** Undoes CUABI_ADVISE_SET_ACCESSED_BY for `location`. */
  CUABI_ADVISE_UNSET_ACCESSED_BY = 6,
  CUABI_MEMORY_ADVICE_FORCE32 = 0x7FFFFFFF
} cuabi_memory_advice;

/** Gives `advice` for [offset, offset + bytes) of a managed buffer;
 * `location` is a device ordinal or CUABI_LOCATION_HOST. */
CUABI_API cuabi_status CUABI_CALL cuabi_buffer_advise(cuabi_buffer buffer, size_t offset,
                                                      size_t bytes, cuabi_memory_advice advice,
                                                      int32_t location);

/* ------------------------------------------------------------------------- */
/* Sharing memory and events with other processes (IPC)                       */
/* ------------------------------------------------------------------------- */

/** The size of an IPC handle: plain bytes, to send to another process
 * through a pipe, a socket or a file. It names the memory (or event), the
 * process that exported it, the GPU it lives on (by UUID, since ordinals
 * differ between processes) and the buffer's size, with a checksum, so a
 * damaged or foreign handle is refused before the driver sees it. */
#define CUABI_IPC_HANDLE_SIZE 128

/** Writes the IPC handle of `buffer` (CUABI_BUFFER_DEVICE, CUABI_BUFFER_PITCHED,
 * or CUABI_BUFFER_STREAM_ORDERED from a pool made with CUABI_MEMORY_POOL_IPC)
 * into `handle`, which holds `handle_size` >= CUABI_IPC_HANDLE_SIZE bytes.
 * The handle stays valid while the buffer lives in this process. Other kinds
 * answer CUABI_ERROR_INVALID_ARGUMENT saying which can be shared;
 * `handle_size` too small answers CUABI_ERROR_INSUFFICIENT_BUFFER. */
CUABI_API cuabi_status CUABI_CALL cuabi_buffer_get_ipc_handle(cuabi_buffer buffer, void* handle,
                                                              size_t handle_size);
/** Opens, on `device`, a buffer another process exported: `handle` holds the
 * `handle_size` bytes cuabi_buffer_get_ipc_handle wrote there. A handle of a pool
 * allocation needs `pool`: that pool, imported here with
 * cuabi_memory_pool_import_fd; other handles take NULL. The buffer
 * (CUABI_BUFFER_IPC) has the exported size; releasing it unmaps the memory,
 * which the exporting process still owns and must keep alive meanwhile.
 * Refused with CUABI_ERROR_INVALID_ARGUMENT naming why: a handle from this
 * very process (use the buffer itself), a damaged or foreign one (not
 * CUABI_IPC_HANDLE_SIZE bytes, a bad checksum, an event's handle); the
 * driver refuses one whose memory was given back to it (freed, or its
 * process ended; the message then says whether the exporter has ended).
 * Across GPUs: `device` may be another GPU than the exporter's when it can
 * reach that GPU's memory (cuabi_device_can_access_peer; the mapping enables
 * peer access for itself); otherwise CUABI_ERROR_INVALID_ARGUMENT names both
 * devices (open it on the exporter's GPU and copy). A pool allocation opens
 * only through its pool imported on the exporter's GPU; another device is
 * refused naming both. Opening one handle twice on one device gives two
 * buffers over one mapping, unmapped when the last is released. A small buffer shares a driver block with other
 * allocations of its process, which stays mapped while any of them lives:
 * its handle can then still open after the buffer was freed, so the
 * exporting process must keep a buffer alive until every importer is done.
 * @nullable pool: a handle that is no pool allocation */
CUABI_API cuabi_status CUABI_CALL cuabi_buffer_open_ipc(cuabi_device device,
                                                        cuabi_memory_pool pool,
                                                        const void* handle, size_t handle_size,
                                                        cuabi_buffer* out);
/** Writes the IPC handle of an event made with CUABI_EVENT_INTERPROCESS (and
 * CUABI_EVENT_DISABLE_TIMING) into `handle`, which holds `handle_size` >=
 * CUABI_IPC_HANDLE_SIZE bytes, as cuabi_buffer_get_ipc_handle does. */
CUABI_API cuabi_status CUABI_CALL cuabi_event_get_ipc_handle(cuabi_event event, void* handle,
                                                             size_t handle_size);
/** Opens another process's event on `device`, from the `handle_size` bytes
 * at `handle` (cuabi_event_get_ipc_handle's): record it there, wait for it
 * here (cuabi_stream_wait_event, cuabi_event_synchronize). A stream of any
 * device may wait on it: cuabi opens the handle again, once, on the
 * stream's device (the driver cannot make a stream of another device wait on
 * the event as opened). The same refusals as cuabi_buffer_open_ipc. */
CUABI_API cuabi_status CUABI_CALL cuabi_event_open_ipc(cuabi_device device, const void* handle,
                                                       size_t handle_size, cuabi_event* out);

/* ------------------------------------------------------------------------- */
/* Peer access between devices                                                */
/* ------------------------------------------------------------------------- */

/** `can_access` receives 1 when kernels on `device` can access memory of
 * `peer` once peer access is enabled, 0 when not, and 0 for a device and
 * itself (no peer). */
CUABI_API cuabi_status CUABI_CALL cuabi_device_can_access_peer(cuabi_device device,
                                                               cuabi_device peer,
                                                               int32_t* can_access);
/** Lets kernels and copies on `device` reach `peer`'s memory directly.
 * Enabling what is enabled succeeds. A device and itself, or a pair that
 * cannot access each other, answers CUABI_ERROR_INVALID_ARGUMENT /
 * CUABI_ERROR_NOT_SUPPORTED naming the devices. */
CUABI_API cuabi_status CUABI_CALL cuabi_device_enable_peer_access(cuabi_device device,
                                                                  cuabi_device peer);
/** Undoes cuabi_device_enable_peer_access from `device` to `peer`;
 * disabling what is not enabled succeeds. A device and itself answers
 * CUABI_ERROR_INVALID_ARGUMENT. */
CUABI_API cuabi_status CUABI_CALL cuabi_device_disable_peer_access(cuabi_device device,
                                                                   cuabi_device peer);
/** Any CUdevice_P2PAttribute of the pair (from `device` to `peer`), by its
 * numeric value `cu_p2p_attribute` (see cuda.h), in `value`; a device and
 * itself answers CUABI_ERROR_INVALID_ARGUMENT. */
CUABI_API cuabi_status CUABI_CALL cuabi_device_get_peer_attribute(cuabi_device device,
                                                                  cuabi_device peer,
                                                                  int32_t cu_p2p_attribute,
                                                                  int32_t* value);

/** How a copy between two buffers travels. */
typedef enum cuabi_copy_path CUABI_ENUM_BASE {
  /** Both buffers are on one device. */
  CUABI_COPY_SAME_DEVICE = 0,
  /** Between devices, directly: peer access is enabled between them. */
  CUABI_COPY_PEER = 1,
  /** Between devices through host memory: peer access is not enabled. */
  CUABI_COPY_THROUGH_HOST = 2,
  CUABI_COPY_PATH_FORCE32 = 0x7FFFFFFF
} cuabi_copy_path;

/** How cuabi_buffer_copy from `src` to `dst` travels now. cuabi_buffer_copy
 * and cuabi_buffer_copy_async copy between devices by either path. */
CUABI_API cuabi_status CUABI_CALL cuabi_buffer_get_copy_path(cuabi_buffer dst, cuabi_buffer src,
                                                             cuabi_copy_path* path);

/* ------------------------------------------------------------------------- */
/* Virtual memory                                                             */
/* ------------------------------------------------------------------------- */

/* Device memory in two halves, as the driver's virtual memory calls
 * (cuMemCreate, cuMemAddressReserve, cuMemMap) have it: physical memory with
 * no address (cuabi_physical_memory), and a range of device addresses with no
 * memory behind it (cuabi_address_range). Memory mapped into a range can be
 * used at the range's addresses by every device given access to it. A range
 * may be far larger than what is mapped into it and filled as needed (a
 * growable buffer, cuabi_buffer_alloc_growable, does this for you), and
 * physical memory can be exported to another process as a file descriptor.
 *
 * Every size and offset here (of physical memory, a range, a mapping, an
 * access setting, a growable buffer) is a multiple of the device's minimum
 * granularity (cuabi_device_get_vm_granularity, 2 MiB on current GPUs); any
 * other is refused with CUABI_ERROR_INVALID_ARGUMENT naming the granularity.
 * Each refusal below comes before the driver sees the call. A range keeps
 * the memory mapped into it alive, and a buffer viewing a range keeps the
 * range alive, so handles may be released in any order. */

/** The granularity of `device`'s virtual memory in bytes: `minimum`, of
 * which every size and offset of physical memory, ranges, mappings and
 * growable buffers must be a multiple, and `recommended`, a multiple of it
 * the driver suggests for large allocations. */
CUABI_API cuabi_status CUABI_CALL cuabi_device_get_vm_granularity(cuabi_device device,
                                                                  size_t* minimum,
                                                                  size_t* recommended);

/** Flags for cuabi_physical_memory_create: an OR of
 * cuabi_physical_memory_flag_bits. */
typedef uint32_t cuabi_physical_memory_flags;
/** The bits of cuabi_physical_memory_flags. */
typedef enum cuabi_physical_memory_flag_bits CUABI_ENUM_BASE {
  /** The memory can be exported to another process as a POSIX file
   * descriptor (cuabi_physical_memory_export_fd). */
  CUABI_PHYSICAL_MEMORY_EXPORTABLE = 1 << 0,
  CUABI_PHYSICAL_MEMORY_FLAG_BITS_FORCE32 = 0x7FFFFFFF
} cuabi_physical_memory_flag_bits;

/** `bytes` (> 0, a multiple of the minimum granularity) of physical memory
 * on `device` (cuMemCreate), with no address yet: map it into a range
 * (cuabi_address_range_map) to use it. `flags` is an OR of
 * cuabi_physical_memory_flag_bits (unknown bits answer
 * CUABI_ERROR_INVALID_ARGUMENT; CUABI_PHYSICAL_MEMORY_EXPORTABLE where the
 * device cannot export memory as a file descriptor answers
 * CUABI_ERROR_NOT_SUPPORTED). Out of device memory answers
 * CUABI_ERROR_OUT_OF_MEMORY. */
CUABI_API cuabi_status CUABI_CALL cuabi_physical_memory_create(cuabi_device device, size_t bytes,
                                                               cuabi_physical_memory_flags flags,
                                                               cuabi_physical_memory* out);
/** Opens on `device` the physical memory another process exported
 * (cuabi_physical_memory_export_fd): the same memory, given back to the
 * driver once every process let go of it. `fd` stays the caller's to close;
 * `bytes` is the memory's size, as the exporter's
 * cuabi_physical_memory_get_size gave it (a file descriptor does not carry
 * it). `device` is the GPU the memory is on; other devices reach it through
 * a range (cuabi_address_range_set_access). A descriptor that is not open,
 * or is a file, a directory, a pipe or a socket, is no such memory and is
 * refused with CUABI_ERROR_INVALID_ARGUMENT naming what it is; so is memory
 * of another GPU than `device`. */
CUABI_API cuabi_status CUABI_CALL cuabi_physical_memory_import_fd(cuabi_device device, int32_t fd,
                                                                  size_t bytes,
                                                                  cuabi_physical_memory* out);
/** Drops the handle. The memory goes back to the driver once no range maps
 * it any more. */
CUABI_API void CUABI_CALL cuabi_physical_memory_release(cuabi_physical_memory memory);
/** Gives the memory back to the driver now (cuMemRelease) and releases the
 * handle, which answers CUABI_ERROR_INVALID_HANDLE from then on. Memory a
 * range still maps is refused with CUABI_ERROR_INVALID_ARGUMENT naming the
 * range's address and the mapping's offset (unmap it first, or release the
 * handle and let the last mapping free it); the handle stays valid after
 * that refusal. */
CUABI_API cuabi_status CUABI_CALL cuabi_physical_memory_free(cuabi_physical_memory memory);
/** The memory's size in bytes. */
CUABI_API cuabi_status CUABI_CALL cuabi_physical_memory_get_size(cuabi_physical_memory memory,
                                                                 size_t* bytes);
/** The ordinal of the device the memory is on. */
CUABI_API cuabi_status CUABI_CALL cuabi_physical_memory_get_device_ordinal(
    cuabi_physical_memory memory, int32_t* ordinal);
/** A new file descriptor for the memory in `fd`, owned by the caller: send
 * it to another process over a Unix socket (SCM_RIGHTS) or let a child
 * inherit it, for cuabi_physical_memory_import_fd, then close it. Memory
 * made without CUABI_PHYSICAL_MEMORY_EXPORTABLE answers
 * CUABI_ERROR_INVALID_ARGUMENT. */
CUABI_API cuabi_status CUABI_CALL cuabi_physical_memory_export_fd(cuabi_physical_memory memory,
                                                                  int32_t* fd);

/** Reserves `bytes` (> 0, a multiple of the minimum granularity) of device
 * addresses (cuMemAddressReserve), with no memory behind them. `device`
 * makes the calls (its context); the range may hold memory of any device.
 * Releasing the range unmaps what is still mapped and gives the addresses
 * back, once no buffer views it. */
CUABI_API cuabi_status CUABI_CALL cuabi_address_range_reserve(cuabi_device device, size_t bytes,
                                                              cuabi_address_range* out);
/** Drops the handle (see cuabi_address_range_reserve). */
CUABI_API void CUABI_CALL cuabi_address_range_release(cuabi_address_range range);
/** The range's first device address in `ptr`. */
CUABI_API cuabi_status CUABI_CALL cuabi_address_range_get_pointer(cuabi_address_range range,
                                                                  uint64_t* ptr);
/** The range's size in bytes, as reserved. */
CUABI_API cuabi_status CUABI_CALL cuabi_address_range_get_size(cuabi_address_range range,
                                                               size_t* bytes);
/** Maps all of `memory` at byte `offset` of the range (cuMemMap) and gives
 * the memory's own device read and write access there. The range keeps the
 * memory alive until it is unmapped. `offset` is a multiple of the
 * granularity; a mapping past the range's end answers
 * CUABI_ERROR_OUT_OF_RANGE; one over bytes already mapped,
 * CUABI_ERROR_INVALID_ARGUMENT naming the mapping in the way. */
CUABI_API cuabi_status CUABI_CALL cuabi_address_range_map(cuabi_address_range range,
                                                          size_t offset,
                                                          cuabi_physical_memory memory);
/** Unmaps the mappings that make up [offset, offset + bytes) of the range
 * (cuMemUnmap); memory that neither a handle nor another mapping holds goes
 * back to the driver. Refused with CUABI_ERROR_INVALID_ARGUMENT when a byte
 * of it is not mapped (naming it), when it cuts a mapping in two, or while a
 * buffer (cuabi_buffer_from_range) views the range; past the range's end,
 * CUABI_ERROR_OUT_OF_RANGE. */
CUABI_API cuabi_status CUABI_CALL cuabi_address_range_unmap(cuabi_address_range range,
                                                            size_t offset, size_t bytes);

/** What a device may do with memory mapped into a range. */
typedef enum cuabi_vm_access CUABI_ENUM_BASE {
  /** Read it. */
  CUABI_VM_ACCESS_READ = 1,
  /** Read and write it. */
  CUABI_VM_ACCESS_READWRITE = 3,
  CUABI_VM_ACCESS_FORCE32 = 0x7FFFFFFF
} cuabi_vm_access;

/** Gives `device` `access` (cuabi_vm_access) to [offset, offset + bytes) of
 * the range (cuMemSetAccess), whichever device the memory is on: kernels
 * and copies of `device` reach it at the range's addresses from then on.
 * Every byte must be mapped: an address with no memory behind it is refused
 * with CUABI_ERROR_INVALID_ARGUMENT naming its offset; past the range's end,
 * CUABI_ERROR_OUT_OF_RANGE. */
CUABI_API cuabi_status CUABI_CALL cuabi_address_range_set_access(cuabi_address_range range,
                                                                 size_t offset, size_t bytes,
                                                                 cuabi_device device,
                                                                 cuabi_vm_access access);

/** A buffer (CUABI_BUFFER_RANGE) over [offset, offset + bytes) of the
 * range, used by `device`: copies, fills and launches reach the mapped
 * memory through it as through any buffer. It keeps the range alive, and
 * the range may not be unmapped while it lives. Every byte must be mapped
 * and `device` must have access to it (cuabi_address_range_set_access; the
 * memory's own device has it from the mapping), else
 * CUABI_ERROR_INVALID_ARGUMENT names the address at fault; past the range's
 * end, CUABI_ERROR_OUT_OF_RANGE. `bytes` > 0; neither needs to be a
 * multiple of the granularity. */
CUABI_API cuabi_status CUABI_CALL cuabi_buffer_from_range(cuabi_address_range range,
                                                          cuabi_device device, size_t offset,
                                                          size_t bytes, cuabi_buffer* out);

/** A buffer that grows in place (CUABI_BUFFER_GROWABLE): `reserve_bytes` of
 * device addresses are reserved once and memory of `device` is mapped
 * behind them as it grows (cuabi_buffer_grow), so its address and contents
 * stay as they are. It starts with `bytes` of memory (0: none yet; its
 * pointer is the reservation's start). Both are multiples of the device's
 * minimum granularity, `bytes` at most `reserve_bytes` (more answers
 * CUABI_ERROR_OUT_OF_RANGE; out of device memory,
 * CUABI_ERROR_OUT_OF_MEMORY). Its size (cuabi_buffer_get_size) is the memory
 * mapped, and copies, fills, launches and every range check use it as they
 * use any buffer's. It has no IPC handle. */
CUABI_API cuabi_status CUABI_CALL cuabi_buffer_alloc_growable(cuabi_device device, size_t bytes,
                                                              size_t reserve_bytes,
                                                              cuabi_buffer* out);
/** Grows a growable buffer to `bytes` (a multiple of the granularity),
 * mapping new memory after what it has: its address and contents stay, and
 * the new bytes are uninitialised. Calls made once this returned see the
 * new size; work already queued is unaffected. Past the reservation answers
 * CUABI_ERROR_OUT_OF_RANGE naming it; a size below the current one, or a
 * buffer of another kind, CUABI_ERROR_INVALID_ARGUMENT; out of device
 * memory, CUABI_ERROR_OUT_OF_MEMORY (the buffer is then as it was). */
CUABI_API cuabi_status CUABI_CALL cuabi_buffer_grow(cuabi_buffer buffer, size_t bytes);
/** The bytes reserved for a growable buffer in `bytes`: the most it can
 * grow to. Any other kind of buffer answers its size. */
CUABI_API cuabi_status CUABI_CALL cuabi_buffer_get_reserved_size(cuabi_buffer buffer,
                                                                 size_t* bytes);

/* ------------------------------------------------------------------------- */
/* Pitched memory, fills, and copies in two and three dimensions              */
/* ------------------------------------------------------------------------- */

/** Allocates `height` rows of at least `width_bytes` each, each row padded so
 * that rows of elements of `element_size` (4, 8 or 16) bytes stay aligned
 * for the device (cuMemAllocPitch). The row pitch is
 * cuabi_buffer_get_pitch's; the buffer's size is pitch * height. */
CUABI_API cuabi_status CUABI_CALL cuabi_buffer_alloc_pitched(cuabi_device device,
                                                             size_t width_bytes, size_t height,
                                                             uint32_t element_size,
                                                             cuabi_buffer* out);
/** The row pitch in bytes of a pitched buffer; 0 for every other kind. */
CUABI_API cuabi_status CUABI_CALL cuabi_buffer_get_pitch(cuabi_buffer buffer, size_t* pitch);

/**@{*/
/** Sets `count` elements of `element_size` (1, 2 or 4) bytes from `offset`
 * (a multiple of `element_size`) to `value` (its low element_size bytes;
 * higher bits must be 0). Checked against the buffer as every copy is. The
 * *_async form is ordered on `stream` (NULL: the default stream). */
CUABI_API cuabi_status CUABI_CALL cuabi_buffer_fill(cuabi_buffer buffer, size_t offset,
                                                    uint32_t value, uint32_t element_size,
                                                    size_t count);
CUABI_API cuabi_status CUABI_CALL cuabi_buffer_fill_async(cuabi_buffer buffer, size_t offset,
                                                          uint32_t value, uint32_t element_size,
                                                          size_t count, cuabi_stream stream);
/**@}*/

/** A copy of a box of `width_bytes` x `height` rows x `depth` slices.
 * Each side is exactly one of: host memory (`*_host`), a buffer (`*_buffer`)
 * or an array (`*_array`). The box starts at byte `*_x_bytes` of row `*_y`
 * of slice `*_z`. For host memory and buffers, rows are `*_pitch` bytes
 * apart (0: the buffer's pitch if it is pitched, else width_bytes) and
 * slices `*_height` rows apart (0: height for a box of several slices; for
 * one slice it does not matter, and 0 means the rows the box reaches,
 * `*_y` + height). For arrays, `*_x_bytes` and
 * `width_bytes` are in bytes of whole elements, and pitch and height are
 * the array's own (leave them 0). height and depth 0 count as 1.
 * Every range is checked before the driver sees it: a box past a buffer's
 * end or an array's extent answers CUABI_ERROR_OUT_OF_RANGE naming the side
 * and the dimension; a pitch smaller than the row, or not exactly one
 * memory per side, CUABI_ERROR_INVALID_ARGUMENT. Start from
 * cuabi_copy_3d_desc_init or CUABI_COPY_3D_DESC_INIT. */
typedef struct cuabi_copy_3d_desc {
  size_t struct_size; /**< sizeof(cuabi_copy_3d_desc) */
  const void* src_host;   /**< the source in host memory, or NULL */
  cuabi_buffer src_buffer; /**< the source buffer, or NULL */
  cuabi_array src_array;  /**< the source array, or NULL */
  /**@{*/
  size_t src_x_bytes, src_y, src_z; /**< where the box starts in the source */
  /**@}*/
  /**@{*/
  size_t src_pitch, src_height; /**< the source's row pitch and slice height (0: see above) */
  /**@}*/
  void* dst_host;          /**< the destination in host memory, or NULL */
  cuabi_buffer dst_buffer; /**< the destination buffer, or NULL */
  cuabi_array dst_array;   /**< the destination array, or NULL */
  /**@{*/
  size_t dst_x_bytes, dst_y, dst_z; /**< where the box starts in the destination */
  /**@}*/
  /**@{*/
  size_t dst_pitch, dst_height; /**< the destination's row pitch and slice height (0: see above) */
  /**@}*/
  /**@{*/
  size_t width_bytes, height, depth; /**< the box: bytes per row, rows, slices */
  /**@}*/
} cuabi_copy_3d_desc;

/** The defaults of cuabi_copy_3d_desc as an initialiser (C, C++); cuabi_copy_3d_desc_init fills
 * the same. */
#define CUABI_COPY_3D_DESC_INIT                                                          \
  { sizeof(cuabi_copy_3d_desc), NULL, NULL, NULL, 0, 0, 0, 0, 0, NULL, NULL, NULL, 0, 0, \
    0, 0, 0, 0, 1, 1 }

/** Fills `desc` with the defaults of CUABI_COPY_3D_DESC_INIT (nothing to copy,
 * height and depth 1). */
CUABI_API cuabi_status CUABI_CALL cuabi_copy_3d_desc_init(cuabi_copy_3d_desc* desc,
                                                          size_t struct_size);
/** Copies the box `desc` describes (cuabi_copy_3d_desc) and returns once it
 * is done (ordered on the default stream as cuabi_buffer_copy is). */
CUABI_API cuabi_status CUABI_CALL cuabi_copy_3d(const cuabi_copy_3d_desc* desc);
/** Copies the box `desc` describes in order on `stream` (NULL: the default
 * stream); host memory must stay valid until the stream reaches the copy. */
CUABI_API cuabi_status CUABI_CALL cuabi_copy_3d_async(const cuabi_copy_3d_desc* desc,
                                                      cuabi_stream stream);

/* ------------------------------------------------------------------------- */
/* Arrays, texture objects and surface objects                                */
/* ------------------------------------------------------------------------- */

/** An array element's channel type (the values of the driver's CUarray_format). */
typedef enum cuabi_array_format CUABI_ENUM_BASE {
  CUABI_FORMAT_U8 = 0x01,  /**< unsigned 8-bit integer */
  CUABI_FORMAT_U16 = 0x02, /**< unsigned 16-bit integer */
  CUABI_FORMAT_U32 = 0x03, /**< unsigned 32-bit integer */
  CUABI_FORMAT_S8 = 0x08,  /**< signed 8-bit integer */
  CUABI_FORMAT_S16 = 0x09, /**< signed 16-bit integer */
  CUABI_FORMAT_S32 = 0x0a, /**< signed 32-bit integer */
  CUABI_FORMAT_F16 = 0x10, /**< 16-bit float (half) */
  CUABI_FORMAT_F32 = 0x20, /**< 32-bit float */
  CUABI_ARRAY_FORMAT_FORCE32 = 0x7FFFFFFF
} cuabi_array_format;

/** Flags for cuabi_array_desc: an OR of cuabi_array_flag_bits. */
typedef uint32_t cuabi_array_flags;
/** The bits of cuabi_array_flags. */
typedef enum cuabi_array_flag_bits CUABI_ENUM_BASE {
  /** A layered array: `depth` is the number of layers of 1D or 2D arrays. */
  CUABI_ARRAY_LAYERED = 1 << 0,
  /** Surface objects may read and write it (cuabi_surface_create). */
  CUABI_ARRAY_SURFACE_LOAD_STORE = 1 << 1,
  /** Texture gather (tex2Dgather) may read it; 2D arrays only. */
  CUABI_ARRAY_TEXTURE_GATHER = 1 << 2,
  /** A cubemap: six square faces (width == height, depth 6; with
   * CUABI_ARRAY_LAYERED, depth is 6 x the number of cubemaps), read with
   * texCubemap. */
  CUABI_ARRAY_CUBEMAP = 1 << 3,
  CUABI_ARRAY_FLAG_BITS_FORCE32 = 0x7FFFFFFF
} cuabi_array_flag_bits;

/** An array's shape: `width` elements (> 0), `height` rows (0 for 1D) and
 * `depth` slices or layers (0 for 1D and 2D); each element `channels` (1, 2
 * or 4) values of `format`. Start from cuabi_array_desc_init or
 * CUABI_ARRAY_DESC_INIT. */
typedef struct cuabi_array_desc {
  size_t struct_size; /**< sizeof(cuabi_array_desc) */
  /**@{*/
  size_t width, height, depth; /**< the extent in elements, rows and slices or layers */
  /**@}*/
  cuabi_array_format format; /**< each channel's type */
  uint32_t channels;         /**< values per element: 1, 2 or 4 */
  cuabi_array_flags flags; /**< CUABI_ARRAY_* */
} cuabi_array_desc;

/** The defaults of cuabi_array_desc as an initialiser (C, C++); cuabi_array_desc_init fills the
 * same. */
#define CUABI_ARRAY_DESC_INIT \
  { sizeof(cuabi_array_desc), 0, 0, 0, CUABI_FORMAT_F32, 1, 0 }

/** Fills `desc` with the defaults of CUABI_ARRAY_DESC_INIT (no extent, one
 * float channel). */
CUABI_API cuabi_status CUABI_CALL cuabi_array_desc_init(cuabi_array_desc* desc,
                                                        size_t struct_size);
/** A new array on `device` of the shape `desc` gives (cuabi_array_desc). The
 * shape is checked first: a zero width, an unknown format or flag, a
 * channel count other than 1, 2 or 4, a shape the flags do not allow (a
 * layered array without layers, a cubemap that is not square or not 6
 * faces deep) or an extent past the device's limits answers
 * CUABI_ERROR_INVALID_ARGUMENT naming the field. Fill and read it with
 * cuabi_copy_3d. */
CUABI_API cuabi_status CUABI_CALL cuabi_array_create(cuabi_device device,
                                                     const cuabi_array_desc* desc,
                                                     cuabi_array* out);
/** Frees the array once no texture or surface object uses it. */
CUABI_API void CUABI_CALL cuabi_array_release(cuabi_array array);
/** The array's shape as it was created (`desc->struct_size` must be set). */
CUABI_API cuabi_status CUABI_CALL cuabi_array_get_desc(cuabi_array array, cuabi_array_desc* desc);
/** Bytes per element of the array in `bytes`: its format's size (1, 2 or 4
 * bytes) times its channels, the unit in which cuabi_copy_3d counts an
 * array's widths. */
CUABI_API cuabi_status CUABI_CALL cuabi_array_get_element_size(cuabi_array array, size_t* bytes);
/** The raw CUarray value in `cu_array`, for interop. */
CUABI_API cuabi_status CUABI_CALL cuabi_array_get_handle(cuabi_array array, uint64_t* cu_array);

/** How a texture fetch outside [0, extent) is answered (CUaddress_mode). */
typedef enum cuabi_address_mode CUABI_ENUM_BASE {
  CUABI_ADDRESS_WRAP = 0,   /**< repeats; normalised coordinates only */
  CUABI_ADDRESS_CLAMP = 1,  /**< the nearest edge element */
  CUABI_ADDRESS_MIRROR = 2, /**< mirrored repeats; normalised coordinates only */
  CUABI_ADDRESS_BORDER = 3, /**< the border colour */
  CUABI_ADDRESS_MODE_FORCE32 = 0x7FFFFFFF
} cuabi_address_mode;

/** How a fetch between elements is answered (CUfilter_mode). */
typedef enum cuabi_filter_mode CUABI_ENUM_BASE {
  CUABI_FILTER_POINT = 0,  /**< the nearest element */
  CUABI_FILTER_LINEAR = 1, /**< interpolated; float or normalised-float reads only */
  CUABI_FILTER_MODE_FORCE32 = 0x7FFFFFFF
} cuabi_filter_mode;

/** What a fetch returns. */
typedef enum cuabi_read_mode CUABI_ENUM_BASE {
  /** The element's own type. */
  CUABI_READ_ELEMENT_TYPE = 0,
  /** 8- and 16-bit integers as floats in [0, 1] (unsigned) or [-1, 1]. */
  CUABI_READ_NORMALIZED_FLOAT = 1,
  CUABI_READ_MODE_FORCE32 = 0x7FFFFFFF
} cuabi_read_mode;

/** A texture object over exactly one of: an array (`array`), or a buffer
 * (`buffer`) read from byte `offset` (a multiple of the device's texture
 * alignment) as `width` elements (height 0: linear memory) or as `height`
 * rows of `width` elements `pitch` bytes apart (0: the buffer's pitch); a
 * buffer's elements are `channels` values of `format`. Start from
 * cuabi_texture_desc_init or CUABI_TEXTURE_DESC_INIT. */
typedef struct cuabi_texture_desc {
  size_t struct_size; /**< sizeof(cuabi_texture_desc) */
  cuabi_array array;   /**< the array read, or NULL */
  cuabi_buffer buffer; /**< the buffer read, or NULL */
  size_t offset;       /**< a buffer's first byte read (0 for an array) */
  /**@{*/
  /** A buffer's shape: elements per row, rows (0: linear memory) and the row
   * pitch in bytes (0: the buffer's own); 0 for an array. */
  size_t width, height, pitch;
  /**@}*/
  cuabi_array_format format; /**< a buffer's channel type (an array's is its own) */
  uint32_t channels;         /**< a buffer's values per element: 1, 2 or 4 */
  /**@{*/
  /** How a fetch outside the extent is answered, per dimension. */
  cuabi_address_mode address_x, address_y, address_z;
  /**@}*/
  cuabi_filter_mode filter;   /**< how a fetch between elements is answered */
  cuabi_read_mode read_mode;  /**< what a fetch returns */
  /** 1: coordinates in [0, 1) across each dimension; 0: element indices. */
  uint32_t normalized_coords;
  /**@{*/
  /** The colour CUABI_ADDRESS_BORDER answers. */
  float border_r, border_g, border_b, border_a;
  /**@}*/
} cuabi_texture_desc;

/** The defaults of cuabi_texture_desc as an initialiser (C, C++); cuabi_texture_desc_init fills
 * the same. */
#define CUABI_TEXTURE_DESC_INIT                                                          \
  { sizeof(cuabi_texture_desc), NULL, NULL, 0, 0, 0, 0, CUABI_FORMAT_F32, 1,              \
    CUABI_ADDRESS_CLAMP, CUABI_ADDRESS_CLAMP, CUABI_ADDRESS_CLAMP, CUABI_FILTER_POINT,    \
    CUABI_READ_ELEMENT_TYPE, 0, 0.0f, 0.0f, 0.0f, 0.0f }

/** Fills `desc` with the defaults of CUABI_TEXTURE_DESC_INIT (no memory, one
 * float channel, clamped, point-filtered element reads by index). */
CUABI_API cuabi_status CUABI_CALL cuabi_texture_desc_init(cuabi_texture_desc* desc,
                                                          size_t struct_size);
/** A texture object as `desc` describes it (cuabi_texture_desc); it keeps
 * its array or buffer alive. Everything is checked first (exactly one
 * memory, the range inside the buffer, modes that need normalised
 * coordinates, linear filtering of integer reads): CUABI_ERROR_OUT_OF_RANGE
 * for a range past the buffer's end, CUABI_ERROR_INVALID_ARGUMENT naming
 * the field otherwise. */
CUABI_API cuabi_status CUABI_CALL cuabi_texture_create(const cuabi_texture_desc* desc,
                                                       cuabi_texture* out);
/** Destroys the texture object and lets go of the array or buffer it kept
 * alive. */
CUABI_API void CUABI_CALL cuabi_texture_release(cuabi_texture texture);
/** The CUtexObject (cudaTextureObject_t) in `tex_object`: pass it by value,
 * as an 8-byte kernel argument. Valid while the texture handle lives. */
CUABI_API cuabi_status CUABI_CALL cuabi_texture_get_handle(cuabi_texture texture,
                                                           uint64_t* tex_object);

/** A surface object over an array made with CUABI_ARRAY_SURFACE_LOAD_STORE;
 * it keeps the array alive. */
CUABI_API cuabi_status CUABI_CALL cuabi_surface_create(cuabi_array array, cuabi_surface* out);
/** Destroys the surface object and lets go of the array it kept alive. */
CUABI_API void CUABI_CALL cuabi_surface_release(cuabi_surface surface);
/** The CUsurfObject (cudaSurfaceObject_t) in `surf_object`, an 8-byte
 * kernel argument. Valid while the surface handle lives. */
CUABI_API cuabi_status CUABI_CALL cuabi_surface_get_handle(cuabi_surface surface,
                                                           uint64_t* surf_object);

/* ------------------------------------------------------------------------- */
/* Streams                                                                    */
/* ------------------------------------------------------------------------- */

/** Flags for cuabi_stream_create: an OR of cuabi_stream_flag_bits. */
typedef uint32_t cuabi_stream_flags;
/** The bits of cuabi_stream_flags. */
typedef enum cuabi_stream_flag_bits CUABI_ENUM_BASE {
  /** The stream does not synchronise with the default (NULL) stream. */
  CUABI_STREAM_NON_BLOCKING = 1 << 0,
  CUABI_STREAM_FLAG_BITS_FORCE32 = 0x7FFFFFFF
} cuabi_stream_flag_bits;

/** A new stream on `device`. `flags` is an OR of cuabi_stream_flag_bits
 * (unknown bits answer CUABI_ERROR_INVALID_ARGUMENT); `priority` 0 is the
 * default (see cuabi_device_get_stream_priority_range). */
CUABI_API cuabi_status CUABI_CALL cuabi_stream_create(cuabi_device device,
                                                      cuabi_stream_flags flags,
                                                      int32_t priority, cuabi_stream* out);
/** Wraps `cu_stream`, a CUstream (a cudaStream_t) owned by someone else;
 * release does not destroy it. It must belong to `device`'s primary
 * context. */
CUABI_API cuabi_status CUABI_CALL cuabi_stream_wrap(cuabi_device device, uint64_t cu_stream,
                                                    cuabi_stream* out);
/** Destroys a stream of cuabi_stream_create once nothing uses it (a launch
 * plan or a stream-ordered buffer keeps its stream); work queued on it still
 * runs. A wrapped stream is left to its owner. */
CUABI_API void CUABI_CALL cuabi_stream_release(cuabi_stream stream);
/** The raw CUstream value in `cu_stream`, for interop. */
CUABI_API cuabi_status CUABI_CALL cuabi_stream_get_handle(cuabi_stream stream,
                                                          uint64_t* cu_stream);
/** The stream's id in this process (1, 2, ... in the order streams were made
 * or wrapped; 0 is never a stream's): the id launch records and fault
 * messages name the stream by. */
CUABI_API cuabi_status CUABI_CALL cuabi_stream_get_id(cuabi_stream stream, uint64_t* id);
/** Waits until all work queued on the stream has finished. A host function
 * on it that reported a failure since the last synchronize answers
 * CUABI_ERROR_HOST_FUNCTION with its message (several: their number and the
 * first's message); the failure is then cleared. */
CUABI_API cuabi_status CUABI_CALL cuabi_stream_synchronize(cuabi_stream stream);
/** CUABI_SUCCESS when all work is done, CUABI_ERROR_NOT_READY when not
 * (NOT_READY does not touch the last-error state). */
CUABI_API cuabi_status CUABI_CALL cuabi_stream_query(cuabi_stream stream);
/** Later work on `stream` waits for `event`. */
CUABI_API cuabi_status CUABI_CALL cuabi_stream_wait_event(cuabi_stream stream, cuabi_event event);

/** A host function: called once, on a driver thread, when the stream reaches
 * it. It must not call CUDA or cuabi functions that would wait on the GPU.
 * Return 0 for success. To report a failure, write a UTF-8 message (at most
 * `message_size` bytes including its NUL) into `message` and return any
 * other value: the stream's next cuabi_stream_synchronize answers
 * CUABI_ERROR_HOST_FUNCTION with that message, and the failure is then
 * cleared. Work after the host function still runs. */
typedef int32_t(CUABI_CALL* cuabi_host_fn)(void* user_data, char* message, size_t message_size);
/** Runs `fn(user_data, ...)` in stream order on `stream` (not NULL). The
 * caller keeps whatever `user_data` points to alive until the function has
 * run. A stream that is capturing a graph answers CUABI_ERROR_NOT_SUPPORTED
 * (a captured host function would run at every replay). */
CUABI_API cuabi_status CUABI_CALL cuabi_stream_launch_host_func(cuabi_stream stream,
                                                                 cuabi_host_fn fn,
                                                                 void* user_data);

/* ------------------------------------------------------------------------- */
/* Stream attributes                                                          */
/* ------------------------------------------------------------------------- */

/* The policy, domain and access-policy window types are declared with the
 * launch configuration, which takes them too. */

/** Fills `window` with the defaults of CUABI_ACCESS_POLICY_WINDOW_INIT. */
CUABI_API cuabi_status CUABI_CALL cuabi_access_policy_window_init(
    cuabi_access_policy_window* window, size_t struct_size);

/** The stream's synchronization policy. */
CUABI_API cuabi_status CUABI_CALL cuabi_stream_get_sync_policy(cuabi_stream stream,
                                                               cuabi_sync_policy* policy);
/** Sets how host threads wait on the stream's work; an unknown policy answers
 * CUABI_ERROR_INVALID_ARGUMENT naming it. */
CUABI_API cuabi_status CUABI_CALL cuabi_stream_set_sync_policy(cuabi_stream stream,
                                                               cuabi_sync_policy policy);
/** The priority of the stream's work (numerically lower is higher). */
CUABI_API cuabi_status CUABI_CALL cuabi_stream_get_priority(cuabi_stream stream,
                                                            int32_t* priority);
/** Sets the priority of the stream's later work; one outside the device's
 * range (cuabi_device_get_stream_priority_range) answers
 * CUABI_ERROR_INVALID_ARGUMENT with the range. */
CUABI_API cuabi_status CUABI_CALL cuabi_stream_set_priority(cuabi_stream stream,
                                                            int32_t priority);
/** The memory-synchronisation domain of the stream's kernels. */
CUABI_API cuabi_status CUABI_CALL cuabi_stream_get_memory_sync_domain(
    cuabi_stream stream, cuabi_mem_sync_domain* domain);
/** Sets it; an unknown domain answers CUABI_ERROR_INVALID_ARGUMENT. */
CUABI_API cuabi_status CUABI_CALL cuabi_stream_set_memory_sync_domain(
    cuabi_stream stream, cuabi_mem_sync_domain domain);
/** The stream's access-policy window (bytes 0: none), written into `window`
 * up to its struct_size. */
CUABI_API cuabi_status CUABI_CALL cuabi_stream_get_access_policy_window(
    cuabi_stream stream, cuabi_access_policy_window* window);
/** Sets the access-policy window of the stream's later kernels. Refused with
 * CUABI_ERROR_INVALID_ARGUMENT naming the field and the bound: bytes past
 * the device's maximum window, a hit_ratio outside [0, 1], an unknown
 * property, a base of 0 with bytes. */
CUABI_API cuabi_status CUABI_CALL cuabi_stream_set_access_policy_window(
    cuabi_stream stream, const cuabi_access_policy_window* window);

/* ------------------------------------------------------------------------- */
/* Stream memory operations                                                   */
/* ------------------------------------------------------------------------- */

/** When a stream's wait on a value is over (cuabi_stream_wait_value). The
 * comparisons are of 32- or 64-bit words, as the width says. */
typedef enum cuabi_wait_condition {
  /** (int32_t or int64_t)(*word - value) >= 0: the word has reached value,
   * counting cyclically (a sequence number that wraps). */
  CUABI_WAIT_GEQ = 0,
  /** *word == value. */
  CUABI_WAIT_EQ = 1,
  /** (*word & value) != 0: any bit of value is set. */
  CUABI_WAIT_AND = 2,
  /** ~(*word | value) != 0: some bit is clear in both (where the device can:
   * CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_WAIT_VALUE_NOR). */
  CUABI_WAIT_NOR = 3,
  CUABI_WAIT_CONDITION_FORCE32 = 0x7FFFFFFF
} cuabi_wait_condition;

/** Flags of the stream memory operations. */
typedef enum cuabi_mem_op_flag_bits {
  /** A wait: once it is over, remote writes (GPUDirect RDMA) that were in
   * flight are flushed before the work after it (where the device can:
   * CU_DEVICE_ATTRIBUTE_CAN_FLUSH_REMOTE_WRITES). */
  CUABI_MEM_OP_FLUSH = 1 << 0,
  /** A write without the memory barrier before it. The driver's current
   * stream memory operations do not take it: a write with it answers
   * CUABI_ERROR_NOT_SUPPORTED (every write is fenced). Kept for drivers that
   * take it again. */
  CUABI_MEM_OP_NO_MEMORY_BARRIER = 1 << 1,
  CUABI_MEM_OP_FLAG_BITS_FORCE32 = 0x7FFFFFFF
} cuabi_mem_op_flag_bits;
/** Flags of the stream memory operations: an OR of cuabi_mem_op_flag_bits. */
typedef uint32_t cuabi_mem_op_flags;

/** In the stream's order, writes `value` as a `width`-byte word (4 or 8) at
 * `offset` of `buffer`, a device buffer of the stream's device. Refused with
 * CUABI_ERROR_INVALID_ARGUMENT naming what is wrong: a width other than 4
 * or 8, an offset that is not a multiple of the width, a value that does not
 * fit in 4 bytes, CUABI_MEM_OP_FLUSH on a write, unknown flags, a buffer of
 * another device; CUABI_ERROR_OUT_OF_RANGE past the buffer's end. */
CUABI_API cuabi_status CUABI_CALL cuabi_stream_write_value(cuabi_stream stream,
                                                           cuabi_buffer buffer, size_t offset,
                                                           uint64_t value, uint32_t width,
                                                           cuabi_mem_op_flags flags);
/** Holds the stream's later work until the `width`-byte word at `offset` of
 * `buffer` meets `condition` against `value`: a write from another stream,
 * another device or the host ends the wait. `flags`: 0 or
 * CUABI_MEM_OP_FLUSH. The same refusals as cuabi_stream_write_value;
 * CUABI_MEM_OP_NO_MEMORY_BARRIER on a wait, an unknown condition, and a
 * condition or flush the device cannot do (CUABI_ERROR_NOT_SUPPORTED,
 * named), are refused too. */
CUABI_API cuabi_status CUABI_CALL cuabi_stream_wait_value(cuabi_stream stream,
                                                          cuabi_buffer buffer, size_t offset,
                                                          uint64_t value, uint32_t width,
                                                          cuabi_wait_condition condition,
                                                          cuabi_mem_op_flags flags);
/** cuabi_stream_write_value into pinned host memory, which the host can
 * watch: `buffer` from cuabi_host_buffer_alloc or
 * cuabi_host_buffer_register; `offset`, `value`, `width` and `flags` and
 * their refusals as there (the word checked against the pinned memory's
 * size). */
CUABI_API cuabi_status CUABI_CALL cuabi_stream_write_value_host(cuabi_stream stream,
                                                                cuabi_host_buffer buffer,
                                                                size_t offset, uint64_t value,
                                                                uint32_t width,
                                                                cuabi_mem_op_flags flags);
/** cuabi_stream_wait_value on pinned host memory: `buffer` from
 * cuabi_host_buffer_alloc or cuabi_host_buffer_register; `offset`, `value`,
 * `width`, `condition` and `flags` and their refusals as there (the word
 * checked against the pinned memory's size). The host ends the wait by
 * writing the word. */
CUABI_API cuabi_status CUABI_CALL cuabi_stream_wait_value_host(cuabi_stream stream,
                                                               cuabi_host_buffer buffer,
                                                               size_t offset, uint64_t value,
                                                               uint32_t width,
                                                               cuabi_wait_condition condition,
                                                               cuabi_mem_op_flags flags);

/* ------------------------------------------------------------------------- */
/* Batches: memory operations, copies, prefetches and discards                */
/* ------------------------------------------------------------------------- */
/* Each batch call takes an array of versioned structs: every element's
 * struct_size is the same (the caller's sizeof, from the _INIT macro or the
 * _init function), and the array's stride is that size. Every element is
 * checked before the driver sees any; a refusal names the element at fault
 * by its index ("ops[7]: ..."). */

/** What an element of cuabi_stream_mem_op_batch does. */
typedef enum cuabi_mem_op_kind CUABI_ENUM_BASE {
  /** cuabi_stream_write_value. */
  CUABI_MEM_OP_WRITE = 0,
  /** cuabi_stream_wait_value. */
  CUABI_MEM_OP_WAIT = 1,
  CUABI_MEM_OP_KIND_FORCE32 = 0x7FFFFFFF
} cuabi_mem_op_kind;

/** One write or wait of a batch (cuabi_stream_mem_op_batch), on a word of
 * exactly one of `buffer` (device memory of the stream's device) or
 * `host_buffer` (pinned host memory). The other fields are those of
 * cuabi_stream_write_value and cuabi_stream_wait_value. Defaults from
 * CUABI_MEM_OP_INIT or cuabi_mem_op_init: a 4-byte write of 0 at offset 0
 * with no memory named. */
typedef struct cuabi_mem_op {
  size_t struct_size; /**< sizeof(cuabi_mem_op) */
  /** A write or a wait. */
  cuabi_mem_op_kind kind;
  /** The word's width in bytes: 4 or 8. */
  uint32_t width;
  /** A device buffer, or NULL with host_buffer. */
  cuabi_buffer buffer;
  /** Pinned host memory, or NULL with buffer. */
  cuabi_host_buffer host_buffer;
  /** The word's byte offset, a multiple of width. */
  size_t offset;
  /** The value written, or compared against. */
  uint64_t value;
  /** A wait's condition (ignored for a write). */
  cuabi_wait_condition condition;
  /** cuabi_mem_op_flags: CUABI_MEM_OP_FLUSH for a wait, or 0. */
  cuabi_mem_op_flags flags;
} cuabi_mem_op;

/** The defaults of cuabi_mem_op as an initialiser (C, C++). */
#define CUABI_MEM_OP_INIT \
  { sizeof(cuabi_mem_op), CUABI_MEM_OP_WRITE, 4, NULL, NULL, 0, 0, CUABI_WAIT_GEQ, 0 }
/** Fills `op` (of `struct_size` bytes) with the defaults of CUABI_MEM_OP_INIT. */
CUABI_API cuabi_status CUABI_CALL cuabi_mem_op_init(cuabi_mem_op* op, size_t struct_size);

/** Queues `count` (1 to 255) writes and waits on `stream` in one call
 * (cuStreamBatchMemOp), in the array's order. Each element is checked as
 * cuabi_stream_write_value or cuabi_stream_wait_value checks its arguments,
 * all of them before the driver sees any, and a refusal names the element
 * ("ops[3]: offset 6 is not a multiple of the width"); neither or both of
 * buffer and host_buffer, an unknown kind, a handle that is not live
 * (CUABI_ERROR_INVALID_HANDLE) and a struct_size unlike ops[0]'s are
 * refused too. A count of 0 or past 255 answers
 * CUABI_ERROR_INVALID_ARGUMENT.
 * @param ops array_in count=count
 */
CUABI_API cuabi_status CUABI_CALL cuabi_stream_mem_op_batch(cuabi_stream stream,
                                                            const cuabi_mem_op* ops,
                                                            size_t count);

/** Flags of cuabi_stream_copy_batch: an OR of cuabi_copy_batch_flag_bits. */
typedef uint32_t cuabi_copy_batch_flags;
/** The bits of cuabi_copy_batch_flags. */
typedef enum cuabi_copy_batch_flag_bits CUABI_ENUM_BASE {
  /** Ask the driver to overlap the copies with the device's kernels
   * (CU_MEMCPY_FLAG_PREFER_OVERLAP_WITH_COMPUTE). */
  CUABI_COPY_BATCH_PREFER_OVERLAP = 1 << 0,
  CUABI_COPY_BATCH_FLAG_BITS_FORCE32 = 0x7FFFFFFF
} cuabi_copy_batch_flag_bits;

/** One copy of a batch (cuabi_stream_copy_batch): `bytes` bytes from the
 * source to the destination. Each end is exactly one of a device buffer
 * (`*_buffer`, with `*_offset`), pinned host memory (`*_host_buffer`, with
 * `*_offset`) or a plain host pointer (`*_host`, which must stay valid until
 * the stream reaches the copy; `*_offset` is added to it). Defaults from
 * CUABI_COPY_OP_INIT or cuabi_copy_op_init: every end NULL, 0 bytes. */
typedef struct cuabi_copy_op {
  size_t struct_size; /**< sizeof(cuabi_copy_op) */
  /** The destination's device buffer, or NULL. */
  cuabi_buffer dst_buffer;
  /** The destination's pinned host memory, or NULL. */
  cuabi_host_buffer dst_host_buffer;
  /** The destination's plain host memory, or NULL. */
  void* dst_host;
  /** The byte offset into the destination. */
  size_t dst_offset;
  /** The source's device buffer, or NULL. */
  cuabi_buffer src_buffer;
  /** The source's pinned host memory, or NULL. */
  cuabi_host_buffer src_host_buffer;
  /** The source's plain host memory, or NULL. */
  const void* src_host;
  /** The byte offset into the source. */
  size_t src_offset;
  /** How many bytes to copy. */
  size_t bytes;
} cuabi_copy_op;

/** The defaults of cuabi_copy_op as an initialiser (C, C++). */
#define CUABI_COPY_OP_INIT \
  { sizeof(cuabi_copy_op), NULL, NULL, NULL, 0, NULL, NULL, NULL, 0, 0 }
/** Fills `op` (of `struct_size` bytes) with the defaults of CUABI_COPY_OP_INIT. */
CUABI_API cuabi_status CUABI_CALL cuabi_copy_op_init(cuabi_copy_op* op, size_t struct_size);

/** Queues `count` (at least 1) copies of any direction on `stream` (not
 * NULL) in one call (cuMemcpyBatchAsync). The batch as a whole is ordered on
 * the stream; its copies may run in any order among themselves. Every
 * element is checked before the driver sees any, and a refusal names it
 * ("ops[412]: destination range [4000, 4000 + 200) reaches past the end of
 * the 4096-byte buffer", CUABI_ERROR_OUT_OF_RANGE): an end with none or more
 * than one of its three memories, a buffer or pinned memory range past its
 * end, overlapping source and destination, a device buffer of another device
 * than the stream's, a handle that is not live (CUABI_ERROR_INVALID_HANDLE)
 * and a struct_size unlike ops[0]'s. Unknown `flags` bits answer
 * CUABI_ERROR_INVALID_ARGUMENT; a driver before CUDA 13.0 (whose batched
 * copies, if any, are an older form) answers CUABI_ERROR_NOT_SUPPORTED
 * naming the entry point.
 * @param ops array_in count=count
 */
CUABI_API cuabi_status CUABI_CALL cuabi_stream_copy_batch(cuabi_stream stream,
                                                          const cuabi_copy_op* ops, size_t count,
                                                          cuabi_copy_batch_flags flags);

/* 3D batch copies ---------------------------------------------------------- */

/** Queues `count` (at least 1) box copies on `stream` (not NULL) in one call
 * (cuMemcpy3DBatchAsync). Each element is a cuabi_copy_3d_desc, read as
 * cuabi_copy_3d reads it: host memory (which must stay valid until the
 * stream reaches the copy), a buffer (pitched or not) or an array on each
 * side, and every check of cuabi_copy_3d applies to each element, all of
 * them before the driver sees any; a refusal names the element
 * ("copies[2]: dst box reaches byte 5000 of the 4096-byte buffer ...",
 * CUABI_ERROR_OUT_OF_RANGE) and queues nothing. Beyond cuabi_copy_3d's
 * checks: a buffer or array of another device than the stream's, a copy
 * between two arrays of unlike element sizes, a pitch (host or buffer side
 * of a copy with an array) that is not whole elements of the array's, a
 * handle that is not live (CUABI_ERROR_INVALID_HANDLE) and a struct_size
 * unlike copies[0]'s. A box of width_bytes 0 copies nothing. The batch as
 * a whole is ordered on the stream; its copies may run in any order among
 * themselves. Unknown `flags` bits answer CUABI_ERROR_INVALID_ARGUMENT; a
 * driver before CUDA 13.0 (whose 3D batch, if any, is an older form)
 * answers CUABI_ERROR_NOT_SUPPORTED naming the driver's version.
 * @param copies array_in count=count
 */
CUABI_API cuabi_status CUABI_CALL cuabi_stream_copy_3d_batch(cuabi_stream stream,
                                                             const cuabi_copy_3d_desc* copies,
                                                             size_t count,
                                                             cuabi_copy_batch_flags flags);
/* End of 3D batch copies --------------------------------------------------- */

/** A range of a managed buffer (cuabi_buffer_alloc_managed) for the batched
 * prefetches and discards. Defaults from CUABI_MANAGED_RANGE_INIT or
 * cuabi_managed_range_init: no buffer, offset 0, 0 bytes. */
typedef struct cuabi_managed_range {
  size_t struct_size; /**< sizeof(cuabi_managed_range) */
  /** A managed buffer. */
  cuabi_buffer buffer;
  /** The range's first byte. */
  size_t offset;
  /** The range's length in bytes (> 0). */
  size_t bytes;
} cuabi_managed_range;

/** The defaults of cuabi_managed_range as an initialiser (C, C++). */
#define CUABI_MANAGED_RANGE_INIT { sizeof(cuabi_managed_range), NULL, 0, 0 }
/** Fills `range` (of `struct_size` bytes) with the defaults of
 * CUABI_MANAGED_RANGE_INIT. */
CUABI_API cuabi_status CUABI_CALL cuabi_managed_range_init(cuabi_managed_range* range,
                                                           size_t struct_size);

/**@{*/
/** Batched prefetches and discards of managed memory on `stream` (not NULL),
 * in one call each (cuMemPrefetchBatchAsync, cuMemDiscardBatchAsync,
 * cuMemDiscardAndPrefetchBatchAsync): every range of `ranges` moves to
 * `location` (a device ordinal or CUABI_LOCATION_HOST), or is discarded
 * (its contents undefined until written again; a discarded range's pages
 * need not move back), or both. Every range is checked before the driver
 * sees any, and a refusal names it ("ranges[2]: the buffer is a device
 * buffer (cuabi_buffer_alloc), not managed memory"): a buffer that is not
 * managed, a range of 0 bytes or past the buffer's end
 * (CUABI_ERROR_OUT_OF_RANGE), a handle that is not live, a struct_size
 * unlike ranges[0]'s; an unknown location answers
 * CUABI_ERROR_INVALID_ARGUMENT. A driver without these entry points (before
 * CUDA 13.0) answers CUABI_ERROR_NOT_SUPPORTED naming the one it lacks.
 * @param ranges array_in count=count
 */
CUABI_API cuabi_status CUABI_CALL cuabi_stream_prefetch_batch(cuabi_stream stream,
                                                              const cuabi_managed_range* ranges,
                                                              size_t count, int32_t location);
CUABI_API cuabi_status CUABI_CALL cuabi_stream_discard_batch(cuabi_stream stream,
                                                             const cuabi_managed_range* ranges,
                                                             size_t count);
CUABI_API cuabi_status CUABI_CALL cuabi_stream_discard_and_prefetch_batch(
    cuabi_stream stream, const cuabi_managed_range* ranges, size_t count, int32_t location);
/**@}*/

/* ------------------------------------------------------------------------- */
/* Events                                                                     */
/* ------------------------------------------------------------------------- */

/** Flags for cuabi_event_create: an OR of cuabi_event_flag_bits. */
typedef uint32_t cuabi_event_flags;
/** The bits of cuabi_event_flags. */
typedef enum cuabi_event_flag_bits CUABI_ENUM_BASE {
  /** No timing: cheaper, for synchronisation only. */
  CUABI_EVENT_DISABLE_TIMING = 1 << 0,
  /** Synchronizing sleeps instead of spinning. */
  CUABI_EVENT_BLOCKING_SYNC = 1 << 1,
  /** The event can be shared with another process (cuabi_event_get_ipc_handle).
   * Needs CUABI_EVENT_DISABLE_TIMING. */
  CUABI_EVENT_INTERPROCESS = 1 << 2,
  CUABI_EVENT_FLAG_BITS_FORCE32 = 0x7FFFFFFF
} cuabi_event_flag_bits;

/** A new event on `device` with `flags` (cuabi_event_flag_bits; 0: a timing
 * event). Unknown bits, or CUABI_EVENT_INTERPROCESS without
 * CUABI_EVENT_DISABLE_TIMING, answer CUABI_ERROR_INVALID_ARGUMENT. */
CUABI_API cuabi_status CUABI_CALL cuabi_event_create(cuabi_device device, cuabi_event_flags flags,
                                                     cuabi_event* out);
/** Destroys the event (and, for one opened from another process, each copy
 * cuabi opened on another device). */
CUABI_API void CUABI_CALL cuabi_event_release(cuabi_event event);
/** Records the event on `stream` (NULL: the default stream). */
CUABI_API cuabi_status CUABI_CALL cuabi_event_record(cuabi_event event, cuabi_stream stream);
/** Waits until the work the event's latest record follows has finished
 * (cuEventSynchronize). */
CUABI_API cuabi_status CUABI_CALL cuabi_event_synchronize(cuabi_event event);
/** CUABI_SUCCESS when reached, CUABI_ERROR_NOT_READY when not. */
CUABI_API cuabi_status CUABI_CALL cuabi_event_query(cuabi_event event);
/** Milliseconds from `start` to `end`, two recorded, completed events, in
 * `milliseconds`. An event made with CUABI_EVENT_DISABLE_TIMING or never
 * recorded answers CUABI_ERROR_INVALID_ARGUMENT; one not completed yet
 * CUABI_ERROR_NOT_READY (a failure here, recorded as the last error). */
CUABI_API cuabi_status CUABI_CALL cuabi_event_get_elapsed_ms(cuabi_event start, cuabi_event end,
                                                         float* milliseconds);

/* ------------------------------------------------------------------------- */
/* Graphs                                                                     */
/* ------------------------------------------------------------------------- */

/** The values of the driver's CUstreamCaptureMode. */
typedef enum cuabi_capture_mode CUABI_ENUM_BASE {
  /** Unsafe calls are refused in every thread while any thread captures. */
  CUABI_CAPTURE_GLOBAL = 0,
  /** Unsafe calls are refused in the capturing thread only. */
  CUABI_CAPTURE_THREAD_LOCAL = 1,
  /** No call is refused. */
  CUABI_CAPTURE_RELAXED = 2,
  CUABI_CAPTURE_MODE_FORCE32 = 0x7FFFFFFF
} cuabi_capture_mode;

/** Starts capturing the work submitted to `stream` (not the default stream)
 * into a graph instead of running it. `mode` (cuabi_capture_mode) says
 * which unsafe calls are refused meanwhile; another value answers
 * CUABI_ERROR_INVALID_ARGUMENT. */
CUABI_API cuabi_status CUABI_CALL cuabi_stream_begin_capture(cuabi_stream stream,
                                                             cuabi_capture_mode mode);
/** Ends the capture and returns the graph. */
CUABI_API cuabi_status CUABI_CALL cuabi_stream_end_capture(cuabi_stream stream, cuabi_graph* out);
/** Releases the graph handle; the graph is destroyed once no instantiated
 * graph made from it lives (each keeps it). */
CUABI_API void CUABI_CALL cuabi_graph_release(cuabi_graph graph);
/** The number of nodes in the graph, of every kind, in `count`
 * (cuGraphGetNodes). */
CUABI_API cuabi_status CUABI_CALL cuabi_graph_get_node_count(cuabi_graph graph, size_t* count);
/** Instantiates the graph into an executable graph to launch
 * (cuGraphInstantiateWithFlags). */
CUABI_API cuabi_status CUABI_CALL cuabi_graph_instantiate(cuabi_graph graph, cuabi_graph_exec* out);
/** Destroys the instantiated graph and lets go of the graph it was made
 * from. */
CUABI_API void CUABI_CALL cuabi_graph_exec_release(cuabi_graph_exec exec);
/** Runs the instantiated graph on `stream` (NULL: the default stream). */
CUABI_API cuabi_status CUABI_CALL cuabi_graph_exec_launch(cuabi_graph_exec exec,
                                                          cuabi_stream stream);
/** Uploads the instantiated graph to the device ahead of its first launch on
 * `stream` (NULL: the default stream), so that launch does not pay for it. */
CUABI_API cuabi_status CUABI_CALL cuabi_graph_exec_upload(cuabi_graph_exec exec,
                                                          cuabi_stream stream);
/** The number of kernel nodes in the graph, in `count`. Kernel nodes are
 * numbered from 0 in the order they were added (the order of capture). */
CUABI_API cuabi_status CUABI_CALL cuabi_graph_get_kernel_node_count(cuabi_graph graph,
                                                                    size_t* count);
/** Replaces the arguments of kernel node `index` of the graph `exec` was
 * instantiated from, in `exec` only: its next launch runs the kernel with
 * `args` (one block laid out at the kernel's parameter offsets, as
 * cuabi_function_launch_packed takes it), without instantiating again.
 * `function` must be the node's kernel; `args_size` must equal its
 * cuabi_function_get_args_size. */
CUABI_API cuabi_status CUABI_CALL cuabi_graph_exec_set_kernel_node_args(cuabi_graph_exec exec,
                                                                        size_t index,
                                                                        cuabi_function function,
                                                                        const void* args,
                                                                        size_t args_size);
/** Updates `exec` in place from `graph` (a graph of the same topology with
 * other parameters, e.g. captured again with new arguments), without
 * instantiating again. A graph whose topology differs answers
 * CUABI_ERROR_INVALID_ARGUMENT naming why, and `exec` is left as it was. */
CUABI_API cuabi_status CUABI_CALL cuabi_graph_exec_update(cuabi_graph_exec exec,
                                                          cuabi_graph graph);

/* ------------------------------------------------------------------------- */
/* Graphs built node by node                                                  */
/* ------------------------------------------------------------------------- */

/** A node's kind (the values of the driver's CUgraphNodeType). */
typedef enum cuabi_graph_node_type CUABI_ENUM_BASE {
  /** A kernel (cuabi_graph_add_kernel_node). */
  CUABI_GRAPH_NODE_KERNEL = 0,
  /** A copy (cuabi_graph_add_copy_node, _upload_node, _download_node). */
  CUABI_GRAPH_NODE_MEMCPY = 1,
  /** A fill (cuabi_graph_add_fill_node). */
  CUABI_GRAPH_NODE_MEMSET = 2,
  /** A host function (cuabi_graph_add_host_node). */
  CUABI_GRAPH_NODE_HOST = 3,
  /** A child graph (cuabi_graph_add_child_graph_node). */
  CUABI_GRAPH_NODE_GRAPH = 4,
  /** No work, only ordering (cuabi_graph_add_empty_node). */
  CUABI_GRAPH_NODE_EMPTY = 5,
  /** A wait on an event (cuabi_graph_add_event_wait_node). */
  CUABI_GRAPH_NODE_WAIT_EVENT = 6,
  /** An event record (cuabi_graph_add_event_record_node). */
  CUABI_GRAPH_NODE_EVENT_RECORD = 7,
  /** An external semaphore signal (captured only). */
  CUABI_GRAPH_NODE_EXT_SEMAS_SIGNAL = 8,
  /** An external semaphore wait (captured only). */
  CUABI_GRAPH_NODE_EXT_SEMAS_WAIT = 9,
  /** A memory allocation (cuabi_graph_add_mem_alloc_node). */
  CUABI_GRAPH_NODE_MEM_ALLOC = 10,
  /** A memory free (cuabi_graph_add_mem_free_node). */
  CUABI_GRAPH_NODE_MEM_FREE = 11,
  /** Stream memory operations (captured only). */
  CUABI_GRAPH_NODE_BATCH_MEM_OP = 12,
  /** A conditional node (cuabi_graph_add_conditional_node). */
  CUABI_GRAPH_NODE_CONDITIONAL = 13,
  CUABI_GRAPH_NODE_TYPE_FORCE32 = 0x7FFFFFFF
} cuabi_graph_node_type;

/** A conditional node's kind (the values of CUgraphConditionalNodeType). */
typedef enum cuabi_conditional_type CUABI_ENUM_BASE {
  /** Body 0 runs when the condition is not zero; with size 2, body 1 (ELSE)
   * runs when it is zero. */
  CUABI_CONDITIONAL_IF = 0,
  /** Body 0 runs again and again while the condition is not zero (checked
   * before each run). */
  CUABI_CONDITIONAL_WHILE = 1,
  /** Body n runs when the condition is n; none when it is size or more. */
  CUABI_CONDITIONAL_SWITCH = 2,
  CUABI_CONDITIONAL_TYPE_FORCE32 = 0x7FFFFFFF
} cuabi_conditional_type;

/** Flags for cuabi_graph_instantiate_with_flags (the values of
 * CUgraphInstantiate_flags). */
typedef enum cuabi_graph_instantiate_flag_bits CUABI_ENUM_BASE {
  /** Memory allocation nodes' allocations not freed in the graph are freed
   * before each launch. */
  CUABI_GRAPH_INSTANTIATE_AUTO_FREE_ON_LAUNCH = 1 << 0,
  /** Upload the graph to the device during instantiation, on upload_stream. */
  CUABI_GRAPH_INSTANTIATE_UPLOAD = 1 << 1,
  /** Instantiate the graph so that device code may launch it. */
  CUABI_GRAPH_INSTANTIATE_DEVICE_LAUNCH = 1 << 2,
  /** Kernel nodes run at their own priority (cuabi_launch_config.priority),
   * not the launching stream's. */
  CUABI_GRAPH_INSTANTIATE_USE_NODE_PRIORITY = 1 << 3,
  CUABI_GRAPH_INSTANTIATE_FLAG_BITS_FORCE32 = 0x7FFFFFFF
} cuabi_graph_instantiate_flag_bits;
/** An OR of cuabi_graph_instantiate_flag_bits. */
typedef uint32_t cuabi_graph_instantiate_flags;

/** An empty graph on `device`, to fill node by node (cuGraphCreate). Every
 * cuabi_graph_add_* call of this section adds one node and answers it as a
 * cuabi_graph_node, which keeps the graph alive; the graph keeps every
 * kernel, buffer, event and graph its nodes use. Each add call takes
 * `after`, a node of the same graph the new node depends on (NULL: none);
 * cuabi_graph_node_add_dependency adds more. A node of another graph
 * answers CUABI_ERROR_INVALID_ARGUMENT. */
CUABI_API cuabi_status CUABI_CALL cuabi_graph_create(cuabi_device device, cuabi_graph* out);
/** Releases the node handle; the node stays in its graph, and the graph
 * lives while anything else keeps it. */
CUABI_API void CUABI_CALL cuabi_graph_node_release(cuabi_graph_node node);
/** A node that does nothing but order: `after` (NULL: none). */
CUABI_API cuabi_status CUABI_CALL cuabi_graph_add_empty_node(cuabi_graph graph,
                                                             cuabi_graph_node after,
                                                             cuabi_graph_node* out);
/** A kernel node: `function` run with `config` (every field of
 * cuabi_launch_config: grid, block, shared memory, clusters, cooperative,
 * priority) and the packed argument block `args` of `args_size` bytes,
 * copied now. The configuration and the argument block are checked against
 * the kernel exactly as cuabi_function_launch_packed checks them; the
 * programmatic fields (CUABI_LAUNCH_PROGRAMMATIC_*, programmatic_event)
 * answer CUABI_ERROR_NOT_SUPPORTED (a graph orders its nodes by its edges).
 * `after` (NULL: none).
 * @idiom launch */
CUABI_API cuabi_status CUABI_CALL cuabi_graph_add_kernel_node(cuabi_graph graph,
                                                              cuabi_graph_node after,
                                                              cuabi_function function,
                                                              const cuabi_launch_config* config,
                                                              const void* args, size_t args_size,
                                                              cuabi_graph_node* out);
/** A node copying `bytes` from `src` at `src_offset` to `dst` at
 * `dst_offset` (buffers of the graph's device). A range past a buffer's end
 * answers CUABI_ERROR_OUT_OF_RANGE, overlapping ranges
 * CUABI_ERROR_INVALID_ARGUMENT. `after` (NULL: none). */
CUABI_API cuabi_status CUABI_CALL cuabi_graph_add_copy_node(cuabi_graph graph,
                                                            cuabi_graph_node after,
                                                            cuabi_buffer dst, size_t dst_offset,
                                                            cuabi_buffer src, size_t src_offset,
                                                            size_t bytes, cuabi_graph_node* out);
/** A node copying `bytes` from the page-locked `src` at `src_offset` to the
 * buffer `dst` at `dst_offset`. A range past either end answers
 * CUABI_ERROR_OUT_OF_RANGE. `after` (NULL: none). */
CUABI_API cuabi_status CUABI_CALL cuabi_graph_add_upload_node(cuabi_graph graph,
                                                              cuabi_graph_node after,
                                                              cuabi_buffer dst, size_t dst_offset,
                                                              cuabi_host_buffer src,
                                                              size_t src_offset, size_t bytes,
                                                              cuabi_graph_node* out);
/** A node copying `bytes` from the buffer `src` at `src_offset` to the
 * page-locked `dst` at `dst_offset`. A range past either end answers
 * CUABI_ERROR_OUT_OF_RANGE. `after` (NULL: none). */
CUABI_API cuabi_status CUABI_CALL cuabi_graph_add_download_node(cuabi_graph graph,
                                                                cuabi_graph_node after,
                                                                cuabi_host_buffer dst,
                                                                size_t dst_offset, cuabi_buffer src,
                                                                size_t src_offset, size_t bytes,
                                                                cuabi_graph_node* out);
/** A node copying the box `desc` describes (cuabi_copy_3d_desc: host
 * memory, buffers, pitched memory and arrays of the graph's device), every
 * range checked as cuabi_copy_3d checks it; an empty box (width_bytes 0)
 * answers CUABI_ERROR_INVALID_ARGUMENT. The graph keeps the buffers and
 * arrays; host memory is the caller's to keep valid while the graph may run
 * (page-locked memory, a cuabi_host_buffer's, lets the copy run
 * asynchronously). `after` (NULL: none). */
CUABI_API cuabi_status CUABI_CALL cuabi_graph_add_copy_3d_node(cuabi_graph graph,
                                                               cuabi_graph_node after,
                                                               const cuabi_copy_3d_desc* desc,
                                                               cuabi_graph_node* out);
/** A node filling `count` elements of `element_size` bytes (1, 2 or 4) of
 * `buffer` from `offset` with `value`, checked as cuabi_buffer_fill checks
 * (CUABI_ERROR_OUT_OF_RANGE past the end). `after` (NULL: none). */
CUABI_API cuabi_status CUABI_CALL cuabi_graph_add_fill_node(cuabi_graph graph,
                                                            cuabi_graph_node after,
                                                            cuabi_buffer buffer, size_t offset,
                                                            uint32_t value, uint32_t element_size,
                                                            size_t count, cuabi_graph_node* out);
/** A node calling `fn(user_data, ...)` at each launch of the graph. A failure
 * it reports is reported as a stream's host function's is: the next
 * cuabi_stream_synchronize of the stream the graph was launched on answers
 * CUABI_ERROR_HOST_FUNCTION with its message (launched on the default
 * stream: the executable graph's next launch answers it). The caller keeps
 * `user_data` valid while the graph may run. `after` (NULL: none). */
CUABI_API cuabi_status CUABI_CALL cuabi_graph_add_host_node(cuabi_graph graph,
                                                            cuabi_graph_node after,
                                                            cuabi_host_fn fn, void* user_data,
                                                            cuabi_graph_node* out);
/** A node recording `event`. `after` (NULL: none). */
CUABI_API cuabi_status CUABI_CALL cuabi_graph_add_event_record_node(cuabi_graph graph,
                                                                    cuabi_graph_node after,
                                                                    cuabi_event event,
                                                                    cuabi_graph_node* out);
/** A node waiting for `event`. `after` (NULL: none). */
CUABI_API cuabi_status CUABI_CALL cuabi_graph_add_event_wait_node(cuabi_graph graph,
                                                                  cuabi_graph_node after,
                                                                  cuabi_event event,
                                                                  cuabi_graph_node* out);
/** A node running a copy of `child` (taken now) as one step. `child` may
 * not be `graph`. `after` (NULL: none). */
CUABI_API cuabi_status CUABI_CALL cuabi_graph_add_child_graph_node(cuabi_graph graph,
                                                                   cuabi_graph_node after,
                                                                   cuabi_graph child,
                                                                   cuabi_graph_node* out);
/** A node allocating `bytes` (more than 0) of device memory each time the
 * graph runs; cuabi_graph_node_get_address answers its address, which
 * kernel nodes after it may use until a free node (or, with
 * CUABI_GRAPH_INSTANTIATE_AUTO_FREE_ON_LAUNCH, the next launch) frees it.
 * `after` (NULL: none). */
CUABI_API cuabi_status CUABI_CALL cuabi_graph_add_mem_alloc_node(cuabi_graph graph,
                                                                 cuabi_graph_node after,
                                                                 size_t bytes,
                                                                 cuabi_graph_node* out);
/** A node freeing the allocation of `alloc` (a memory allocation node, not
 * NULL). Another kind of node answers CUABI_ERROR_INVALID_ARGUMENT. `after`
 * (NULL: none). */
CUABI_API cuabi_status CUABI_CALL cuabi_graph_add_mem_free_node(cuabi_graph graph,
                                                                cuabi_graph_node after,
                                                                cuabi_graph_node alloc,
                                                                cuabi_graph_node* out);
/** A conditional handle of `graph` for conditional nodes and device code's
 * cudaGraphSetConditional, in `handle`; it is set to `default_value` at
 * the start of each launch of the graph (CU_GRAPH_COND_ASSIGN_DEFAULT). */
CUABI_API cuabi_status CUABI_CALL cuabi_graph_create_conditional_handle(cuabi_graph graph,
                                                                        uint32_t default_value,
                                                                        uint64_t* handle);
/** A conditional node of `type` on `handle` (made by
 * cuabi_graph_create_conditional_handle on this graph or on a graph it is a
 * body of; a value none of them made answers CUABI_ERROR_INVALID_ARGUMENT.
 * The driver numbers every graph's handles alike, so a handle of another
 * graph with the number of one made here cannot be told apart) with `size`
 * bodies: IF 1 or 2 (the second is ELSE), WHILE 1, SWITCH 1 or more; another
 * size answers CUABI_ERROR_INVALID_ARGUMENT naming the bound. The bodies are
 * empty graphs to fill (cuabi_graph_node_get_body). `after` (NULL: none). */
CUABI_API cuabi_status CUABI_CALL cuabi_graph_add_conditional_node(cuabi_graph graph,
                                                                   cuabi_graph_node after,
                                                                   uint64_t handle,
                                                                   cuabi_conditional_type type,
                                                                   uint32_t size,
                                                                   cuabi_graph_node* out);
/** Makes `node` depend on `dependency` (both of one graph, not the same
 * node). A dependency that would close a cycle answers
 * CUABI_ERROR_INVALID_ARGUMENT. */
CUABI_API cuabi_status CUABI_CALL cuabi_graph_node_add_dependency(cuabi_graph_node node,
                                                                  cuabi_graph_node dependency);
/** The node's kind, in `type`. */
CUABI_API cuabi_status CUABI_CALL cuabi_graph_node_get_type(cuabi_graph_node node,
                                                            cuabi_graph_node_type* type);
/** The number of nodes `node` depends on, in `count`. */
CUABI_API cuabi_status CUABI_CALL cuabi_graph_node_get_dependency_count(cuabi_graph_node node,
                                                                        size_t* count);
/** Dependency `index` of `node` (below the count; past it answers
 * CUABI_ERROR_OUT_OF_RANGE), as a new handle.
 * @call action */
CUABI_API cuabi_status CUABI_CALL cuabi_graph_node_get_dependency(cuabi_graph_node node,
                                                                  size_t index,
                                                                  cuabi_graph_node* out);
/** The number of nodes that depend on `node`, in `count`. */
CUABI_API cuabi_status CUABI_CALL cuabi_graph_node_get_dependent_count(cuabi_graph_node node,
                                                                       size_t* count);
/** Dependent `index` of `node` (below the count; past it answers
 * CUABI_ERROR_OUT_OF_RANGE), as a new handle.
 * @call action */
CUABI_API cuabi_status CUABI_CALL cuabi_graph_node_get_dependent(cuabi_graph_node node,
                                                                 size_t index,
                                                                 cuabi_graph_node* out);
/** The device address a memory allocation node allocates, in `address`;
 * another kind of node answers CUABI_ERROR_INVALID_ARGUMENT. */
CUABI_API cuabi_status CUABI_CALL cuabi_graph_node_get_address(cuabi_graph_node node,
                                                               uint64_t* address);
/** Body `index` of a conditional node (below its size; past it answers
 * CUABI_ERROR_OUT_OF_RANGE) as a graph to fill like any other; it keeps the
 * node alive. Another kind of node answers CUABI_ERROR_INVALID_ARGUMENT. */
CUABI_API cuabi_status CUABI_CALL cuabi_graph_node_get_body(cuabi_graph_node node, size_t index,
                                                            cuabi_graph* out);
/** A copy of `graph` with its nodes and edges (cuGraphClone), in `out`. A
 * graph that holds a conditional node, or is the body of one, answers
 * CUABI_ERROR_NOT_SUPPORTED: the driver clones neither.
 * @call action */
CUABI_API cuabi_status CUABI_CALL cuabi_graph_clone(cuabi_graph graph, cuabi_graph* out);
/** Writes the graph as Graphviz DOT text, every node's parameters included,
 * to the file at `path` (cuGraphDebugDotPrint), for debugging. */
CUABI_API cuabi_status CUABI_CALL cuabi_graph_write_dot(cuabi_graph graph, const char* path);
/** Starts capturing the work submitted to `stream` (not the default stream)
 * into the existing `graph` (of the stream's device), after `after` (NULL:
 * after nothing); cuabi_stream_end_capture then answers `graph`'s graph as
 * a new handle. `mode` as cuabi_stream_begin_capture. */
CUABI_API cuabi_status CUABI_CALL cuabi_stream_begin_capture_to_graph(cuabi_stream stream,
                                                                      cuabi_graph graph,
                                                                      cuabi_graph_node after,
                                                                      cuabi_capture_mode mode);
/** Instantiates the graph with `flags` (cuabi_graph_instantiate_flags; an
 * undefined bit answers CUABI_ERROR_INVALID_ARGUMENT). With
 * CUABI_GRAPH_INSTANTIATE_UPLOAD the graph is uploaded on `upload_stream`
 * (NULL: the default stream). */
CUABI_API cuabi_status CUABI_CALL cuabi_graph_instantiate_with_flags(
    cuabi_graph graph, cuabi_graph_instantiate_flags flags, cuabi_stream upload_stream,
    cuabi_graph_exec* out);

/* Updating an executable graph's nodes in place. `node` is a node of the
 * graph `exec` was instantiated from (or of one of its bodies); a node of
 * another graph answers CUABI_ERROR_INVALID_ARGUMENT, as does a node of
 * another kind than the call updates (an update keeps a node's kind), both
 * named in the message. The new parameters are checked as adding the node
 * checks them, take effect at the next launch of `exec` (a launch under way
 * is not changed) and leave the graph itself as it was. `exec` keeps what
 * the new parameters use until the node's next update. */

/** Gives kernel node `node` the kernel `function`, the grid, block and
 * shared memory of `config` (not NULL) and the packed argument block `args`
 * of `args_size` bytes, copied now (cuGraphExecKernelNodeSetParams). The
 * configuration and arguments are checked as cuabi_graph_add_kernel_node
 * checks them. A kernel whose parameters (count, sizes, offsets) differ from
 * the node's kernel's answers CUABI_ERROR_INVALID_ARGUMENT naming both
 * signatures. A config with fields past shared_mem_bytes (clusters,
 * cooperative, priority, launch attributes) answers
 * CUABI_ERROR_NOT_SUPPORTED: those stay as instantiated.
 * @idiom launch */
CUABI_API cuabi_status CUABI_CALL cuabi_graph_exec_set_kernel_node(
    cuabi_graph_exec exec, cuabi_graph_node node, cuabi_function function,
    const cuabi_launch_config* config, const void* args, size_t args_size);
/** Gives copy node `node` (of cuabi_graph_add_copy_node) a new range, checked
 * as adding it checks. A 3D copy node answers CUABI_ERROR_NOT_SUPPORTED: the
 * driver updates only one-dimensional copies in place. */
CUABI_API cuabi_status CUABI_CALL cuabi_graph_exec_set_copy_node(
    cuabi_graph_exec exec, cuabi_graph_node node, cuabi_buffer dst, size_t dst_offset,
    cuabi_buffer src, size_t src_offset, size_t bytes);
/** Gives upload node `node` (of cuabi_graph_add_upload_node) a new range,
 * checked as adding it checks. */
CUABI_API cuabi_status CUABI_CALL cuabi_graph_exec_set_upload_node(
    cuabi_graph_exec exec, cuabi_graph_node node, cuabi_buffer dst, size_t dst_offset,
    cuabi_host_buffer src, size_t src_offset, size_t bytes);
/** Gives download node `node` (of cuabi_graph_add_download_node) a new
 * range, checked as adding it checks. */
CUABI_API cuabi_status CUABI_CALL cuabi_graph_exec_set_download_node(
    cuabi_graph_exec exec, cuabi_graph_node node, cuabi_host_buffer dst, size_t dst_offset,
    cuabi_buffer src, size_t src_offset, size_t bytes);
/** Gives fill node `node` a new buffer range and value, checked as
 * cuabi_graph_add_fill_node checks. */
CUABI_API cuabi_status CUABI_CALL cuabi_graph_exec_set_fill_node(
    cuabi_graph_exec exec, cuabi_graph_node node, cuabi_buffer buffer, size_t offset,
    uint32_t value, uint32_t element_size, size_t count);
/** Makes host node `node` call `fn(user_data, ...)`, its failures reported
 * as cuabi_graph_add_host_node's are. */
CUABI_API cuabi_status CUABI_CALL cuabi_graph_exec_set_host_node(cuabi_graph_exec exec,
                                                                 cuabi_graph_node node,
                                                                 cuabi_host_fn fn,
                                                                 void* user_data);
/** Makes event record or event wait node `node` record or wait for `event`
 * (of the graph's device). */
CUABI_API cuabi_status CUABI_CALL cuabi_graph_exec_set_event_node(cuabi_graph_exec exec,
                                                                  cuabi_graph_node node,
                                                                  cuabi_event event);
/** Enables (`enabled` not 0) or disables `node` in `exec` (cuGraphNodeSetEnabled):
 * a disabled node does nothing at launch and its dependents wait as before.
 * Only kernel, copy and fill nodes can be disabled; another kind answers
 * CUABI_ERROR_NOT_SUPPORTED naming it. */
CUABI_API cuabi_status CUABI_CALL cuabi_graph_exec_set_node_enabled(cuabi_graph_exec exec,
                                                                    cuabi_graph_node node,
                                                                    int32_t enabled);
/** Whether `node` is enabled in `exec`: 1 or 0 in `enabled`; the same
 * refusals as cuabi_graph_exec_set_node_enabled. */
CUABI_API cuabi_status CUABI_CALL cuabi_graph_exec_get_node_enabled(cuabi_graph_exec exec,
                                                                    cuabi_graph_node node,
                                                                    int32_t* enabled);
/** The value device code launches `exec` by, in `cu_graph_exec` (the raw
 * CUgraphExec, also for interop): a kernel argument for cudaGraphLaunch
 * with cudaStreamGraphFireAndForget or cudaStreamGraphTailLaunch, of a graph
 * instantiated with CUABI_GRAPH_INSTANTIATE_DEVICE_LAUNCH. Device code
 * launches a graph only from a kernel that itself runs in a graph (the
 * driver refuses a stream launch of such a kernel), and only a graph
 * uploaded first (CUABI_GRAPH_INSTANTIATE_UPLOAD, cuabi_graph_exec_upload or
 * a launch from the host); `exec` must outlive every launch. NVRTC declares
 * no cudaGraphLaunch: a program declares it, and needs no relocatable code
 * nor the device runtime library (see the README). */
CUABI_API cuabi_status CUABI_CALL cuabi_graph_exec_get_launch_handle(cuabi_graph_exec exec,
                                                              uint64_t* cu_graph_exec);

/* ------------------------------------------------------------------------- */
/* Device core dumps                                                          */
/* ------------------------------------------------------------------------- */

/** What a device core dump leaves out (CUcoredumpGenerationFlags). */
typedef enum cuabi_coredump_flag_bits CUABI_ENUM_BASE {
  /** CUDA modules that are not relocated at run time. */
  CUABI_COREDUMP_SKIP_NONRELOCATED_ELF_IMAGES = 1 << 0,
  /** Device global memory that belongs to no context. */
  CUABI_COREDUMP_SKIP_GLOBAL_MEMORY = 1 << 1,
  /** The faulting kernel's shared memory. */
  CUABI_COREDUMP_SKIP_SHARED_MEMORY = 1 << 2,
  /** The faulting kernel's local memory. */
  CUABI_COREDUMP_SKIP_LOCAL_MEMORY = 1 << 3,
  /** No abort() of the host process when the dump is written: the fault is
   * reported as CUABI_ERROR_CONTEXT_LOST, as without a dump. */
  CUABI_COREDUMP_SKIP_ABORT = 1 << 4,
  /** Constant-bank memory. */
  CUABI_COREDUMP_SKIP_CONSTBANK_MEMORY = 1 << 5,
  /** A small dump: the four SKIP_*_MEMORY / ELF flags above. */
  CUABI_COREDUMP_LIGHTWEIGHT = 0xF,
  CUABI_COREDUMP_FLAG_BITS_FORCE32 = 0x7FFFFFFF
} cuabi_coredump_flag_bits;
/** An OR of cuabi_coredump_flag_bits. */
typedef uint32_t cuabi_coredump_flags;

/** Device core dumps on a GPU exception (a kernel's illegal address, trap
 * ...), for every context created after this call: call it before the
 * first use of a device (cuabi_device_get). `enable` 0 turns them off. The
 * dump is written at `path` (NULL: the driver's default,
 * core.cuda.HOSTNAME.PID; %h, %p and %t in it are replaced by the host
 * name, process id and time), read with cuda-gdb. Without
 * CUABI_COREDUMP_SKIP_ABORT the driver aborts the host process after
 * writing the dump. The CUDA_ENABLE_COREDUMP_ON_EXCEPTION, CUDA_COREDUMP_FILE
 * and CUDA_COREDUMP_GENERATION_FLAGS environment variables, when set before
 * CUDA initialised, take precedence over this call (the driver's rule).
 * CUABI_ERROR_INVALID_ARGUMENT for unknown flags or a path of 1024 bytes or
 * more; CUABI_ERROR_NOT_SUPPORTED, when enabling, where the driver's
 * debugger library (libcudadebugger.so.1), which writes the dumps, is not
 * installed. A driver may take the setting and still write no dump: on an
 * H200 with driver 580 the library was there, a faulting kernel's error
 * never came and the process did not exit, so try dumps in a process of
 * their own before relying on them.
 * @nullable path: the driver's default, core.cuda.HOSTNAME.PID */
CUABI_API cuabi_status CUABI_CALL cuabi_coredump_set(int32_t enable, const char* path,
                                                     cuabi_coredump_flags flags);
/** As cuabi_coredump_set (`enable`, `path` and `flags`, and the refusals,
 * the same) for `device`'s context only, at any time.
 * @nullable path: the driver's default, core.cuda.HOSTNAME.PID */
CUABI_API cuabi_status CUABI_CALL cuabi_device_set_coredump(cuabi_device device, int32_t enable,
                                                            const char* path,
                                                            cuabi_coredump_flags flags);

/* ------------------------------------------------------------------------- */
/* Profiler annotations: NVTX ranges and marks, profiler start and stop       */
/* ------------------------------------------------------------------------- */

/* Ranges and marks go to the NVTX tool attached to the process (Nsight
 * Systems, or any library named by NVTX_INJECTION64_PATH); with none
 * attached each call returns at once. A domain groups annotations under a
 * name: NULL is NVTX's default domain, and a named domain is made on its
 * first use and kept for the process. `argb` colours the annotation
 * (0xAARRGGBB; 0: no colour). A message or domain name is UTF-8. */

/** Opens a range on the calling thread, nested in the thread's open ranges of
 * the same domain: `message` names it, `argb` colours it (0xAARRGGBB; 0: no
 * colour), `domain` groups it. CUABI_ERROR_INVALID_ARGUMENT for a NULL
 * message or an empty domain name.
 * @nullable domain: NVTX's default domain
 * @scope nvtx_range cuabi_nvtx_range_pop thread */
CUABI_API cuabi_status CUABI_CALL cuabi_nvtx_range_push(const char* domain, const char* message,
                                                        uint32_t argb);
/** Closes the calling thread's innermost open range of `domain`. A thread
 * with no range of that domain open answers CUABI_ERROR_INVALID_ARGUMENT
 * naming the domain.
 * @nullable domain: NVTX's default domain */
CUABI_API cuabi_status CUABI_CALL cuabi_nvtx_range_pop(const char* domain);
/** Opens a range that any thread may end, and answers its id in `id` (never
 * 0); `domain`, `message` and `argb` as cuabi_nvtx_range_push takes them,
 * with the same refusals.
 * @nullable domain: NVTX's default domain */
CUABI_API cuabi_status CUABI_CALL cuabi_nvtx_range_start(const char* domain, const char* message,
                                                         uint32_t argb, uint64_t* id);
/** Ends the range `id` of cuabi_nvtx_range_start, from any thread. An id that
 * is not an open range (never started, or ended already) answers
 * CUABI_ERROR_INVALID_ARGUMENT naming it. */
CUABI_API cuabi_status CUABI_CALL cuabi_nvtx_range_end(uint64_t id);
/** Marks an instant: `message` in `domain`, coloured `argb` (see above).
 * The same refusals as cuabi_nvtx_range_push.
 * @nullable domain: NVTX's default domain */
CUABI_API cuabi_status CUABI_CALL cuabi_nvtx_mark(const char* domain, const char* message,
                                                  uint32_t argb);
/** Starts the attached profiler's collection for `device`'s context
 * (cuProfilerStart), for a profiler started with collection off (Nsight
 * Systems' --capture-range=cudaProfilerApi). Without a profiler it does
 * nothing. */
CUABI_API cuabi_status CUABI_CALL cuabi_device_profiler_start(cuabi_device device);
/** Stops it (cuProfilerStop). */
CUABI_API cuabi_status CUABI_CALL cuabi_device_profiler_stop(cuabi_device device);

/* ------------------------------------------------------------------------- */
/* Green contexts                                                             */
/* ------------------------------------------------------------------------- */

typedef struct cuabi_sm_resource_s* cuabi_sm_resource;     /**< a set of a device's SMs */
typedef struct cuabi_green_context_s* cuabi_green_context; /**< a context confined to a set of SMs */

/** The SMs of `device`, all of them, as a resource to split
 * (cuDeviceGetDevResource). The resource keeps the device alive. */
CUABI_API cuabi_status CUABI_CALL cuabi_device_get_sm_resource(cuabi_device device,
                                                               cuabi_sm_resource* out);
/** Releases a resource; green contexts made from it keep what they need. */
CUABI_API void CUABI_CALL cuabi_sm_resource_release(cuabi_sm_resource resource);
/** The number of SMs in `resource` (0 for an empty remainder). */
CUABI_API cuabi_status CUABI_CALL cuabi_sm_resource_get_sm_count(cuabi_sm_resource resource,
                                                                 uint32_t* count);
/** The fewest SMs one group of a split of `resource` may have (8 on
 * compute capability 9.0). */
CUABI_API cuabi_status CUABI_CALL cuabi_sm_resource_get_min_partition_size(
    cuabi_sm_resource resource, uint32_t* count);
/** The granularity of a split of `resource`: a group's SM count is a
 * multiple of it (8 on compute capability 9.0). */
CUABI_API cuabi_status CUABI_CALL cuabi_sm_resource_get_alignment(cuabi_sm_resource resource,
                                                                  uint32_t* count);
/** How many groups of at least `min_sm_count` SMs `resource` splits into
 * (cuDevSmResourceSplitByCount asked without results). `min_sm_count` 0 asks
 * for groups of the smallest size the device allows. The same refusals as
 * cuabi_sm_resource_split. */
CUABI_API cuabi_status CUABI_CALL cuabi_sm_resource_get_group_count(cuabi_sm_resource resource,
                                                                    uint32_t min_sm_count,
                                                                    uint32_t* count);
/** One part of a split of `resource` into `group_count` groups of at least
 * `min_sm_count` SMs each (the driver rounds the count up to the resource's
 * alignment): group `index` for `index` < `group_count`, and for `index` ==
 * `group_count` the remainder, the SMs left over (possibly none). The same
 * arguments always give the same split. The part keeps `resource` alive.
 *
 * CUABI_ERROR_INVALID_ARGUMENT, naming the bound, before the driver sees it:
 * `group_count` 0; `min_sm_count` above the resource's SM count or not a
 * multiple of its alignment; more groups than the resource's SMs make
 * (`group_count` x the rounded `min_sm_count` > its SM count); `index` past
 * `group_count`; a resource that is itself a part of a split (make a green
 * context from it and split cuabi_green_context_get_sm_resource instead).
 * @call action */
CUABI_API cuabi_status CUABI_CALL cuabi_sm_resource_split(cuabi_sm_resource resource,
                                                          uint32_t group_count,
                                                          uint32_t min_sm_count, uint32_t index,
                                                          cuabi_sm_resource* out);

/** A green context on the device of `resource`, whose kernels run on the
 * resource's SMs only (cuDevResourceGenerateDesc, cuGreenCtxCreate). The
 * context keeps the resource and its device alive. A resource with no SMs
 * answers CUABI_ERROR_INVALID_ARGUMENT. */
CUABI_API cuabi_status CUABI_CALL cuabi_green_context_create(cuabi_sm_resource resource,
                                                             cuabi_green_context* out);
/** Releases the handle; the context lives on while its streams do. */
CUABI_API void CUABI_CALL cuabi_green_context_release(cuabi_green_context context);
/** The number of SMs the context's kernels may use. */
CUABI_API cuabi_status CUABI_CALL cuabi_green_context_get_sm_count(cuabi_green_context context,
                                                                   uint32_t* count);
/** The context's SMs as a resource (cuGreenCtxGetDevResource), which may be
 * split again. The resource keeps the context alive. */
CUABI_API cuabi_status CUABI_CALL cuabi_green_context_get_sm_resource(
    cuabi_green_context context, cuabi_sm_resource* out);
/** A new stream whose work runs in `context` (cuGreenCtxStreamCreate): an
 * ordinary cuabi_stream for every launch, copy, event and capture, which
 * keeps the context alive. Kernels of modules loaded on the context's device
 * launch on it. `flags` must include CUABI_STREAM_NON_BLOCKING (the driver
 * requires it of a green context's stream); `priority` as for
 * cuabi_stream_create. */
CUABI_API cuabi_status CUABI_CALL cuabi_green_context_create_stream(cuabi_green_context context,
                                                                    cuabi_stream_flags flags,
                                                                    int32_t priority,
                                                                    cuabi_stream* out);
/** Checks that `stream` (not NULL) runs its work in `context`:
 * CUABI_ERROR_INVALID_ARGUMENT naming both when it is a stream of another
 * green context or of the device's primary context. For code that must
 * confine work to a partition. */
CUABI_API cuabi_status CUABI_CALL cuabi_green_context_check_stream(cuabi_green_context context,
                                                                   cuabi_stream stream);

/* ------------------------------------------------------------------------- */
/* Tensor maps                                                                */
/* ------------------------------------------------------------------------- */

typedef struct cuabi_tensor_map_s* cuabi_tensor_map; /**< a TMA descriptor over a buffer */

/** The size in bytes of a tensor map as a kernel argument (CUtensorMap,
 * passed by value, `const __grid_constant__ CUtensorMap`, 64-byte aligned). */
#define CUABI_TENSOR_MAP_BYTES 128

/** A tensor element's type (CUtensorMapDataType). */
typedef enum cuabi_tensor_data_type CUABI_ENUM_BASE {
  CUABI_TENSOR_UINT8 = 0,        /**< 1 byte */
  CUABI_TENSOR_UINT16 = 1,       /**< 2 bytes */
  CUABI_TENSOR_UINT32 = 2,       /**< 4 bytes */
  CUABI_TENSOR_INT32 = 3,        /**< 4 bytes */
  CUABI_TENSOR_UINT64 = 4,       /**< 8 bytes */
  CUABI_TENSOR_INT64 = 5,        /**< 8 bytes */
  CUABI_TENSOR_FLOAT16 = 6,      /**< 2 bytes */
  CUABI_TENSOR_FLOAT32 = 7,      /**< 4 bytes */
  CUABI_TENSOR_FLOAT64 = 8,      /**< 8 bytes */
  CUABI_TENSOR_BFLOAT16 = 9,     /**< 2 bytes */
  CUABI_TENSOR_FLOAT32_FTZ = 10, /**< 4 bytes, denormals flushed */
  CUABI_TENSOR_TFLOAT32 = 11,    /**< 4 bytes */
  CUABI_TENSOR_TFLOAT32_FTZ = 12, /**< 4 bytes, denormals flushed */
  CUABI_TENSOR_DATA_TYPE_FORCE32 = 0x7FFFFFFF
} cuabi_tensor_data_type;

/** An interleaved layout (CUtensorMapInterleave). */
typedef enum cuabi_tensor_interleave CUABI_ENUM_BASE {
  CUABI_TENSOR_INTERLEAVE_NONE = 0, /**< not interleaved */
  CUABI_TENSOR_INTERLEAVE_B16 = 1,  /**< 16-byte interleaved channels */
  CUABI_TENSOR_INTERLEAVE_B32 = 2,  /**< 32-byte interleaved channels */
  CUABI_TENSOR_INTERLEAVE_FORCE32 = 0x7FFFFFFF
} cuabi_tensor_interleave;

/** The shared-memory swizzle of a copied box (CUtensorMapSwizzle). */
typedef enum cuabi_tensor_swizzle CUABI_ENUM_BASE {
  CUABI_TENSOR_SWIZZLE_NONE = 0,  /**< no swizzle */
  CUABI_TENSOR_SWIZZLE_B32 = 1,  /**< 16-byte chunks within a 32-byte span */
  CUABI_TENSOR_SWIZZLE_B64 = 2,  /**< 16-byte chunks within a 64-byte span */
  CUABI_TENSOR_SWIZZLE_B128 = 3, /**< 16-byte chunks within a 128-byte span */
  CUABI_TENSOR_SWIZZLE_FORCE32 = 0x7FFFFFFF
} cuabi_tensor_swizzle;

/** The L2 fetch size (CUtensorMapL2promotion). */
typedef enum cuabi_tensor_l2_promotion CUABI_ENUM_BASE {
  CUABI_TENSOR_L2_PROMOTION_NONE = 0, /**< no promotion */
  CUABI_TENSOR_L2_PROMOTION_B64 = 1,  /**< 64-byte L2 fetches */
  CUABI_TENSOR_L2_PROMOTION_B128 = 2, /**< 128-byte L2 fetches */
  CUABI_TENSOR_L2_PROMOTION_B256 = 3, /**< 256-byte L2 fetches */
  CUABI_TENSOR_L2_PROMOTION_FORCE32 = 0x7FFFFFFF
} cuabi_tensor_l2_promotion;

/** What fills elements outside the tensor (CUtensorMapFloatOOBfill). */
typedef enum cuabi_tensor_oob_fill CUABI_ENUM_BASE {
  /** Zeros. */
  CUABI_TENSOR_OOB_FILL_ZERO = 0,
  /** NaN that requests zero in FMA (floating-point types only). */
  CUABI_TENSOR_OOB_FILL_NAN_REQUEST_ZERO_FMA = 1,
  CUABI_TENSOR_OOB_FILL_FORCE32 = 0x7FFFFFFF
} cuabi_tensor_oob_fill;

/** A tiled tensor map (cuTensorMapEncodeTiled) over `buffer` from byte
 * `offset`: a tensor of `data_type` elements whose rank (1 to 5) is
 * `num_sizes`, dimension 0 the innermost. `sizes` holds each dimension's
 * element count (1 to 2^32); `strides` each dimension's stride in bytes
 * (`strides[0]` the element size; the others multiples of 16, of 32 with
 * CUABI_TENSOR_INTERLEAVE_B32, below 2^40, and each at least what the
 * dimension below spans); `box` the box one copy moves (1 to 256 elements a
 * dimension; without interleave `box[0]` x the element size a multiple of 16
 * bytes and, with a swizzle, at most the swizzle's span); `element_strides`
 * the traversal steps (1 to 8; none given: every step 1). `strides`, `box`
 * and `element_strides` (when given) have one entry per dimension. The
 * tensor must lie within the buffer and its address be 16-byte aligned (32
 * with CUABI_TENSOR_INTERLEAVE_B32); interleave needs rank 3 or more,
 * CUABI_TENSOR_INTERLEAVE_B32 needs CUABI_TENSOR_SWIZZLE_B32, and
 * CUABI_TENSOR_OOB_FILL_NAN_REQUEST_ZERO_FMA a floating-point type. Each is
 * refused with CUABI_ERROR_INVALID_ARGUMENT naming the value and its bound
 * before the driver sees it. The map keeps the buffer alive; it is a kernel
 * argument of CUABI_TENSOR_MAP_BYTES (cuabi_tensor_map_get_bytes). */
CUABI_API cuabi_status CUABI_CALL cuabi_tensor_map_encode_tiled(
    cuabi_buffer buffer, size_t offset, cuabi_tensor_data_type data_type, const size_t* sizes,
    size_t num_sizes, const size_t* strides, size_t num_strides, const size_t* box,
    size_t num_box, const size_t* element_strides, size_t num_element_strides,
    cuabi_tensor_interleave interleave, cuabi_tensor_swizzle swizzle,
    cuabi_tensor_l2_promotion l2_promotion, cuabi_tensor_oob_fill oob_fill,
    cuabi_tensor_map* out);
/** An im2col tensor map (cuTensorMapEncodeIm2col) over `buffer` from byte
 * `offset`: rank (`num_sizes`) 3 to 5; `sizes`, `strides`, `element_strides`
 * and the other arguments as cuabi_tensor_map_encode_tiled. `lower_corner`
 * and `upper_corner` hold the bounding box's corner offsets in the rank - 2
 * spatial dimensions, each within [-2^15, 2^15) for rank 3, [-2^7, 2^7) for
 * rank 4 and [-2^4, 2^4) for rank 5; `channels_per_pixel` (1 to 256; times
 * the element size a multiple of 16 bytes and, with a swizzle, at most its
 * span) and `pixels_per_column` (1 to 1024) make the box. Refused as the
 * tiled form, with these bounds too. */
CUABI_API cuabi_status CUABI_CALL cuabi_tensor_map_encode_im2col(
    cuabi_buffer buffer, size_t offset, cuabi_tensor_data_type data_type, const size_t* sizes,
    size_t num_sizes, const size_t* strides, size_t num_strides, const size_t* element_strides,
    size_t num_element_strides, const int32_t* lower_corner, size_t num_lower_corner,
    const int32_t* upper_corner, size_t num_upper_corner, uint32_t channels_per_pixel,
    uint32_t pixels_per_column, cuabi_tensor_interleave interleave, cuabi_tensor_swizzle swizzle,
    cuabi_tensor_l2_promotion l2_promotion, cuabi_tensor_oob_fill oob_fill,
    cuabi_tensor_map* out);
/** Releases a tensor map (and its hold on the buffer). */
CUABI_API void CUABI_CALL cuabi_tensor_map_release(cuabi_tensor_map map);
/** Points `map` at `buffer` from byte `offset` (cuTensorMapReplaceAddress),
 * the rest unchanged; the map now keeps `buffer` alive instead. The same
 * checks of alignment and extent as the encoding. */
CUABI_API cuabi_status CUABI_CALL cuabi_tensor_map_replace_address(cuabi_tensor_map map,
                                                                   cuabi_buffer buffer,
                                                                   size_t offset);
/** The map's CUABI_TENSOR_MAP_BYTES bytes, the value of a kernel's
 * `const __grid_constant__ CUtensorMap` parameter (copy them into 64-byte
 * aligned storage for cuabi_function_launch). */
CUABI_API cuabi_status CUABI_CALL cuabi_tensor_map_get_bytes(cuabi_tensor_map map, void* buf,
                                                             size_t* size);

/* ------------------------------------------------------------------------- */
/* DLPack                                                                     */
/* ------------------------------------------------------------------------- */

/* DLPack (https://dmlc.github.io/dlpack) hands a tensor between libraries
 * without a copy. The structs below have the layout of DLPack 1.x's
 * DLPackVersion, DLDevice, DLDataType, DLTensor, DLManagedTensor and
 * DLManagedTensorVersioned, under cuabi names, so that they never clash with
 * a dlpack.h the caller includes too: a pointer to one is a pointer to the
 * other (cast it).
 *
 * Ownership. A managed tensor belongs to whoever holds it until its deleter
 * runs; the deleter is called once, by the last holder, with the tensor
 * itself (a NULL deleter means there is nothing to free).
 * cuabi_buffer_export_dlpack answers a tensor whose deleter releases the
 * reference to the buffer the tensor holds. cuabi_buffer_import_dlpack takes
 * a tensor over on success: the buffer it answers keeps the tensor alive and
 * calls its deleter once, when the last cuabi reference to the buffer goes
 * (the buffer's release, or later, when a texture or a queued free still
 * holds it). On failure the tensor stays the caller's.
 *
 * Streams (DLPack's handshake). The producer's work on the memory may still
 * be queued on its stream when the tensor is handed over. DLPack's
 * __dlpack__(stream=S) has the consumer name its stream S (a CUstream as an
 * integer: 1 the legacy default stream, 2 the per-thread default stream, any
 * other positive value a CUstream of this process, -1 no synchronisation
 * asked; 0 is ambiguous and refused) and the producer makes S wait for that
 * work before it answers the tensor: cuabi_stream_dlpack_handoff does that
 * on the producer's side, cuabi_stream_dlpack_wait on the consumer's
 * (cuabi's stream waits for a producer's stream). Both record an event and
 * make the other stream wait on it: neither blocks the host. */

/** DLPack's ABI version as a tensor carries it (DLPackVersion). */
typedef struct cuabi_dlpack_version {
  uint32_t major; /**< 1 for DLPack 1.x; another major version has another layout */
  uint32_t minor; /**< added enum values only */
} cuabi_dlpack_version;

/** The DLPack version cuabi_buffer_export_dlpack writes; an imported tensor
 * must have this major version. */
#define CUABI_DLPACK_MAJOR_VERSION 1
/** The DLPack minor version cuabi_buffer_export_dlpack writes. */
#define CUABI_DLPACK_MINOR_VERSION 1

/** DLPack's device types (DLDeviceType) that name CUDA memory; DLPack has
 * others (CPU 1, ROCm 10, ...), which cuabi refuses. */
typedef enum cuabi_dlpack_device_type CUABI_ENUM_BASE {
  CUABI_DLPACK_DEVICE_CUDA = 2,         /**< device memory (kDLCUDA) */
  CUABI_DLPACK_DEVICE_PINNED_HOST = 3,  /**< page-locked host memory (kDLCUDAHost) */
  CUABI_DLPACK_DEVICE_MANAGED = 13,     /**< managed memory (kDLCUDAManaged) */
  CUABI_DLPACK_DEVICE_TYPE_FORCE32 = 0x7FFFFFFF
} cuabi_dlpack_device_type;

/** DLPack's element type codes (DLDataTypeCode). */
typedef enum cuabi_dlpack_type_code CUABI_ENUM_BASE {
  CUABI_DLPACK_INT = 0,     /**< signed integer */
  CUABI_DLPACK_UINT = 1,    /**< unsigned integer */
  CUABI_DLPACK_FLOAT = 2,   /**< IEEE floating point */
  CUABI_DLPACK_OPAQUE = 3,  /**< an opaque handle */
  CUABI_DLPACK_BFLOAT = 4,  /**< bfloat16 */
  CUABI_DLPACK_COMPLEX = 5, /**< complex: two floats per element */
  CUABI_DLPACK_BOOL = 6,    /**< boolean, 8 bits */
  CUABI_DLPACK_TYPE_CODE_FORCE32 = 0x7FFFFFFF
} cuabi_dlpack_type_code;

/* A tensor's flags (DLManagedTensorVersioned's `flags`, 64 bits). */
/** The consumer may only read the memory. */
#define CUABI_DLPACK_FLAG_READ_ONLY 1
/** The producer copied the data to make the tensor. */
#define CUABI_DLPACK_FLAG_IS_COPIED 2
/** Sub-byte elements are padded to a byte each. */
#define CUABI_DLPACK_FLAG_IS_SUBBYTE_TYPE_PADDED 4

/** Where a tensor lives (DLDevice). */
typedef struct cuabi_dlpack_device {
  int32_t device_type; /**< a cuabi_dlpack_device_type (DLDeviceType) */
  int32_t device_id;   /**< the device's ordinal (0 for CUDA host memory) */
} cuabi_dlpack_device;

/** An element type (DLDataType): `lanes` values of `bits` bits each, of kind `code`. */
typedef struct cuabi_dlpack_dtype {
  uint8_t code;   /**< a cuabi_dlpack_type_code */
  uint8_t bits;   /**< bits per lane */
  uint16_t lanes; /**< lanes per element (1 for a scalar) */
} cuabi_dlpack_dtype;

/** A tensor (DLTensor): element (i0, i1, ...) is at byte
 * `byte_offset` + (i0 * strides[0] + i1 * strides[1] + ...) * element size
 * from `data`. */
typedef struct cuabi_dlpack_tensor {
  void* data;                 /**< the device address of the allocation */
  cuabi_dlpack_device device; /**< where it lives */
  int32_t ndim;               /**< the number of dimensions (0: a scalar) */
  cuabi_dlpack_dtype dtype;   /**< the element type */
  int64_t* shape;             /**< ndim extents */
  int64_t* strides;           /**< ndim strides in elements; NULL: compact row-major */
  uint64_t byte_offset;       /**< bytes from data to the first element */
} cuabi_dlpack_tensor;

struct cuabi_dlpack_managed_tensor;
struct cuabi_dlpack_managed_tensor_versioned;

/** The deleter of an unversioned (DLPack 0.x) managed tensor. */
typedef void(CUABI_CALL* cuabi_dlpack_deleter_fn)(struct cuabi_dlpack_managed_tensor* self);
/** The deleter of a versioned (DLPack 1.x) managed tensor. */
typedef void(CUABI_CALL* cuabi_dlpack_versioned_deleter_fn)(
    struct cuabi_dlpack_managed_tensor_versioned* self);

/** An unversioned managed tensor (DLManagedTensor, DLPack before 1.0). */
typedef struct cuabi_dlpack_managed_tensor {
  cuabi_dlpack_tensor dl_tensor;   /**< the tensor */
  void* manager_ctx;               /**< the producer's */
  cuabi_dlpack_deleter_fn deleter; /**< frees it; NULL: nothing to free */
} cuabi_dlpack_managed_tensor;

/** A versioned managed tensor (DLManagedTensorVersioned, DLPack 1.x). */
typedef struct cuabi_dlpack_managed_tensor_versioned {
  cuabi_dlpack_version version;              /**< the producer's DLPack version */
  void* manager_ctx;                         /**< the producer's */
  cuabi_dlpack_versioned_deleter_fn deleter; /**< frees it; NULL: nothing to free */
  uint64_t flags;                            /**< CUABI_DLPACK_FLAG_* */
  cuabi_dlpack_tensor dl_tensor;             /**< the tensor */
} cuabi_dlpack_managed_tensor_versioned;

/** How cuabi_buffer_import_dlpack may use the tensor: an OR of
 * cuabi_dlpack_import_flag_bits. */
typedef uint32_t cuabi_dlpack_import_flags;
/** The bits of cuabi_dlpack_import_flags. */
typedef enum cuabi_dlpack_import_flag_bits CUABI_ENUM_BASE {
  /** The caller will only read the memory: a read-only tensor is accepted
   * (without it, one is refused). */
  CUABI_DLPACK_IMPORT_READ_ONLY = 1,
  CUABI_DLPACK_IMPORT_FLAG_BITS_FORCE32 = 0x7FFFFFFF
} cuabi_dlpack_import_flag_bits;

/** Exports `buffer` as a DLPack 1.x tensor in `out`: `ndim` (0 to 64)
 * extents `shape` (each >= 0), `strides` in elements (NULL: compact
 * row-major; negative strides allowed), of `dtype_code`
 * (cuabi_dlpack_type_code) with `dtype_bits` bits per lane (a multiple of 8
 * from 8 to 256) and `dtype_lanes` lanes (>= 1),
 * starting `byte_offset` bytes into the buffer. Every element the shape and
 * strides reach must lie inside the buffer: CUABI_ERROR_OUT_OF_RANGE names
 * the reach and the buffer's size otherwise. `flags` may hold
 * CUABI_DLPACK_FLAG_READ_ONLY only. The tensor's data is the buffer's
 * address, its byte_offset `byte_offset`, its device CUDA (CUDA managed for
 * a managed buffer) and the buffer's ordinal. The tensor holds a reference
 * to the buffer: releasing the buffer's handle frees nothing while the
 * tensor lives; its deleter, called once by its last holder, drops that
 * reference and frees the tensor.
 * @param shape array_in count=ndim
 * @param strides array_in count=ndim
 * @nullable strides: compact row-major
 * @idiom dlpack */
CUABI_API cuabi_status CUABI_CALL cuabi_buffer_export_dlpack(
    cuabi_buffer buffer, uint64_t byte_offset, const int64_t* shape, const int64_t* strides,
    size_t ndim, uint32_t dtype_code, uint32_t dtype_bits, uint32_t dtype_lanes, uint64_t flags,
    cuabi_dlpack_managed_tensor_versioned** out);
/** Takes over the DLPack 1.x tensor `tensor` as a borrowed buffer in `out`
 * (cuabi_buffer_kind CUABI_BUFFER_WRAPPED): its pointer is the tensor's data
 * + byte_offset, its size the bytes from there to the end of the last
 * element the shape and strides reach. The buffer keeps the tensor alive;
 * the tensor's deleter runs once, when the last cuabi reference to the buffer
 * goes. Refused, with the tensor left the caller's: a major version other
 * than CUABI_DLPACK_MAJOR_VERSION (CUABI_ERROR_NOT_SUPPORTED); a device type
 * that is not CUDA, CUDA host or CUDA managed memory, or a device_id that is
 * no device's ordinal; a negative ndim or ndim over 64, a NULL shape with
 * ndim > 0, a negative extent; a dtype with 0 bits or 0 lanes, or bits not a
 * multiple of 8 (sub-byte types: CUABI_ERROR_NOT_SUPPORTED); a negative
 * stride (CUABI_ERROR_NOT_SUPPORTED: the buffer would start below data);
 * a tensor of no elements; a NULL data; a read-only tensor
 * (CUABI_DLPACK_FLAG_READ_ONLY) unless `flags` holds
 * CUABI_DLPACK_IMPORT_READ_ONLY; each refusal answers
 * CUABI_ERROR_INVALID_ARGUMENT unless said, naming the field and its bound.
 * @param tensor in
 * @idiom dlpack */
CUABI_API cuabi_status CUABI_CALL cuabi_buffer_import_dlpack(
    cuabi_dlpack_managed_tensor_versioned* tensor, cuabi_dlpack_import_flags flags,
    cuabi_buffer* out);
/** cuabi_buffer_import_dlpack for an unversioned (DLPack before 1.0) tensor,
 * which has neither version nor flags: it is taken as writable, and checked
 * as a versioned one is.
 * @param tensor in
 * @idiom dlpack */
CUABI_API cuabi_status CUABI_CALL cuabi_buffer_import_dlpack_unversioned(
    cuabi_dlpack_managed_tensor* tensor, cuabi_dlpack_import_flags flags, cuabi_buffer* out);
/** The producer's side of DLPack's stream handshake: makes the consumer's
 * stream `consumer_stream` (1: the legacy default stream, 2: the per-thread
 * default stream, another positive value: a CUstream of this process) wait,
 * without blocking the host, for the work queued on `stream` so far. -1 asks
 * no synchronisation: nothing is done. 0 and other negative values answer
 * CUABI_ERROR_INVALID_ARGUMENT (DLPack leaves 0 ambiguous). */
CUABI_API cuabi_status CUABI_CALL cuabi_stream_dlpack_handoff(cuabi_stream stream,
                                                              int64_t consumer_stream);
/** The consumer's side: makes `stream` wait, without blocking the host, for
 * the work queued so far on the producer's stream `producer_stream` (as
 * cuabi_stream_dlpack_handoff reads `consumer_stream`: -1 does nothing, 0 and
 * other negative values are refused). */
CUABI_API cuabi_status CUABI_CALL cuabi_stream_dlpack_wait(cuabi_stream stream,
                                                           int64_t producer_stream);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* CUABI_CUABI_H */
