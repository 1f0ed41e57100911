using System;
using Cuabi.Interop;

namespace Cuabi
{
    /// <summary>The cuabi_status values; the names follow the header's CUABI_* names.</summary>
    public enum CudaStatus
    {
        /// <summary>CUABI_SUCCESS.</summary>
        Success = 0,
        /// <summary>An argument is out of its domain (a NULL pointer, a zero or oversized count, a kernel argument of the wrong size).</summary>
        InvalidArgument = 1,
        /// <summary>A NULL, released, stale or wrong-kind handle.</summary>
        InvalidHandle = 2,
        /// <summary>Host or device memory could not be allocated.</summary>
        OutOfMemory = 3,
        /// <summary>The caller's buffer is too small.</summary>
        InsufficientBuffer = 4,
        /// <summary>An offset or length reaches past the end of a buffer, or an index past the end of a list.</summary>
        OutOfRange = 5,
        /// <summary>A named thing does not exist: a kernel, a global, a name expression.</summary>
        NotFound = 6,
        /// <summary>The installed driver or NVRTC lacks what this call needs.</summary>
        NotSupported = 7,
        /// <summary>Work is still in flight. Not a failure.</summary>
        NotReady = 8,
        /// <summary>libcuda.so.1 could not be loaded; the message lists every path tried.</summary>
        DriverNotFound = 9,
        /// <summary>The loaded libcuda is the toolkit's stub library, which cannot run anything.</summary>
        StubDriver = 10,
        /// <summary>The driver works but there is no CUDA device, or the ordinal is past the last device.</summary>
        NoDevice = 11,
        /// <summary>No libnvrtc could be loaded; the message lists every path tried.</summary>
        NvrtcNotFound = 12,
        /// <summary>NVRTC rejected the source or options; see <see cref="CudaException.CompileLog"/>.</summary>
        Compile = 13,
        /// <summary>
        /// The device context hit a sticky fault (an illegal address, a trap, a launch failure). The driver
        /// then fails every later CUDA call of the process, on every device, <see cref="Device.Reset"/>
        /// included; the only documented recovery is to end the process and start a new one. Run untrusted
        /// kernels in a child process to survive their faults.
        /// </summary>
        ContextLost = 14,
        /// <summary>The process forked after cuabi initialised CUDA.</summary>
        Forked = 15,
        /// <summary>Any other CUDA driver failure; <see cref="CudaException.Code"/> is the CUresult.</summary>
        Cuda = 16,
        /// <summary>Any other NVRTC failure; <see cref="CudaException.Code"/> is the nvrtcResult.</summary>
        Nvrtc = 17,
        /// <summary>A file could not be read or written.</summary>
        IO = 18,
        /// <summary>A bug in cuabi.</summary>
        Internal = 19,
    }

    /// <summary>A cuabi call failed. Carries the library's status, message and, for compiles, NVRTC's log.</summary>
    public class CudaException : Exception
    {
        /// <summary>Creates the exception (normally done by the binding from the library's last error).</summary>
        /// <param name="status">The failing status.</param>
        /// <param name="statusName">The status's symbolic name, e.g. "CUABI_ERROR_INVALID_HANDLE".</param>
        /// <param name="message">The library's message.</param>
        /// <param name="code">The raw CUresult or nvrtcResult, 0 if none.</param>
        /// <param name="compileLog">NVRTC's log for a failed compile, else null.</param>
        public CudaException(CudaStatus status, string statusName, string message, int code, string compileLog)
            : base(message)
        {
            Status = status;
            StatusName = statusName;
            Code = code;
            CompileLog = compileLog;
        }

        /// <summary>The status the library returned.</summary>
        public CudaStatus Status { get; private set; }

        /// <summary>The status's symbolic name from the library, e.g. "CUABI_ERROR_COMPILE".</summary>
        public string StatusName { get; private set; }

        /// <summary>The raw CUresult or nvrtcResult behind a CUDA or NVRTC failure, 0 if none.</summary>
        public int Code { get; private set; }

        /// <summary>NVRTC's log when <see cref="Status"/> is <see cref="CudaStatus.Compile"/>; otherwise null.</summary>
        public string CompileLog { get; private set; }
    }

    /// <summary>Turns statuses into exceptions, reading the calling thread's last error at once.</summary>
    internal static class Errors
    {
        /// <summary>Throws a <see cref="CudaException"/> unless <paramref name="status"/> is CUABI_SUCCESS.</summary>
        internal static void Check(int status)
        {
            if (status != NativeMethods.CUABI_SUCCESS)
                throw FromLastError(status);
        }

        /// <summary>The exception for a failed call; call right after it, on the same thread.</summary>
        internal static CudaException FromLastError(int status)
        {
            string message = Utf8.FromNative(NativeMethods.cuabi_last_error_message());
            int code = NativeMethods.cuabi_last_error_code();
            string log = null;
            if (status == NativeMethods.CUABI_ERROR_COMPILE)
                log = ReadLastLog();
            string name = Utf8.FromNative(NativeMethods.cuabi_status_get_name(status));
            if (string.IsNullOrEmpty(message))
                message = name + ": " + Utf8.FromNative(NativeMethods.cuabi_status_get_description(status));
            return new CudaException((CudaStatus)status, name, message, code, log);
        }

        private static string ReadLastLog()
        {
            UIntPtr size = UIntPtr.Zero;
            if (NativeMethods.cuabi_last_error_log(null, ref size) != NativeMethods.CUABI_SUCCESS)
                return null;
            var buf = new byte[(int)size.ToUInt64()];
            if (buf.Length == 0 || NativeMethods.cuabi_last_error_log(buf, ref size) != NativeMethods.CUABI_SUCCESS)
                return "";
            return Utf8.FromBuffer(buf, buf.Length);
        }

        /// <summary>Callback shape of the two-call functions: (buf, ref size) -> status.</summary>
        internal delegate int TwoCall(byte[] buffer, ref UIntPtr size);

        /// <summary>Runs the two-call pattern and returns the bytes (without a string's NUL).</summary>
        internal static byte[] ReadBlob(TwoCall call)
        {
            UIntPtr size = UIntPtr.Zero;
            Check(call(null, ref size));
            for (int attempt = 0; ; attempt++)
            {
                var buf = new byte[checked((int)size.ToUInt64())];
                if (buf.Length == 0)
                    return buf;
                int status = call(buf, ref size);
                // The value can grow between the calls (a log being written);
                // the library then reports the size it needs now.
                if (status == NativeMethods.CUABI_ERROR_INSUFFICIENT_BUFFER && attempt < 4)
                    continue;
                Check(status);
                if ((int)size.ToUInt64() < buf.Length)
                    Array.Resize(ref buf, (int)size.ToUInt64());
                return buf;
            }
        }

        /// <summary>Runs the two-call pattern for a string.</summary>
        internal static string ReadString(TwoCall call)
        {
            byte[] bytes = ReadBlob(call);
            return Utf8.FromBuffer(bytes, bytes.Length);
        }
    }
}
