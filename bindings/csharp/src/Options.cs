using System;
using System.Collections.Generic;

namespace Cuabi
{
    /// <summary>What <see cref="Device.Compile"/> produces (CUABI_OUTPUT_*).</summary>
    public enum CompileOutput
    {
        /// <summary>Machine code for the device's own sm_XY: no JIT at load (the default).</summary>
        Cubin = 0,
        /// <summary>PTX for compute_XY: the driver JIT-compiles it at load.</summary>
        Ptx = 1,
    }

    /// <summary>Stream creation flags (CUABI_STREAM_*).</summary>
    [Flags]
    public enum StreamFlags : uint
    {
        /// <summary>A stream that synchronises with the default stream.</summary>
        None = 0,
        /// <summary>The stream does not synchronise with the default (NULL) stream.</summary>
        NonBlocking = 1u << 0,
    }

    /// <summary>Event creation flags (CUABI_EVENT_*).</summary>
    [Flags]
    public enum EventFlags : uint
    {
        /// <summary>A timing event.</summary>
        None = 0,
        /// <summary>Cheaper, for synchronisation only: no timing.</summary>
        DisableTiming = 1u << 0,
        /// <summary>Synchronize sleeps instead of spinning.</summary>
        BlockingSync = 1u << 1,
    }

    /// <summary>Stream capture modes (CUABI_CAPTURE_*, the driver's CUstreamCaptureMode).</summary>
    public enum CaptureMode
    {
        /// <summary>CU_STREAM_CAPTURE_MODE_GLOBAL.</summary>
        Global = 0,
        /// <summary>CU_STREAM_CAPTURE_MODE_THREAD_LOCAL.</summary>
        ThreadLocal = 1,
        /// <summary>CU_STREAM_CAPTURE_MODE_RELAXED.</summary>
        Relaxed = 2,
    }

    /// <summary>Kernel attributes (CUABI_FUNC_*, the driver's CUfunction_attribute values).</summary>
    public enum FunctionAttribute
    {
        /// <summary>The most threads a block of this kernel may have.</summary>
        MaxThreadsPerBlock = 0,
        /// <summary>Static shared memory per block, in bytes.</summary>
        SharedSizeBytes = 1,
        /// <summary>Constant memory used, in bytes.</summary>
        ConstSizeBytes = 2,
        /// <summary>Local memory per thread, in bytes.</summary>
        LocalSizeBytes = 3,
        /// <summary>Registers per thread.</summary>
        NumRegs = 4,
        /// <summary>The PTX version the kernel was compiled for (e.g. 90).</summary>
        PtxVersion = 5,
        /// <summary>The binary architecture version (e.g. 90).</summary>
        BinaryVersion = 6,
        /// <summary>The settable limit of dynamic shared memory per block, in bytes.</summary>
        MaxDynamicSharedSizeBytes = 8,
    }

    /// <summary>What <see cref="Device.Compile"/> compiles besides the source.</summary>
    public sealed class CompileOptions
    {
        /// <summary>Empty options: CUBIN for the device, cache on.</summary>
        public CompileOptions()
        {
            Options = new List<string>();
            Headers = new Dictionary<string, string>();
            NameExpressions = new List<string>();
            Output = CompileOutput.Cubin;
            UseCache = true;
        }

        /// <summary>File name used in diagnostics (null: "cuabi_program.cu").</summary>
        public string Name { get; set; }

        /// <summary>NVRTC options, e.g. "--fmad=false", "-std=c++17". Without an architecture option the device's own is used.</summary>
        public IList<string> Options { get; private set; }

        /// <summary>Headers the source may #include: include name to contents.</summary>
        public IDictionary<string, string> Headers { get; private set; }

        /// <summary>Name expressions such as "scale&lt;float&gt;", usable afterwards as kernel names.</summary>
        public IList<string> NameExpressions { get; private set; }

        /// <summary>CUBIN (default) or PTX.</summary>
        public CompileOutput Output { get; set; }

        /// <summary>Whether to read and write the on-disk cache (default true).</summary>
        public bool UseCache { get; set; }
    }
}
