using System;
using System.Collections.Generic;
using System.Collections.ObjectModel;
using System.Globalization;
using Cuabi.Interop;

namespace Cuabi
{
    /// <summary>
    /// A kernel launch a lost context's failure names (<see cref="CudaException.Launches"/>):
    /// one not seen complete when the sticky fault surfaced.
    /// </summary>
    public sealed class FaultedLaunch
    {
        /// <summary>Creates the value (normally done by the binding from the library's last error).</summary>
        /// <param name="kernel">The kernel's name.</param>
        /// <param name="record">The launch: stream, number on it, grid, block, shared memory, cluster.</param>
        public FaultedLaunch(string kernel, LaunchRecord record)
        {
            Kernel = kernel;
            Record = record;
        }

        /// <summary>The kernel's name, as the library names it.</summary>
        public string Kernel { get; }

        /// <summary>
        /// The launch: its number on its stream (<see cref="LaunchRecord.Sequence"/>), the stream
        /// (<see cref="LaunchRecord.StreamId"/>, the <see cref="CudaStream.Id"/>; 0 for the device's
        /// default stream), the device, grid, block, dynamic shared memory, cluster, and whether
        /// the driver's log named the kernel during the failing call.
        /// </summary>
        public LaunchRecord Record { get; }

        /// <summary>"kernel 'name' LaunchRecord { ... }".</summary>
        public override string ToString()
        {
            return string.Format(CultureInfo.InvariantCulture, "kernel '{0}' {1}", Kernel, Record);
        }
    }

    /// <summary>A cuabi call failed. Carries the library's status, message and, for compiles, NVRTC's log.</summary>
    public class CudaException : Exception
    {
        private static readonly IReadOnlyList<FaultedLaunch> NoLaunches = new ReadOnlyCollection<FaultedLaunch>(new FaultedLaunch[0]);

        /// <summary>Creates the exception (normally done by the binding from the library's last error).</summary>
        /// <param name="status">The failing status.</param>
        /// <param name="statusName">The status's symbolic name, e.g. "CUABI_ERROR_INVALID_HANDLE".</param>
        /// <param name="message">The library's message.</param>
        /// <param name="code">The raw CUresult or nvrtcResult, 0 if none.</param>
        /// <param name="compileLog">NVRTC's log for a failed compile, else null.</param>
        public CudaException(CudaStatus status, string statusName, string message, int code, string compileLog)
            : this(status, statusName, message, code, compileLog, null)
        {
        }

        /// <summary>Creates the exception (normally done by the binding from the library's last error).</summary>
        /// <param name="status">The failing status.</param>
        /// <param name="statusName">The status's symbolic name, e.g. "CUABI_ERROR_CONTEXT_LOST".</param>
        /// <param name="message">The library's message.</param>
        /// <param name="code">The raw CUresult or nvrtcResult, 0 if none.</param>
        /// <param name="compileLog">NVRTC's log for a failed compile, else null.</param>
        /// <param name="launches">The launches the failure names, most recent first (copied); null for none.</param>
        public CudaException(CudaStatus status, string statusName, string message, int code, string compileLog,
            IEnumerable<FaultedLaunch> launches)
            : base(message)
        {
            Status = status;
            StatusName = statusName;
            Code = code;
            CompileLog = compileLog;
            var copy = launches == null ? null : new List<FaultedLaunch>(launches);
            Launches = copy == null || copy.Count == 0 ? NoLaunches : new ReadOnlyCollection<FaultedLaunch>(copy);
        }

        /// <summary>The status the library returned.</summary>
        public CudaStatus Status { get; private set; }

        /// <summary>The status's symbolic name from the library, e.g. "CUABI_ERROR_COMPILE".</summary>
        public string StatusName { get; private set; }

        /// <summary>The raw CUresult or nvrtcResult behind a CUDA or NVRTC failure, 0 if none.</summary>
        public int Code { get; private set; }

        /// <summary>
        /// When <see cref="Status"/> is <see cref="CudaStatus.Compile"/>: NVRTC's log of a failed compile,
        /// or the linker's log of a failed link (<see cref="Linker.Link"/>); otherwise null.
        /// </summary>
        public string CompileLog { get; private set; }

        /// <summary>
        /// When <see cref="Status"/> is <see cref="CudaStatus.ContextLost"/>: the kernel launches
        /// not seen complete when the sticky fault surfaced (no successful synchronize or query
        /// of their stream or device since), most recent first, the ones the message names;
        /// on this call and every later failure of the lost context. Empty for any other
        /// status.
        /// </summary>
        public IReadOnlyList<FaultedLaunch> Launches { get; private set; }
    }

    /// <summary>
    /// A host function (<see cref="CudaStream.LaunchHostFunc"/>) failed: thrown
    /// by the stream's next <see cref="CudaStream.Synchronize"/>, with the
    /// failure's message (for an exception the callback threw, its type and
    /// message: "System.InvalidOperationException: text"). The failure is then
    /// cleared; work after the host function still ran.
    /// </summary>
    public class HostFunctionException : CudaException
    {
        /// <summary>Creates the exception (normally done by the binding from the library's last error).</summary>
        /// <param name="status">The failing status, <see cref="CudaStatus.HostFunction"/>.</param>
        /// <param name="statusName">The status's symbolic name, "CUABI_ERROR_HOST_FUNCTION".</param>
        /// <param name="message">The library's message: the host function's.</param>
        /// <param name="code">The raw code, 0 if none.</param>
        public HostFunctionException(CudaStatus status, string statusName, string message, int code)
            : base(status, statusName, message, code, null)
        {
        }
    }

    /// <summary>Turns statuses into exceptions, reading the calling thread's last error at once.</summary>
    internal static class Errors
    {
        /// <summary>Throws a <see cref="CudaException"/> unless <paramref name="status"/> is CUABI_SUCCESS.</summary>
        internal static void Check(CudaStatus status)
        {
            if (status != CudaStatus.Success)
                throw FromLastError(status);
        }

        /// <summary>The exception for a failed call; call right after it, on the same thread.</summary>
        internal static CudaException FromLastError(CudaStatus status)
        {
            string message = Utf8.FromNative(NativeMethods.cuabi_last_error_message());
            int code = NativeMethods.cuabi_last_error_code();
            string log = null;
            if (status == CudaStatus.Compile)
                log = ReadString(NativeMethods.cuabi_last_error_log, true, new byte[0]);
            string name = Utf8.FromNative(NativeMethods.cuabi_status_get_name(status));
            if (string.IsNullOrEmpty(message))
                message = name + ": " + Utf8.FromNative(NativeMethods.cuabi_status_get_description(status));
            if (status == CudaStatus.HostFunction)
                return new HostFunctionException(status, name, message, code);
            List<FaultedLaunch> launches = null;
            if (status == CudaStatus.ContextLost)
                launches = ReadLastLaunches();
            return new CudaException(status, name, message, code, log, launches);
        }

        /// <summary>
        /// The last error's launches (cuabi_last_error_get_launch*), most recent first. These
        /// readers leave the last error as it is and answer a bare status: one that fails
        /// ends the list there.
        /// </summary>
        private static List<FaultedLaunch> ReadLastLaunches()
        {
            ulong count = NativeMethods.cuabi_last_error_get_launch_count().ToUInt64();
            var launches = new List<FaultedLaunch>((int)Math.Min(count, 64));
            if (count == 0)
                return launches;
            LaunchRecordNative init = LaunchRecordNative.Create();
            for (ulong i = 0; i < count; i++)
            {
                var index = (UIntPtr)i;
                LaunchRecordNative n = init;
                if (NativeMethods.cuabi_last_error_get_launch(index, ref n) != CudaStatus.Success)
                    break;
                string kernel = ReadString(delegate(byte[] b, ref UIntPtr s)
                {
                    return NativeMethods.cuabi_last_error_get_launch_kernel(index, b, ref s);
                }, true);
                if (kernel == null)
                    break;
                launches.Add(new FaultedLaunch(kernel, LaunchRecord.FromNative(ref n)));
            }
            return launches;
        }

        /// <summary>
        /// The exception for a failed argument check of the library
        /// (cuabi_function_check_arg_size/s): InvalidArgument becomes an
        /// <see cref="ArgumentException"/> for <paramref name="paramName"/>
        /// with the library's message and the <see cref="CudaException"/> as
        /// its inner exception; any other status stays a CudaException.
        /// </summary>
        internal static Exception FromArgumentCheck(CudaStatus status, string paramName)
        {
            CudaException e = FromLastError(status);
            if (status != CudaStatus.InvalidArgument)
                return e;
            return new ArgumentException(e.Message, paramName, e);
        }

        /// <summary>Callback shape of the two-call functions: (buf, ref size) -> status.</summary>
        internal delegate CudaStatus TwoCall(byte[] buffer, ref UIntPtr size);

        /// <summary>
        /// Runs the two-call pattern and returns the bytes (without a string's NUL). A reader
        /// of the last error (<paramref name="quiet"/>), which leaves it as it is, throws
        /// nothing and reads once: null when the size query fails, and
        /// <paramref name="failed"/> when the read fails.
        /// </summary>
        internal static byte[] ReadBlob(TwoCall call, bool quiet = false, byte[] failed = null)
        {
            UIntPtr size = UIntPtr.Zero;
            CudaStatus status = call(null, ref size);
            if (quiet && status != CudaStatus.Success)
                return null;
            Check(status);
            for (int attempt = 0; ; attempt++)
            {
                var buf = new byte[checked((int)size.ToUInt64())];
                if (buf.Length == 0)
                    return buf;
                status = call(buf, ref size);
                if (quiet && status != CudaStatus.Success)
                    return failed;
                // The value can grow between the calls (a log being written);
                // the library then reports the size it needs now.
                if (status == CudaStatus.InsufficientBuffer && attempt < 4)
                    continue;
                Check(status);
                if ((int)size.ToUInt64() < buf.Length)
                    Array.Resize(ref buf, (int)size.ToUInt64());
                return buf;
            }
        }

        /// <summary>Runs the two-call pattern for a string (as <see cref="ReadBlob"/>; null where it answers null).</summary>
        internal static string ReadString(TwoCall call, bool quiet = false, byte[] failed = null)
        {
            byte[] bytes = ReadBlob(call, quiet, failed);
            return bytes == null ? null : Utf8.FromBuffer(bytes, bytes.Length);
        }
    }
}
