// The whole C API of cuabi (include/cuabi/cuabi.h) as P/Invoke declarations.
//
// One declaration per C function, in the header's order, each under its C
// prototype. Type mapping, used everywhere:
//   cuabi_status, int32_t, the int32_t enums   -> int
//   uint32_t / uint64_t / uint8_t / float      -> uint / ulong / byte / float
//   size_t                                     -> UIntPtr
//   const char* argument                       -> byte[] (UTF-8, NUL-terminated; null for NULL)
//   const char* result                         -> IntPtr (static or thread-local string)
//   char* / void* output buffer                -> [Out] byte[] (null for the size query)
//   other void* / const void* / arrays         -> IntPtr (the caller pins)
//   T* out-parameter                           -> out T;  T* in-out -> ref T
//   cuabi_<kind> handle                        -> <Kind>Handle (a SafeHandle)
//   cuabi_<kind> given to *_release            -> IntPtr (called by the SafeHandle)
//   const struct*                              -> ref <Struct>Native
// tests/HeaderAgreement.cs parses the header and checks every line of this
// file against it: names, argument counts and types, constants and layouts.

using System;
using System.Runtime.InteropServices;

namespace Cuabi.Interop
{
    /// <summary>
    /// The cuabi C API, declared one to one. Prefer the safe classes of the
    /// <c>Cuabi</c> namespace; use these for what they do not cover.
    /// </summary>
    /// <remarks>
    /// Call <see cref="CuabiLibrary.Load"/> once before the first method that
    /// calls into this class is run: Mono binds a method's native calls when it
    /// compiles the method, so the library must be chosen before then. The
    /// classes of the <c>Cuabi</c> namespace do this themselves.
    /// Every function that returns <c>int</c> returns a cuabi_status (0 on
    /// success); on failure the <c>cuabi_last_error_*</c> functions describe it.
    /// </remarks>
    public static class NativeMethods
    {
        /// <summary>The library name every declaration binds to; <see cref="CuabiLibrary"/> maps it to a file.</summary>
        public const string LibraryName = "cuabi";

        // ------------------------------------------------------------------
        // Constants (#define and enum values of the header)
        // ------------------------------------------------------------------

        /// <summary>CUABI_VERSION_MAJOR of the header these declarations follow.</summary>
        public const int CUABI_VERSION_MAJOR = 0;
        /// <summary>CUABI_VERSION_MINOR of the header these declarations follow.</summary>
        public const int CUABI_VERSION_MINOR = 1;
        /// <summary>CUABI_VERSION_PATCH of the header these declarations follow.</summary>
        public const int CUABI_VERSION_PATCH = 0;
        /// <summary>MAJOR * 10000 + MINOR * 100 + PATCH; compare with <see cref="cuabi_version"/>.</summary>
        public const int CUABI_VERSION_NUMBER = CUABI_VERSION_MAJOR * 10000 + CUABI_VERSION_MINOR * 100 + CUABI_VERSION_PATCH;
        /// <summary>CUABI_VERSION_STRING of the header these declarations follow.</summary>
        public const string CUABI_VERSION_STRING = "0.1.0";

        /// <summary>Success.</summary>
        public const int CUABI_SUCCESS = 0;
        /// <summary>An argument is out of its domain; the message names it.</summary>
        public const int CUABI_ERROR_INVALID_ARGUMENT = 1;
        /// <summary>A NULL, released, stale or wrong-kind handle.</summary>
        public const int CUABI_ERROR_INVALID_HANDLE = 2;
        /// <summary>Host or device memory could not be allocated.</summary>
        public const int CUABI_ERROR_OUT_OF_MEMORY = 3;
        /// <summary>The caller's buffer is too small; *size holds the size needed.</summary>
        public const int CUABI_ERROR_INSUFFICIENT_BUFFER = 4;
        /// <summary>An offset or length reaches past the end of a buffer or list.</summary>
        public const int CUABI_ERROR_OUT_OF_RANGE = 5;
        /// <summary>A named thing does not exist.</summary>
        public const int CUABI_ERROR_NOT_FOUND = 6;
        /// <summary>The installed driver or NVRTC lacks what this call needs.</summary>
        public const int CUABI_ERROR_NOT_SUPPORTED = 7;
        /// <summary>Work is still in flight (stream or event query). Not a failure.</summary>
        public const int CUABI_ERROR_NOT_READY = 8;
        /// <summary>libcuda.so.1 could not be loaded; the message lists every path tried.</summary>
        public const int CUABI_ERROR_DRIVER_NOT_FOUND = 9;
        /// <summary>The loaded libcuda is the toolkit's stub library.</summary>
        public const int CUABI_ERROR_STUB_DRIVER = 10;
        /// <summary>No CUDA device, or the ordinal is past the last device.</summary>
        public const int CUABI_ERROR_NO_DEVICE = 11;
        /// <summary>No libnvrtc could be loaded; the message lists every path tried.</summary>
        public const int CUABI_ERROR_NVRTC_NOT_FOUND = 12;
        /// <summary>NVRTC rejected the source or options; the log says why.</summary>
        public const int CUABI_ERROR_COMPILE = 13;
        /// <summary>The device context hit a sticky fault.</summary>
        public const int CUABI_ERROR_CONTEXT_LOST = 14;
        /// <summary>The process forked after cuabi initialised CUDA.</summary>
        public const int CUABI_ERROR_FORKED = 15;
        /// <summary>Any other CUDA driver failure.</summary>
        public const int CUABI_ERROR_CUDA = 16;
        /// <summary>Any other NVRTC failure.</summary>
        public const int CUABI_ERROR_NVRTC = 17;
        /// <summary>A file could not be read or written.</summary>
        public const int CUABI_ERROR_IO = 18;
        /// <summary>A bug in cuabi.</summary>
        public const int CUABI_ERROR_INTERNAL = 19;
        /// <summary>One past the largest status this version defines.</summary>
        public const int CUABI_STATUS_COUNT = 20;

        /// <summary>CUfunction_attribute CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK.</summary>
        public const int CUABI_FUNC_MAX_THREADS_PER_BLOCK = 0;
        /// <summary>CUfunction_attribute CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES.</summary>
        public const int CUABI_FUNC_SHARED_SIZE_BYTES = 1;
        /// <summary>CUfunction_attribute CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES.</summary>
        public const int CUABI_FUNC_CONST_SIZE_BYTES = 2;
        /// <summary>CUfunction_attribute CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES.</summary>
        public const int CUABI_FUNC_LOCAL_SIZE_BYTES = 3;
        /// <summary>CUfunction_attribute CU_FUNC_ATTRIBUTE_NUM_REGS.</summary>
        public const int CUABI_FUNC_NUM_REGS = 4;
        /// <summary>CUfunction_attribute CU_FUNC_ATTRIBUTE_PTX_VERSION.</summary>
        public const int CUABI_FUNC_PTX_VERSION = 5;
        /// <summary>CUfunction_attribute CU_FUNC_ATTRIBUTE_BINARY_VERSION.</summary>
        public const int CUABI_FUNC_BINARY_VERSION = 6;
        /// <summary>CUfunction_attribute CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES.</summary>
        public const int CUABI_FUNC_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8;

        /// <summary>cuabi_module_compile output: CUBIN for the device's own sm_XY.</summary>
        public const int CUABI_OUTPUT_CUBIN = 0;
        /// <summary>cuabi_module_compile output: PTX for compute_XY, JIT-compiled at load.</summary>
        public const int CUABI_OUTPUT_PTX = 1;
        /// <summary>cuabi_compile_desc flag: neither read nor write the on-disk cache.</summary>
        public const uint CUABI_COMPILE_NO_CACHE = 1u << 0;

        /// <summary>Stream flag: no synchronisation with the default stream.</summary>
        public const uint CUABI_STREAM_NON_BLOCKING = 1u << 0;
        /// <summary>Event flag: no timing, for synchronisation only.</summary>
        public const uint CUABI_EVENT_DISABLE_TIMING = 1u << 0;
        /// <summary>Event flag: synchronize sleeps instead of spinning.</summary>
        public const uint CUABI_EVENT_BLOCKING_SYNC = 1u << 1;

        /// <summary>CUstreamCaptureMode CU_STREAM_CAPTURE_MODE_GLOBAL.</summary>
        public const int CUABI_CAPTURE_GLOBAL = 0;
        /// <summary>CUstreamCaptureMode CU_STREAM_CAPTURE_MODE_THREAD_LOCAL.</summary>
        public const int CUABI_CAPTURE_THREAD_LOCAL = 1;
        /// <summary>CUstreamCaptureMode CU_STREAM_CAPTURE_MODE_RELAXED.</summary>
        public const int CUABI_CAPTURE_RELAXED = 2;

        // ------------------------------------------------------------------
        // Versions
        // ------------------------------------------------------------------

        // uint32_t cuabi_version(void);
        /// <summary>The library's version number, in the form of <see cref="CUABI_VERSION_NUMBER"/>.</summary>
        [DllImport(LibraryName, CallingConvention = CallingConvention.Cdecl, EntryPoint = "cuabi_version")]
        public static extern uint cuabi_version();

        // const char* cuabi_version_string(void);
        /// <summary>The library's version as a static UTF-8 string.</summary>
        [DllImport(LibraryName, CallingConvention = CallingConvention.Cdecl, EntryPoint = "cuabi_version_string")]
        public static extern IntPtr cuabi_version_string();

        // ------------------------------------------------------------------
        // Status codes and the last error
        // ------------------------------------------------------------------

        // const char* cuabi_status_get_name(cuabi_status status);
        /// <summary>The status's symbolic name, static UTF-8.</summary>
        [DllImport(LibraryName, CallingConvention = CallingConvention.Cdecl, EntryPoint = "cuabi_status_get_name")]
        public static extern IntPtr cuabi_status_get_name(int status);

        // const char* cuabi_status_get_description(cuabi_status status);
        /// <summary>One sentence describing the status, static UTF-8.</summary>
        [DllImport(LibraryName, CallingConvention = CallingConvention.Cdecl, EntryPoint = "cuabi_status_get_description")]
        public static extern IntPtr cuabi_status_get_description(int status);

        // const char* cuabi_last_error_message(void);
        /// <summary>The calling thread's last error message, UTF-8; valid until the next cuabi call on this thread.</summary>
        [DllImport(LibraryName, CallingConvention = CallingConvention.Cdecl, EntryPoint = "cuabi_last_error_message")]
        public static extern IntPtr cuabi_last_error_message();

        // cuabi_status cuabi_last_error_status(void);
        /// <summary>The calling thread's last error status.</summary>
        [DllImport(LibraryName, CallingConvention = CallingConvention.Cdecl, EntryPoint = "cuabi_last_error_status")]
        public static extern int cuabi_last_error_status();

        // int32_t cuabi_last_error_code(void);
        /// <summary>The CUresult or nvrtcResult behind the last error, 0 if none.</summary>
        [DllImport(LibraryName, CallingConvention = CallingConvention.Cdecl, EntryPoint = "cuabi_last_error_code")]
        public static extern int cuabi_last_error_code();

        // cuabi_status cuabi_last_error_log(char* buf, size_t* size);
        /// <summary>The NVRTC log of the last failed compile on this thread (two-call pattern).</summary>
        [DllImport(LibraryName, CallingConvention = CallingConvention.Cdecl, EntryPoint = "cuabi_last_error_log")]
        public static extern int cuabi_last_error_log([Out] byte[] buf, ref UIntPtr size);

        // void cuabi_last_error_clear(void);
        /// <summary>Resets this thread's last-error state to "no error".</summary>
        [DllImport(LibraryName, CallingConvention = CallingConvention.Cdecl, EntryPoint = "cuabi_last_error_clear")]
        public static extern void cuabi_last_error_clear();

        // ------------------------------------------------------------------
        // Loading and library information
        // ------------------------------------------------------------------

        // cuabi_status cuabi_init(void);
        /// <summary>Opens the CUDA driver and calls cuInit (optional, idempotent).</summary>
        [DllImport(LibraryName, CallingConvention = CallingConvention.Cdecl, EntryPoint = "cuabi_init")]
        public static extern int cuabi_init();

        // cuabi_status cuabi_driver_get_version(int32_t* version);
        /// <summary>The driver's CUDA version (e.g. 13000 for 13.0).</summary>
        [DllImport(LibraryName, CallingConvention = CallingConvention.Cdecl, EntryPoint = "cuabi_driver_get_version")]
        public static extern int cuabi_driver_get_version(out int version);

        // cuabi_status cuabi_driver_get_path(char* buf, size_t* size);
        /// <summary>Where the driver was loaded from (two-call pattern).</summary>
        [DllImport(LibraryName, CallingConvention = CallingConvention.Cdecl, EntryPoint = "cuabi_driver_get_path")]
        public static extern int cuabi_driver_get_path([Out] byte[] buf, ref UIntPtr size);

        // cuabi_status cuabi_nvrtc_get_version(int32_t* major, int32_t* minor);
        /// <summary>NVRTC's version; opens NVRTC if needed.</summary>
        [DllImport(LibraryName, CallingConvention = CallingConvention.Cdecl, EntryPoint = "cuabi_nvrtc_get_version")]
        public static extern int cuabi_nvrtc_get_version(out int major, out int minor);

        // cuabi_status cuabi_nvrtc_get_path(char* buf, size_t* size);
        /// <summary>Where NVRTC was loaded from (two-call pattern).</summary>
        [DllImport(LibraryName, CallingConvention = CallingConvention.Cdecl, EntryPoint = "cuabi_nvrtc_get_path")]
        public static extern int cuabi_nvrtc_get_path([Out] byte[] buf, ref UIntPtr size);

        // ------------------------------------------------------------------
        // Devices
        // ------------------------------------------------------------------

        // cuabi_status cuabi_device_get_count(int32_t* count);
        /// <summary>Number of CUDA devices.</summary>
        [DllImport(LibraryName, CallingConvention = CallingConvention.Cdecl, EntryPoint = "cuabi_device_get_count")]
        public static extern int cuabi_device_get_count(out int count);

        // cuabi_status cuabi_device_get(int32_t ordinal, cuabi_device* out);
        /// <summary>A new handle to device <paramref name="ordinal"/>, holding its primary context.</summary>
        [DllImport(LibraryName, CallingConvention = CallingConvention.Cdecl, EntryPoint = "cuabi_device_get")]
        public static extern int cuabi_device_get(int ordinal, out SafeDeviceHandle @out);

        // void cuabi_device_release(cuabi_device device);
        /// <summary>Releases a device handle; NULL and released handles are ignored.</summary>
        [DllImport(LibraryName, CallingConvention = CallingConvention.Cdecl, EntryPoint = "cuabi_device_release")]
        public static extern void cuabi_device_release(IntPtr device);

        // cuabi_status cuabi_device_get_ordinal(cuabi_device device, int32_t* ordinal);
        /// <summary>The device's ordinal.</summary>
        [DllImport(LibraryName, CallingConvention = CallingConvention.Cdecl, EntryPoint = "cuabi_device_get_ordinal")]
        public static extern int cuabi_device_get_ordinal(SafeDeviceHandle device, out int ordinal);

        // cuabi_status cuabi_device_get_name(cuabi_device device, char* buf, size_t* size);
        /// <summary>The device's name (two-call pattern).</summary>
        [DllImport(LibraryName, CallingConvention = CallingConvention.Cdecl, EntryPoint = "cuabi_device_get_name")]
        public static extern int cuabi_device_get_name(SafeDeviceHandle device, [Out] byte[] buf, ref UIntPtr size);

        // cuabi_status cuabi_device_get_compute_capability(cuabi_device device, int32_t* major, int32_t* minor);
        /// <summary>The device's compute capability.</summary>
        [DllImport(LibraryName, CallingConvention = CallingConvention.Cdecl, EntryPoint = "cuabi_device_get_compute_capability")]
        public static extern int cuabi_device_get_compute_capability(SafeDeviceHandle device, out int major, out int minor);

        // cuabi_status cuabi_device_get_total_memory(cuabi_device device, size_t* bytes);
        /// <summary>The device's total memory in bytes.</summary>
        [DllImport(LibraryName, CallingConvention = CallingConvention.Cdecl, EntryPoint = "cuabi_device_get_total_memory")]
        public static extern int cuabi_device_get_total_memory(SafeDeviceHandle device, out UIntPtr bytes);

        // cuabi_status cuabi_device_get_memory_info(cuabi_device device, size_t* free_bytes, size_t* total_bytes);
        /// <summary>Free and total device memory as the driver sees them now.</summary>
        [DllImport(LibraryName, CallingConvention = CallingConvention.Cdecl, EntryPoint = "cuabi_device_get_memory_info")]
        public static extern int cuabi_device_get_memory_info(SafeDeviceHandle device, out UIntPtr free_bytes, out UIntPtr total_bytes);

        // cuabi_status cuabi_device_get_attribute(cuabi_device device, int32_t cu_attribute, int32_t* value);
        /// <summary>Any CUdevice_attribute, by its numeric value.</summary>
        [DllImport(LibraryName, CallingConvention = CallingConvention.Cdecl, EntryPoint = "cuabi_device_get_attribute")]
        public static extern int cuabi_device_get_attribute(SafeDeviceHandle device, int cu_attribute, out int value);

        // cuabi_status cuabi_device_get_context(cuabi_device device, uint64_t* cu_context);
        /// <summary>The primary context as a raw CUcontext value.</summary>
        [DllImport(LibraryName, CallingConvention = CallingConvention.Cdecl, EntryPoint = "cuabi_device_get_context")]
        public static extern int cuabi_device_get_context(SafeDeviceHandle device, out ulong cu_context);

        // cuabi_status cuabi_device_synchronize(cuabi_device device);
        /// <summary>Waits for all work on the device's primary context.</summary>
        [DllImport(LibraryName, CallingConvention = CallingConvention.Cdecl, EntryPoint = "cuabi_device_synchronize")]
        public static extern int cuabi_device_synchronize(SafeDeviceHandle device);

        // cuabi_status cuabi_device_get_stream_priority_range(cuabi_device device, int32_t* least, int32_t* greatest);
        /// <summary>Lowest and highest stream priorities.</summary>
        [DllImport(LibraryName, CallingConvention = CallingConvention.Cdecl, EntryPoint = "cuabi_device_get_stream_priority_range")]
        public static extern int cuabi_device_get_stream_priority_range(SafeDeviceHandle device, out int least, out int greatest);

        // cuabi_status cuabi_device_reset(cuabi_device device);
        /// <summary>Resets the device's primary context after CUABI_ERROR_CONTEXT_LOST.</summary>
        [DllImport(LibraryName, CallingConvention = CallingConvention.Cdecl, EntryPoint = "cuabi_device_reset")]
        public static extern int cuabi_device_reset(SafeDeviceHandle device);

        // ------------------------------------------------------------------
        // Programs (NVRTC)
        // ------------------------------------------------------------------

        // cuabi_status cuabi_program_create(const char* source, const char* name, size_t num_headers,
        //     const char* const* header_sources, const char* const* header_names, cuabi_program* out);
        /// <summary>Creates an NVRTC program.</summary>
        [DllImport(LibraryName, CallingConvention = CallingConvention.Cdecl, EntryPoint = "cuabi_program_create")]
        public static extern int cuabi_program_create([In] byte[] source, [In] byte[] name, UIntPtr num_headers,
            IntPtr header_sources, IntPtr header_names, out SafeProgramHandle @out);

        // void cuabi_program_release(cuabi_program program);
        /// <summary>Releases a program handle.</summary>
        [DllImport(LibraryName, CallingConvention = CallingConvention.Cdecl, EntryPoint = "cuabi_program_release")]
        public static extern void cuabi_program_release(IntPtr program);

        // cuabi_status cuabi_program_add_name_expression(cuabi_program program, const char* expression);
        /// <summary>Registers a name expression before compiling.</summary>
        [DllImport(LibraryName, CallingConvention = CallingConvention.Cdecl, EntryPoint = "cuabi_program_add_name_expression")]
        public static extern int cuabi_program_add_name_expression(SafeProgramHandle program, [In] byte[] expression);

        // cuabi_status cuabi_program_compile(cuabi_program program, size_t num_options, const char* const* options);
        /// <summary>Compiles with NVRTC options.</summary>
        [DllImport(LibraryName, CallingConvention = CallingConvention.Cdecl, EntryPoint = "cuabi_program_compile")]
        public static extern int cuabi_program_compile(SafeProgramHandle program, UIntPtr num_options, IntPtr options);

        // cuabi_status cuabi_program_get_log(cuabi_program program, char* buf, size_t* size);
        /// <summary>The compile log (two-call pattern).</summary>
        [DllImport(LibraryName, CallingConvention = CallingConvention.Cdecl, EntryPoint = "cuabi_program_get_log")]
        public static extern int cuabi_program_get_log(SafeProgramHandle program, [Out] byte[] buf, ref UIntPtr size);

        // cuabi_status cuabi_program_get_ptx(cuabi_program program, char* buf, size_t* size);
        /// <summary>The PTX (two-call pattern).</summary>
        [DllImport(LibraryName, CallingConvention = CallingConvention.Cdecl, EntryPoint = "cuabi_program_get_ptx")]
        public static extern int cuabi_program_get_ptx(SafeProgramHandle program, [Out] byte[] buf, ref UIntPtr size);

        // cuabi_status cuabi_program_get_cubin(cuabi_program program, void* buf, size_t* size);
        /// <summary>The CUBIN (two-call pattern; binary).</summary>
        [DllImport(LibraryName, CallingConvention = CallingConvention.Cdecl, EntryPoint = "cuabi_program_get_cubin")]
        public static extern int cuabi_program_get_cubin(SafeProgramHandle program, [Out] byte[] buf, ref UIntPtr size);

        // cuabi_status cuabi_program_get_lowered_name(cuabi_program program, const char* expression, char* buf, size_t* size);
        /// <summary>The lowered name of a registered name expression (two-call pattern).</summary>
        [DllImport(LibraryName, CallingConvention = CallingConvention.Cdecl, EntryPoint = "cuabi_program_get_lowered_name")]
        public static extern int cuabi_program_get_lowered_name(SafeProgramHandle program, [In] byte[] expression,
            [Out] byte[] buf, ref UIntPtr size);

        // ------------------------------------------------------------------
        // Modules and functions
        // ------------------------------------------------------------------

        // cuabi_status cuabi_module_compile(cuabi_device device, const cuabi_compile_desc* desc, cuabi_module* out);
        /// <summary>Compiles for the device (through the on-disk cache) and loads the result.</summary>
        [DllImport(LibraryName, CallingConvention = CallingConvention.Cdecl, EntryPoint = "cuabi_module_compile")]
        public static extern int cuabi_module_compile(SafeDeviceHandle device, ref CompileDescNative desc, out SafeModuleHandle @out);

        // cuabi_status cuabi_module_load_data(cuabi_device device, const void* image, size_t size, cuabi_module* out);
        /// <summary>Loads CUBIN, PTX or fatbin bytes.</summary>
        [DllImport(LibraryName, CallingConvention = CallingConvention.Cdecl, EntryPoint = "cuabi_module_load_data")]
        public static extern int cuabi_module_load_data(SafeDeviceHandle device, IntPtr image, UIntPtr size, out SafeModuleHandle @out);

        // cuabi_status cuabi_module_load_file(cuabi_device device, const char* path, cuabi_module* out);
        /// <summary>Loads a CUBIN, PTX or fatbin file.</summary>
        [DllImport(LibraryName, CallingConvention = CallingConvention.Cdecl, EntryPoint = "cuabi_module_load_file")]
        public static extern int cuabi_module_load_file(SafeDeviceHandle device, [In] byte[] path, out SafeModuleHandle @out);

        // void cuabi_module_release(cuabi_module module);
        /// <summary>Releases a module handle.</summary>
        [DllImport(LibraryName, CallingConvention = CallingConvention.Cdecl, EntryPoint = "cuabi_module_release")]
        public static extern void cuabi_module_release(IntPtr module);

        // cuabi_status cuabi_module_get_from_cache(cuabi_module module, int32_t* hit);
        /// <summary>1 when cuabi_module_compile served this module from the cache, else 0.</summary>
        [DllImport(LibraryName, CallingConvention = CallingConvention.Cdecl, EntryPoint = "cuabi_module_get_from_cache")]
        public static extern int cuabi_module_get_from_cache(SafeModuleHandle module, out int hit);

        // cuabi_status cuabi_module_get_function(cuabi_module module, const char* name, cuabi_function* out);
        /// <summary>A kernel by its name or by a name expression given at compile time.</summary>
        [DllImport(LibraryName, CallingConvention = CallingConvention.Cdecl, EntryPoint = "cuabi_module_get_function")]
        public static extern int cuabi_module_get_function(SafeModuleHandle module, [In] byte[] name, out SafeFunctionHandle @out);

        // cuabi_status cuabi_module_get_lowered_name(cuabi_module module, const char* expression, char* buf, size_t* size);
        /// <summary>The lowered name of a name expression given at compile time (two-call pattern).</summary>
        [DllImport(LibraryName, CallingConvention = CallingConvention.Cdecl, EntryPoint = "cuabi_module_get_lowered_name")]
        public static extern int cuabi_module_get_lowered_name(SafeModuleHandle module, [In] byte[] expression,
            [Out] byte[] buf, ref UIntPtr size);

        // cuabi_status cuabi_module_get_global(cuabi_module module, const char* name, uint64_t* device_ptr, size_t* bytes);
        /// <summary>A __device__ global: its device address and size in bytes.</summary>
        [DllImport(LibraryName, CallingConvention = CallingConvention.Cdecl, EntryPoint = "cuabi_module_get_global")]
        public static extern int cuabi_module_get_global(SafeModuleHandle module, [In] byte[] name, out ulong device_ptr, out UIntPtr bytes);

        // void cuabi_function_release(cuabi_function function);
        /// <summary>Releases a function handle.</summary>
        [DllImport(LibraryName, CallingConvention = CallingConvention.Cdecl, EntryPoint = "cuabi_function_release")]
        public static extern void cuabi_function_release(IntPtr function);

        // cuabi_status cuabi_function_get_param_count(cuabi_function function, size_t* count);
        /// <summary>The kernel's parameter count (driver 12.4 or newer).</summary>
        [DllImport(LibraryName, CallingConvention = CallingConvention.Cdecl, EntryPoint = "cuabi_function_get_param_count")]
        public static extern int cuabi_function_get_param_count(SafeFunctionHandle function, out UIntPtr count);

        // cuabi_status cuabi_function_get_param_info(cuabi_function function, size_t index, size_t* offset, size_t* size);
        /// <summary>A parameter's offset and size in bytes.</summary>
        [DllImport(LibraryName, CallingConvention = CallingConvention.Cdecl, EntryPoint = "cuabi_function_get_param_info")]
        public static extern int cuabi_function_get_param_info(SafeFunctionHandle function, UIntPtr index, out UIntPtr offset, out UIntPtr size);

        // cuabi_status cuabi_function_get_args_size(cuabi_function function, size_t* size);
        /// <summary>The byte length of the packed argument block for cuabi_function_launch_packed.</summary>
        [DllImport(LibraryName, CallingConvention = CallingConvention.Cdecl, EntryPoint = "cuabi_function_get_args_size")]
        public static extern int cuabi_function_get_args_size(SafeFunctionHandle function, out UIntPtr size);

        // cuabi_status cuabi_function_get_name(cuabi_function function, char* buf, size_t* size);
        /// <summary>The kernel's name (two-call pattern).</summary>
        [DllImport(LibraryName, CallingConvention = CallingConvention.Cdecl, EntryPoint = "cuabi_function_get_name")]
        public static extern int cuabi_function_get_name(SafeFunctionHandle function, [Out] byte[] buf, ref UIntPtr size);

        // cuabi_status cuabi_function_get_attribute(cuabi_function function, cuabi_function_attribute attribute, int32_t* value);
        /// <summary>Any CUfunction_attribute, by its numeric value.</summary>
        [DllImport(LibraryName, CallingConvention = CallingConvention.Cdecl, EntryPoint = "cuabi_function_get_attribute")]
        public static extern int cuabi_function_get_attribute(SafeFunctionHandle function, int attribute, out int value);

        // cuabi_status cuabi_function_set_attribute(cuabi_function function, cuabi_function_attribute attribute, int32_t value);
        /// <summary>Sets a settable CUfunction_attribute.</summary>
        [DllImport(LibraryName, CallingConvention = CallingConvention.Cdecl, EntryPoint = "cuabi_function_set_attribute")]
        public static extern int cuabi_function_set_attribute(SafeFunctionHandle function, int attribute, int value);

        // ------------------------------------------------------------------
        // Launch
        // ------------------------------------------------------------------

        // cuabi_status cuabi_function_launch(cuabi_function function, const cuabi_launch_config* config,
        //     cuabi_stream stream, void* const* params, size_t num_params);
        /// <summary>Launches with cuLaunchKernel's convention: an array of pointers to the argument values.</summary>
        [DllImport(LibraryName, CallingConvention = CallingConvention.Cdecl, EntryPoint = "cuabi_function_launch")]
        public static extern int cuabi_function_launch(SafeFunctionHandle function, ref LaunchConfigNative config, SafeStreamHandle stream,
            IntPtr @params, UIntPtr num_params);

        // cuabi_status cuabi_function_launch_sized(cuabi_function function, const cuabi_launch_config* config,
        //     cuabi_stream stream, void* const* params, const size_t* param_sizes, size_t num_params);
        /// <summary>As cuabi_function_launch, with each argument's size checked against the kernel's parameter.</summary>
        [DllImport(LibraryName, CallingConvention = CallingConvention.Cdecl, EntryPoint = "cuabi_function_launch_sized")]
        public static extern int cuabi_function_launch_sized(SafeFunctionHandle function, ref LaunchConfigNative config, SafeStreamHandle stream,
            IntPtr @params, IntPtr param_sizes, UIntPtr num_params);

        // cuabi_status cuabi_function_launch_packed(cuabi_function function, const cuabi_launch_config* config,
        //     cuabi_stream stream, const void* args, size_t args_size);
        /// <summary>As cuabi_function_launch, with every argument in one block laid out at the parameter offsets.</summary>
        [DllImport(LibraryName, CallingConvention = CallingConvention.Cdecl, EntryPoint = "cuabi_function_launch_packed")]
        public static extern int cuabi_function_launch_packed(SafeFunctionHandle function, ref LaunchConfigNative config, SafeStreamHandle stream,
            IntPtr args, UIntPtr args_size);

        // cuabi_status cuabi_launch_plan_create(cuabi_function function, const cuabi_launch_config* config,
        //     cuabi_stream stream, cuabi_launch_plan* out);
        /// <summary>
        /// A prepared launch: function, configuration and stream checked once, with an argument
        /// block owned by the plan. The plan keeps its function and stream alive.
        /// </summary>
        [DllImport(LibraryName, CallingConvention = CallingConvention.Cdecl, EntryPoint = "cuabi_launch_plan_create")]
        public static extern int cuabi_launch_plan_create(SafeFunctionHandle function, ref LaunchConfigNative config,
            SafeStreamHandle stream, out SafeLaunchPlanHandle @out);

        // void cuabi_launch_plan_release(cuabi_launch_plan plan);
        /// <summary>Releases a launch plan and its argument block.</summary>
        [DllImport(LibraryName, CallingConvention = CallingConvention.Cdecl, EntryPoint = "cuabi_launch_plan_release")]
        public static extern void cuabi_launch_plan_release(IntPtr plan);

        // cuabi_status cuabi_launch_plan_get_args(cuabi_launch_plan plan, void** args, size_t* size);
        /// <summary>
        /// The plan's argument block (owned by the plan, 16-byte aligned, zero-filled at creation,
        /// valid until the plan is released) and its size, the kernel's packed argument size.
        /// </summary>
        [DllImport(LibraryName, CallingConvention = CallingConvention.Cdecl, EntryPoint = "cuabi_launch_plan_get_args")]
        public static extern int cuabi_launch_plan_get_args(SafeLaunchPlanHandle plan, out IntPtr args, out UIntPtr size);

        // cuabi_status cuabi_launch_plan_launch(cuabi_launch_plan plan);
        /// <summary>Launches the plan's function with the argument block's current contents.</summary>
        [DllImport(LibraryName, CallingConvention = CallingConvention.Cdecl, EntryPoint = "cuabi_launch_plan_launch")]
        public static extern int cuabi_launch_plan_launch(SafeLaunchPlanHandle plan);

        // ------------------------------------------------------------------
        // Device memory
        // ------------------------------------------------------------------

        // cuabi_status cuabi_buffer_alloc(cuabi_device device, size_t bytes, cuabi_buffer* out);
        /// <summary>Allocates device memory.</summary>
        [DllImport(LibraryName, CallingConvention = CallingConvention.Cdecl, EntryPoint = "cuabi_buffer_alloc")]
        public static extern int cuabi_buffer_alloc(SafeDeviceHandle device, UIntPtr bytes, out SafeBufferHandle @out);

        // cuabi_status cuabi_buffer_wrap(cuabi_device device, uint64_t device_ptr, size_t bytes, cuabi_buffer* out);
        /// <summary>Wraps device memory owned by someone else, without taking ownership.</summary>
        [DllImport(LibraryName, CallingConvention = CallingConvention.Cdecl, EntryPoint = "cuabi_buffer_wrap")]
        public static extern int cuabi_buffer_wrap(SafeDeviceHandle device, ulong device_ptr, UIntPtr bytes, out SafeBufferHandle @out);

        // void cuabi_buffer_release(cuabi_buffer buffer);
        /// <summary>Releases a buffer handle (frees memory it owns).</summary>
        [DllImport(LibraryName, CallingConvention = CallingConvention.Cdecl, EntryPoint = "cuabi_buffer_release")]
        public static extern void cuabi_buffer_release(IntPtr buffer);

        // cuabi_status cuabi_buffer_get_pointer(cuabi_buffer buffer, uint64_t* ptr);
        /// <summary>The raw CUdeviceptr.</summary>
        [DllImport(LibraryName, CallingConvention = CallingConvention.Cdecl, EntryPoint = "cuabi_buffer_get_pointer")]
        public static extern int cuabi_buffer_get_pointer(SafeBufferHandle buffer, out ulong ptr);

        // cuabi_status cuabi_buffer_get_size(cuabi_buffer buffer, size_t* bytes);
        /// <summary>The buffer's size in bytes.</summary>
        [DllImport(LibraryName, CallingConvention = CallingConvention.Cdecl, EntryPoint = "cuabi_buffer_get_size")]
        public static extern int cuabi_buffer_get_size(SafeBufferHandle buffer, out UIntPtr bytes);

        // cuabi_status cuabi_buffer_get_device_ordinal(cuabi_buffer buffer, int32_t* ordinal);
        /// <summary>The ordinal of the device the buffer lives on.</summary>
        [DllImport(LibraryName, CallingConvention = CallingConvention.Cdecl, EntryPoint = "cuabi_buffer_get_device_ordinal")]
        public static extern int cuabi_buffer_get_device_ordinal(SafeBufferHandle buffer, out int ordinal);

        // cuabi_status cuabi_buffer_copy_from_host(cuabi_buffer dst, size_t dst_offset, const void* src, size_t bytes);
        /// <summary>Host to device copy.</summary>
        [DllImport(LibraryName, CallingConvention = CallingConvention.Cdecl, EntryPoint = "cuabi_buffer_copy_from_host")]
        public static extern int cuabi_buffer_copy_from_host(SafeBufferHandle dst, UIntPtr dst_offset, IntPtr src, UIntPtr bytes);

        // cuabi_status cuabi_buffer_copy_to_host(cuabi_buffer src, size_t src_offset, void* dst, size_t bytes);
        /// <summary>Device to host copy.</summary>
        [DllImport(LibraryName, CallingConvention = CallingConvention.Cdecl, EntryPoint = "cuabi_buffer_copy_to_host")]
        public static extern int cuabi_buffer_copy_to_host(SafeBufferHandle src, UIntPtr src_offset, IntPtr dst, UIntPtr bytes);

        // cuabi_status cuabi_buffer_copy_from_host_async(cuabi_buffer dst, size_t dst_offset, const void* src,
        //     size_t bytes, cuabi_stream stream);
        /// <summary>Host to device copy ordered on a stream.</summary>
        [DllImport(LibraryName, CallingConvention = CallingConvention.Cdecl, EntryPoint = "cuabi_buffer_copy_from_host_async")]
        public static extern int cuabi_buffer_copy_from_host_async(SafeBufferHandle dst, UIntPtr dst_offset, IntPtr src, UIntPtr bytes,
            SafeStreamHandle stream);

        // cuabi_status cuabi_buffer_copy_to_host_async(cuabi_buffer src, size_t src_offset, void* dst,
        //     size_t bytes, cuabi_stream stream);
        /// <summary>Device to host copy ordered on a stream.</summary>
        [DllImport(LibraryName, CallingConvention = CallingConvention.Cdecl, EntryPoint = "cuabi_buffer_copy_to_host_async")]
        public static extern int cuabi_buffer_copy_to_host_async(SafeBufferHandle src, UIntPtr src_offset, IntPtr dst, UIntPtr bytes,
            SafeStreamHandle stream);

        // cuabi_status cuabi_buffer_copy(cuabi_buffer dst, size_t dst_offset, cuabi_buffer src, size_t src_offset, size_t bytes);
        /// <summary>Device to device copy.</summary>
        [DllImport(LibraryName, CallingConvention = CallingConvention.Cdecl, EntryPoint = "cuabi_buffer_copy")]
        public static extern int cuabi_buffer_copy(SafeBufferHandle dst, UIntPtr dst_offset, SafeBufferHandle src, UIntPtr src_offset,
            UIntPtr bytes);

        // cuabi_status cuabi_buffer_copy_async(cuabi_buffer dst, size_t dst_offset, cuabi_buffer src, size_t src_offset,
        //     size_t bytes, cuabi_stream stream);
        /// <summary>Device to device copy ordered on a stream.</summary>
        [DllImport(LibraryName, CallingConvention = CallingConvention.Cdecl, EntryPoint = "cuabi_buffer_copy_async")]
        public static extern int cuabi_buffer_copy_async(SafeBufferHandle dst, UIntPtr dst_offset, SafeBufferHandle src, UIntPtr src_offset,
            UIntPtr bytes, SafeStreamHandle stream);

        // cuabi_status cuabi_buffer_memset(cuabi_buffer buffer, size_t offset, uint8_t value, size_t bytes);
        /// <summary>Sets bytes to a value.</summary>
        [DllImport(LibraryName, CallingConvention = CallingConvention.Cdecl, EntryPoint = "cuabi_buffer_memset")]
        public static extern int cuabi_buffer_memset(SafeBufferHandle buffer, UIntPtr offset, byte value, UIntPtr bytes);

        // cuabi_status cuabi_buffer_memset_async(cuabi_buffer buffer, size_t offset, uint8_t value, size_t bytes,
        //     cuabi_stream stream);
        /// <summary>Sets bytes to a value, ordered on a stream.</summary>
        [DllImport(LibraryName, CallingConvention = CallingConvention.Cdecl, EntryPoint = "cuabi_buffer_memset_async")]
        public static extern int cuabi_buffer_memset_async(SafeBufferHandle buffer, UIntPtr offset, byte value, UIntPtr bytes,
            SafeStreamHandle stream);

        // ------------------------------------------------------------------
        // Page-locked host memory
        // ------------------------------------------------------------------

        // cuabi_status cuabi_host_buffer_alloc(cuabi_device device, size_t bytes, cuabi_host_buffer* out);
        /// <summary>Allocates pinned host memory.</summary>
        [DllImport(LibraryName, CallingConvention = CallingConvention.Cdecl, EntryPoint = "cuabi_host_buffer_alloc")]
        public static extern int cuabi_host_buffer_alloc(SafeDeviceHandle device, UIntPtr bytes, out SafeHostBufferHandle @out);

        // cuabi_status cuabi_host_buffer_register(cuabi_device device, void* ptr, size_t bytes, cuabi_host_buffer* out);
        /// <summary>Pins existing host memory in place until the handle is released.</summary>
        [DllImport(LibraryName, CallingConvention = CallingConvention.Cdecl, EntryPoint = "cuabi_host_buffer_register")]
        public static extern int cuabi_host_buffer_register(SafeDeviceHandle device, IntPtr ptr, UIntPtr bytes, out SafeHostBufferHandle @out);

        // void cuabi_host_buffer_release(cuabi_host_buffer buffer);
        /// <summary>Frees or unpins the host memory.</summary>
        [DllImport(LibraryName, CallingConvention = CallingConvention.Cdecl, EntryPoint = "cuabi_host_buffer_release")]
        public static extern void cuabi_host_buffer_release(IntPtr buffer);

        // cuabi_status cuabi_host_buffer_get_pointer(cuabi_host_buffer buffer, void** ptr);
        /// <summary>The host address of the pinned memory.</summary>
        [DllImport(LibraryName, CallingConvention = CallingConvention.Cdecl, EntryPoint = "cuabi_host_buffer_get_pointer")]
        public static extern int cuabi_host_buffer_get_pointer(SafeHostBufferHandle buffer, out IntPtr ptr);

        // cuabi_status cuabi_host_buffer_get_size(cuabi_host_buffer buffer, size_t* bytes);
        /// <summary>The size of the pinned memory in bytes.</summary>
        [DllImport(LibraryName, CallingConvention = CallingConvention.Cdecl, EntryPoint = "cuabi_host_buffer_get_size")]
        public static extern int cuabi_host_buffer_get_size(SafeHostBufferHandle buffer, out UIntPtr bytes);

        // ------------------------------------------------------------------
        // Streams
        // ------------------------------------------------------------------

        // cuabi_status cuabi_stream_create(cuabi_device device, uint32_t flags, int32_t priority, cuabi_stream* out);
        /// <summary>A new stream.</summary>
        [DllImport(LibraryName, CallingConvention = CallingConvention.Cdecl, EntryPoint = "cuabi_stream_create")]
        public static extern int cuabi_stream_create(SafeDeviceHandle device, uint flags, int priority, out SafeStreamHandle @out);

        // cuabi_status cuabi_stream_wrap(cuabi_device device, uint64_t cu_stream, cuabi_stream* out);
        /// <summary>Wraps a CUstream owned by someone else; release does not destroy it.</summary>
        [DllImport(LibraryName, CallingConvention = CallingConvention.Cdecl, EntryPoint = "cuabi_stream_wrap")]
        public static extern int cuabi_stream_wrap(SafeDeviceHandle device, ulong cu_stream, out SafeStreamHandle @out);

        // void cuabi_stream_release(cuabi_stream stream);
        /// <summary>Releases a stream handle.</summary>
        [DllImport(LibraryName, CallingConvention = CallingConvention.Cdecl, EntryPoint = "cuabi_stream_release")]
        public static extern void cuabi_stream_release(IntPtr stream);

        // cuabi_status cuabi_stream_get_handle(cuabi_stream stream, uint64_t* cu_stream);
        /// <summary>The raw CUstream value.</summary>
        [DllImport(LibraryName, CallingConvention = CallingConvention.Cdecl, EntryPoint = "cuabi_stream_get_handle")]
        public static extern int cuabi_stream_get_handle(SafeStreamHandle stream, out ulong cu_stream);

        // cuabi_status cuabi_stream_synchronize(cuabi_stream stream);
        /// <summary>Waits for all work on the stream.</summary>
        [DllImport(LibraryName, CallingConvention = CallingConvention.Cdecl, EntryPoint = "cuabi_stream_synchronize")]
        public static extern int cuabi_stream_synchronize(SafeStreamHandle stream);

        // cuabi_status cuabi_stream_query(cuabi_stream stream);
        /// <summary>CUABI_SUCCESS when all work is done, CUABI_ERROR_NOT_READY when not.</summary>
        [DllImport(LibraryName, CallingConvention = CallingConvention.Cdecl, EntryPoint = "cuabi_stream_query")]
        public static extern int cuabi_stream_query(SafeStreamHandle stream);

        // cuabi_status cuabi_stream_wait_event(cuabi_stream stream, cuabi_event event);
        /// <summary>Later work on the stream waits for the event.</summary>
        [DllImport(LibraryName, CallingConvention = CallingConvention.Cdecl, EntryPoint = "cuabi_stream_wait_event")]
        public static extern int cuabi_stream_wait_event(SafeStreamHandle stream, SafeEventHandle @event);

        // ------------------------------------------------------------------
        // Events
        // ------------------------------------------------------------------

        // cuabi_status cuabi_event_create(cuabi_device device, uint32_t flags, cuabi_event* out);
        /// <summary>A new event.</summary>
        [DllImport(LibraryName, CallingConvention = CallingConvention.Cdecl, EntryPoint = "cuabi_event_create")]
        public static extern int cuabi_event_create(SafeDeviceHandle device, uint flags, out SafeEventHandle @out);

        // void cuabi_event_release(cuabi_event event);
        /// <summary>Releases an event handle.</summary>
        [DllImport(LibraryName, CallingConvention = CallingConvention.Cdecl, EntryPoint = "cuabi_event_release")]
        public static extern void cuabi_event_release(IntPtr @event);

        // cuabi_status cuabi_event_record(cuabi_event event, cuabi_stream stream);
        /// <summary>Records the event on a stream.</summary>
        [DllImport(LibraryName, CallingConvention = CallingConvention.Cdecl, EntryPoint = "cuabi_event_record")]
        public static extern int cuabi_event_record(SafeEventHandle @event, SafeStreamHandle stream);

        // cuabi_status cuabi_event_synchronize(cuabi_event event);
        /// <summary>Waits until the event is reached.</summary>
        [DllImport(LibraryName, CallingConvention = CallingConvention.Cdecl, EntryPoint = "cuabi_event_synchronize")]
        public static extern int cuabi_event_synchronize(SafeEventHandle @event);

        // cuabi_status cuabi_event_query(cuabi_event event);
        /// <summary>CUABI_SUCCESS when reached, CUABI_ERROR_NOT_READY when not.</summary>
        [DllImport(LibraryName, CallingConvention = CallingConvention.Cdecl, EntryPoint = "cuabi_event_query")]
        public static extern int cuabi_event_query(SafeEventHandle @event);

        // cuabi_status cuabi_event_get_elapsed_ms(cuabi_event start, cuabi_event end, float* milliseconds);
        /// <summary>Milliseconds between two recorded, completed events.</summary>
        [DllImport(LibraryName, CallingConvention = CallingConvention.Cdecl, EntryPoint = "cuabi_event_get_elapsed_ms")]
        public static extern int cuabi_event_get_elapsed_ms(SafeEventHandle start, SafeEventHandle end, out float milliseconds);

        // ------------------------------------------------------------------
        // Graphs
        // ------------------------------------------------------------------

        // cuabi_status cuabi_stream_begin_capture(cuabi_stream stream, cuabi_capture_mode mode);
        /// <summary>Starts capturing the work submitted to a stream into a graph.</summary>
        [DllImport(LibraryName, CallingConvention = CallingConvention.Cdecl, EntryPoint = "cuabi_stream_begin_capture")]
        public static extern int cuabi_stream_begin_capture(SafeStreamHandle stream, int mode);

        // cuabi_status cuabi_stream_end_capture(cuabi_stream stream, cuabi_graph* out);
        /// <summary>Ends the capture and returns the graph.</summary>
        [DllImport(LibraryName, CallingConvention = CallingConvention.Cdecl, EntryPoint = "cuabi_stream_end_capture")]
        public static extern int cuabi_stream_end_capture(SafeStreamHandle stream, out SafeGraphHandle @out);

        // void cuabi_graph_release(cuabi_graph graph);
        /// <summary>Releases a graph handle.</summary>
        [DllImport(LibraryName, CallingConvention = CallingConvention.Cdecl, EntryPoint = "cuabi_graph_release")]
        public static extern void cuabi_graph_release(IntPtr graph);

        // cuabi_status cuabi_graph_get_node_count(cuabi_graph graph, size_t* count);
        /// <summary>The number of nodes in the graph.</summary>
        [DllImport(LibraryName, CallingConvention = CallingConvention.Cdecl, EntryPoint = "cuabi_graph_get_node_count")]
        public static extern int cuabi_graph_get_node_count(SafeGraphHandle graph, out UIntPtr count);

        // cuabi_status cuabi_graph_instantiate(cuabi_graph graph, cuabi_graph_exec* out);
        /// <summary>Instantiates the graph for launching.</summary>
        [DllImport(LibraryName, CallingConvention = CallingConvention.Cdecl, EntryPoint = "cuabi_graph_instantiate")]
        public static extern int cuabi_graph_instantiate(SafeGraphHandle graph, out SafeGraphExecHandle @out);

        // void cuabi_graph_exec_release(cuabi_graph_exec exec);
        /// <summary>Releases an instantiated graph.</summary>
        [DllImport(LibraryName, CallingConvention = CallingConvention.Cdecl, EntryPoint = "cuabi_graph_exec_release")]
        public static extern void cuabi_graph_exec_release(IntPtr exec);

        // cuabi_status cuabi_graph_exec_launch(cuabi_graph_exec exec, cuabi_stream stream);
        /// <summary>Runs the instantiated graph on a stream.</summary>
        [DllImport(LibraryName, CallingConvention = CallingConvention.Cdecl, EntryPoint = "cuabi_graph_exec_launch")]
        public static extern int cuabi_graph_exec_launch(SafeGraphExecHandle exec, SafeStreamHandle stream);
    }

    /// <summary>cuabi_launch_config: grid, block and dynamic shared memory.</summary>
    [StructLayout(LayoutKind.Sequential)]
    public struct LaunchConfigNative
    {
        /// <summary>sizeof(cuabi_launch_config); set by <see cref="Create"/>.</summary>
        public UIntPtr struct_size;
        /// <summary>Blocks in the grid, x.</summary>
        public uint grid_x;
        /// <summary>Blocks in the grid, y.</summary>
        public uint grid_y;
        /// <summary>Blocks in the grid, z.</summary>
        public uint grid_z;
        /// <summary>Threads in a block, x.</summary>
        public uint block_x;
        /// <summary>Threads in a block, y.</summary>
        public uint block_y;
        /// <summary>Threads in a block, z.</summary>
        public uint block_z;
        /// <summary>Dynamic shared memory per block, in bytes.</summary>
        public uint shared_mem_bytes;

        private static readonly UIntPtr StructSize = (UIntPtr)(uint)Marshal.SizeOf(typeof(LaunchConfigNative));

        /// <summary>CUABI_LAUNCH_CONFIG_INIT: a 1x1x1 grid of 1x1x1 blocks, no shared memory.</summary>
        public static LaunchConfigNative Create()
        {
            var c = new LaunchConfigNative();
            c.struct_size = StructSize;
            c.grid_x = c.grid_y = c.grid_z = 1;
            c.block_x = c.block_y = c.block_z = 1;
            return c;
        }
    }

    /// <summary>cuabi_compile_desc: what cuabi_module_compile compiles.</summary>
    [StructLayout(LayoutKind.Sequential)]
    public struct CompileDescNative
    {
        /// <summary>sizeof(cuabi_compile_desc); set by <see cref="Create"/>.</summary>
        public UIntPtr struct_size;
        /// <summary>const char*: CUDA C++ source, NUL-terminated.</summary>
        public IntPtr source;
        /// <summary>const char*: file name for diagnostics, or NULL.</summary>
        public IntPtr name;
        /// <summary>const char* const*: NVRTC options.</summary>
        public IntPtr options;
        /// <summary>Number of options.</summary>
        public UIntPtr num_options;
        /// <summary>const char* const*: contents of each header.</summary>
        public IntPtr header_sources;
        /// <summary>const char* const*: include name of each header.</summary>
        public IntPtr header_names;
        /// <summary>Number of headers.</summary>
        public UIntPtr num_headers;
        /// <summary>const char* const*: name expressions.</summary>
        public IntPtr name_expressions;
        /// <summary>Number of name expressions.</summary>
        public UIntPtr num_name_expressions;
        /// <summary>CUABI_OUTPUT_CUBIN or CUABI_OUTPUT_PTX.</summary>
        public int output;
        /// <summary>CUABI_COMPILE_* flags.</summary>
        public uint flags;

        /// <summary>CUABI_COMPILE_DESC_INIT: everything empty, CUBIN output, no flags.</summary>
        public static CompileDescNative Create()
        {
            var d = new CompileDescNative();
            d.struct_size = (UIntPtr)(uint)Marshal.SizeOf(typeof(CompileDescNative));
            d.output = NativeMethods.CUABI_OUTPUT_CUBIN;
            return d;
        }
    }
}
