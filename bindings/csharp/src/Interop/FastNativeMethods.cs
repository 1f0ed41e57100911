// The launch calls again, with raw handle values instead of SafeHandles, for
// the launch path of Kernel and LaunchPlan only.
//
// Passing a SafeHandle makes the marshaller add-ref and release it around
// the call, which costs more than the rest of a plan launch. The raw value
// is safe to pass: the library detects a released or stale handle and
// answers CUABI_ERROR_INVALID_HANDLE, so a handle disposed by another thread
// at the wrong moment gives an error, never a use of freed memory. The
// callers keep the owning objects reachable until the call returns
// (GC.KeepAlive), so no finalizer releases a handle during its call.
//
// Same names, argument counts and library as NativeMethods; the header
// tests check these declarations against the header too.

using System;
using System.Runtime.InteropServices;
using System.Security;

namespace Cuabi.Interop
{
    [SuppressUnmanagedCodeSecurity]
    internal static class FastNativeMethods
    {
        // cuabi_status cuabi_launch_plan_launch(cuabi_launch_plan plan);
        [DllImport(NativeMethods.LibraryName, CallingConvention = CallingConvention.Cdecl, EntryPoint = "cuabi_launch_plan_launch")]
        internal static extern int cuabi_launch_plan_launch(IntPtr plan);

        // cuabi_status cuabi_function_launch_packed(cuabi_function function, const cuabi_launch_config* config,
        //     cuabi_stream stream, const void* args, size_t args_size);
        [DllImport(NativeMethods.LibraryName, CallingConvention = CallingConvention.Cdecl, EntryPoint = "cuabi_function_launch_packed")]
        internal static extern int cuabi_function_launch_packed(IntPtr function, ref LaunchConfigNative config, IntPtr stream,
            IntPtr args, UIntPtr args_size);
    }
}
