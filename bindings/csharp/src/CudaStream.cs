using System;
using System.Runtime.InteropServices;
using System.Text;
using Cuabi.Interop;

namespace Cuabi
{
    /// <summary>
    /// A CUDA stream: work submitted to it runs in order. Methods that take a
    /// stream accept null for the device's default stream.
    /// </summary>
    public sealed partial class CudaStream : IDisposable
    {
    }

    /// <summary>
    /// The native entry points of every host function: they run the delegate
    /// its user data names (a GCHandle), and turn an exception into the
    /// failure message the library reports.
    /// </summary>
    internal static class HostFunctions
    {
        private static readonly Encoding Lenient = new UTF8Encoding(false, false);

        /// <summary>
        /// A stream's host function: its delegate's handle is freed here, at its one run. Held
        /// for the life of the process, so that the function pointer given out stays valid.
        /// </summary>
        internal static readonly HostFnNative Trampoline = (userData, message, size) => Run(userData, message, size, true);

        /// <summary>A graph's host node: its delegate is kept, for the node runs at each launch of the graph.</summary>
        internal static readonly HostFnNative KeptTrampoline = (userData, message, size) => Run(userData, message, size, false);

        internal delegate CudaStatus HostCall(HostFnNative fn, IntPtr userData);

        /// <summary>
        /// Gives <paramref name="call"/> <paramref name="trampoline"/> and a
        /// handle of <paramref name="callback"/>, which the trampoline frees
        /// after one run (a stream's host function: <see cref="Trampoline"/>) or
        /// keeps for the life of the process (a graph's host node: <see cref="KeptTrampoline"/>;
        /// a launch under way may call it after its graph is gone). Refused by the library, the
        /// callback never runs, so its handle is freed here. A null callback goes
        /// to the library as NULL, for it to refuse.
        /// </summary>
        /// <exception cref="CudaException">The library refused; the message names why.</exception>
        internal static void Install(Action callback, HostFnNative trampoline, HostCall call)
        {
            if (callback == null)
            {
                Errors.Check(call(null, IntPtr.Zero));
                return;
            }
            GCHandle keep = GCHandle.Alloc(callback);
            CudaStatus status;
            try
            {
                status = call(trampoline, GCHandle.ToIntPtr(keep));
            }
            catch
            {
                keep.Free();
                throw;
            }
            if (status != CudaStatus.Success)
            {
                CudaException e = Errors.FromLastError(status);
                keep.Free();
                throw e;
            }
        }

        private static int Run(IntPtr userData, IntPtr message, UIntPtr messageSize, bool once)
        {
            try
            {
                GCHandle keep = GCHandle.FromIntPtr(userData);
                var callback = (Action)keep.Target;
                if (once)
                    keep.Free();
                callback();
                return 0;
            }
            catch (Exception e)
            {
                // The callback's exception (or one here): nothing may unwind into the driver's thread.
                try
                {
                    WriteMessage(message, messageSize, e.GetType().FullName + ": " + e.Message);
                }
                catch
                {
                }
                return 1;
            }
        }

        /// <summary>Writes <paramref name="text"/> as NUL-terminated UTF-8, cut at a character boundary to fit <paramref name="size"/> bytes.</summary>
        internal static void WriteMessage(IntPtr buffer, UIntPtr size, string text)
        {
            ulong capacity = size.ToUInt64();
            if (buffer == IntPtr.Zero || capacity == 0)
                return;
            byte[] bytes = Lenient.GetBytes(text.Replace('\0', ' '));
            int n = (int)Math.Min((ulong)bytes.Length, capacity - 1);
            while (n > 0 && n < bytes.Length && (bytes[n] & 0xC0) == 0x80)
                n--; // not inside a character
            Marshal.Copy(bytes, 0, buffer, n);
            Marshal.WriteByte(buffer, n, 0);
        }
    }

    /// <summary>A CUDA event: a marker in a stream, for synchronisation and timing.</summary>
    public sealed partial class CudaEvent : IDisposable
    {
    }

    /// <summary>A graph captured from a stream (<see cref="CudaStream.EndCapture"/>).</summary>
    public sealed partial class CudaGraph : IDisposable
    {
    }

    /// <summary>An instantiated graph.</summary>
    public sealed partial class CudaGraphExec : IDisposable
    {
    }
}
