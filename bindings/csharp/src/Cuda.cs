using System;
using System.Runtime.CompilerServices;
using Cuabi.Interop;

namespace Cuabi
{
    /// <summary>
    /// The library as a whole: versions, where the driver and NVRTC come
    /// from, and status names.
    /// </summary>
    /// <remarks>
    /// Each public member loads the native library first (see
    /// <see cref="CuabiLibrary.Load"/>); its native calls live in separate,
    /// non-inlined methods so that Mono binds them only after that.
    /// </remarks>
    public static class Cuda
    {
        /// <summary>The library's version number (MAJOR * 10000 + MINOR * 100 + PATCH).</summary>
        public static int Version
        {
            get { CuabiLibrary.Load(); return VersionCore(); }
        }

        /// <summary>The library's version string, e.g. "0.1.0".</summary>
        public static string VersionString
        {
            get { CuabiLibrary.Load(); return VersionStringCore(); }
        }

        /// <summary>Opens the CUDA driver and calls cuInit. Optional: every call that needs the driver does it.</summary>
        /// <exception cref="CudaException">
        /// <see cref="CudaStatus.DriverNotFound"/> (the message lists every path tried),
        /// <see cref="CudaStatus.StubDriver"/>, or a failure of cuInit.
        /// </exception>
        public static void Init()
        {
            CuabiLibrary.Load();
            InitCore();
        }

        /// <summary>The driver's CUDA version, e.g. 13000 for 13.0.</summary>
        public static int DriverVersion
        {
            get { CuabiLibrary.Load(); return DriverVersionCore(); }
        }

        /// <summary>Where the CUDA driver was loaded from.</summary>
        public static string DriverPath
        {
            get { CuabiLibrary.Load(); return DriverPathCore(); }
        }

        /// <summary>NVRTC's version (opens NVRTC if needed).</summary>
        public static Version NvrtcVersion
        {
            get { CuabiLibrary.Load(); return NvrtcVersionCore(); }
        }

        /// <summary>Where NVRTC was loaded from (opens NVRTC if needed).</summary>
        public static string NvrtcPath
        {
            get { CuabiLibrary.Load(); return NvrtcPathCore(); }
        }

        /// <summary>The library's name for a status, e.g. "CUABI_ERROR_INVALID_HANDLE".</summary>
        /// <param name="status">Any status value, defined or not.</param>
        public static string StatusName(CudaStatus status)
        {
            CuabiLibrary.Load();
            return StatusNameCore(status);
        }

        /// <summary>One sentence describing a status.</summary>
        /// <param name="status">Any status value, defined or not.</param>
        public static string StatusDescription(CudaStatus status)
        {
            CuabiLibrary.Load();
            return StatusDescriptionCore(status);
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        private static int VersionCore()
        {
            return (int)NativeMethods.cuabi_version();
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        private static string VersionStringCore()
        {
            return Utf8.FromNative(NativeMethods.cuabi_version_string());
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        private static void InitCore()
        {
            Errors.Check(NativeMethods.cuabi_init());
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        private static int DriverVersionCore()
        {
            int v;
            Errors.Check(NativeMethods.cuabi_driver_get_version(out v));
            return v;
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        private static string DriverPathCore()
        {
            return Errors.ReadString(NativeMethods.cuabi_driver_get_path);
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        private static Version NvrtcVersionCore()
        {
            int major, minor;
            Errors.Check(NativeMethods.cuabi_nvrtc_get_version(out major, out minor));
            return new Version(major, minor);
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        private static string NvrtcPathCore()
        {
            return Errors.ReadString(NativeMethods.cuabi_nvrtc_get_path);
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        private static string StatusNameCore(CudaStatus status)
        {
            return Utf8.FromNative(NativeMethods.cuabi_status_get_name(status));
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        private static string StatusDescriptionCore(CudaStatus status)
        {
            return Utf8.FromNative(NativeMethods.cuabi_status_get_description(status));
        }
    }
}
