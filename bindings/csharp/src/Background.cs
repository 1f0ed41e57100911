using System;
using System.Runtime.InteropServices;
using System.Threading.Tasks;
using Cuabi.Interop;

namespace Cuabi
{
    /// <summary>
    /// Runs a blocking native call (a compile, a link) on the thread pool for
    /// the *Async methods, so the calling thread goes on with other work.
    /// </summary>
    internal static class Background
    {
        /// <summary>
        /// <see cref="Run{T}(SafeHandle, Func{IntPtr, T}, IDisposable)"/> of a call
        /// that needs marshalled strings: <paramref name="prepare"/> writes them
        /// now (what it throws, it throws here, the strings freed), and
        /// <paramref name="call"/> runs on the thread pool with what it made.
        /// </summary>
        internal static Task<T> Run<TPrepared, T>(SafeHandle handle, Func<NativeStrings, TPrepared> prepare,
            Func<IntPtr, TPrepared, T> call)
        {
            var strings = new NativeStrings();
            TPrepared prepared;
            try
            {
                prepared = prepare(strings);
            }
            catch
            {
                strings.Dispose();
                throw;
            }
            return Run(handle, raw => call(raw, prepared), strings);
        }

        /// <summary>
        /// Runs <paramref name="call"/> on the thread pool with the raw value
        /// of <paramref name="handle"/>, which is held from now until the call
        /// returns: disposing its owner meanwhile defers the release (the call
        /// reaches the library through a non-owning handle of the same
        /// value). <paramref name="resources"/> (the call's marshalled
        /// strings) are disposed after the call, or now if it cannot start.
        /// </summary>
        internal static Task<T> Run<T>(SafeHandle handle, Func<IntPtr, T> call, IDisposable resources)
        {
            bool added = false;
            try
            {
                handle.DangerousAddRef(ref added);
                IntPtr raw = handle.DangerousGetHandle();
                return Task.Run(() =>
                {
                    try
                    {
                        return call(raw);
                    }
                    finally
                    {
                        if (resources != null)
                            resources.Dispose();
                        handle.DangerousRelease();
                    }
                });
            }
            catch
            {
                // Task.Run itself failed (or the handle was closed): nothing will run.
                if (added)
                    handle.DangerousRelease();
                if (resources != null)
                    resources.Dispose();
                throw;
            }
        }
    }
}
