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
    public static partial class Cuda
    {
        /// <summary>The library's version number (MAJOR * 10000 + MINOR * 100 + PATCH).</summary>
        public static int Version
        {
            get { CuabiLibrary.Load(); return VersionCore(); }
        }

        /// <summary>NVRTC's version (opens NVRTC if needed).</summary>
        public static Version NvrtcVersion
        {
            get { CuabiLibrary.Load(); return NvrtcVersionCore(); }
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        private static int VersionCore()
        {
            return (int)NativeMethods.cuabi_version();
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        private static Version NvrtcVersionCore()
        {
            int major, minor;
            Errors.Check(NativeMethods.cuabi_nvrtc_get_version(out major, out minor));
            return new Version(major, minor);
        }
    }
}
