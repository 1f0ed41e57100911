// SAXPY through cuabi from C#: compile CUDA C++ at run time with NVRTC, move
// data through pinned host memory on a stream, launch with typed arguments,
// time the kernel with events and check the result on the host; then launch
// again through a prepared launch (LaunchPlan) with one argument changed.
//
//   mono out/Saxpy.exe            (Mono; CUABI_LIBRARY=/path/to/libcuabi.so)
//   dotnet run --project examples/csharp
//
// Exit status: 0 when the check passed, 1 when it failed, 2 when no CUDA
// device was found (the kernel is still compiled, to show NVRTC works).

using System;
using Cuabi;

public static class Saxpy
{
    private const string Source = @"extern ""C"" __global__
void saxpy(float a, float *x, float *y, float *out, size_t n)
{
 size_t tid = blockIdx.x * blockDim.x + threadIdx.x;
 if (tid < n) {
   out[tid] = a * x[tid] + y[tid];
 }
}
";

    private const int NumThreads = 512; // threads per block
    private const int NumBlocks = 32768; // blocks per grid

    public static int Main()
    {
        try
        {
            return Run();
        }
        catch (Exception e)
        {
            Console.Error.WriteLine("saxpy: " + e.GetType().Name + ": " + e.Message);
            return 1;
        }
    }

    private static int Run()
    {
        Console.WriteLine("cuabi {0}, NVRTC {1}", Cuda.VersionString, Cuda.NvrtcVersion);

        string noDevice;
        Device device = FirstDevice(out noDevice);

        // Compile to PTX for the device's own architecture (compute_XY), with
        // FMAD off so the device computes a * x + y exactly as the host does.
        string arch = null;
        if (device != null)
        {
            ComputeCapability cc = device.ComputeCapability;
            arch = "--gpu-architecture=compute_" + cc.Major + cc.Minor;
            Console.WriteLine("device 0: {0}, compute capability {1}", device.Name, cc);
        }
        string ptx;
        using (var program = new Program(Source, "saxpy.cu"))
        {
            if (arch != null)
                program.Compile("--fmad=false", arch);
            else
                program.Compile("--fmad=false");
            ptx = program.Ptx;
        }
        Console.WriteLine("compiled saxpy.cu: {0} bytes of PTX", ptx.Length);

        if (device == null)
        {
            Console.Error.WriteLine("No CUDA device was found: " + noDevice);
            return 2;
        }

        using (device)
        using (CudaModule module = device.LoadModule(ptx))
        using (Kernel kernel = module.GetKernel("saxpy"))
        {
            return RunOnDevice(device, kernel);
        }
    }

    private static int RunOnDevice(Device device, Kernel kernel)
    {
        const float a = 2.0f, a2 = 3.0f;
        const int n = NumThreads * NumBlocks;

        var random = new Random(12345);
        var hX = new float[n];
        var hY = new float[n];
        for (int i = 0; i < n; i++)
        {
            hX[i] = (float)random.NextDouble();
            hY[i] = (float)random.NextDouble();
        }
        var hOut = new float[n];
        var hOut2 = new float[n];

        using (CudaStream stream = device.CreateStream())
        using (PinnedBuffer<float> pinnedX = device.AllocatePinned<float>(n))
        using (PinnedBuffer<float> pinnedY = device.AllocatePinned<float>(n))
        using (PinnedBuffer<float> pinnedOut = device.AllocatePinned<float>(n))
        using (DeviceBuffer<float> dX = device.Allocate<float>(n))
        using (DeviceBuffer<float> dY = device.Allocate<float>(n))
        using (DeviceBuffer<float> dOut = device.Allocate<float>(n))
        using (CudaEvent start = device.CreateEvent())
        using (CudaEvent stop = device.CreateEvent())
        {
            pinnedX.CopyFrom(hX);
            pinnedY.CopyFrom(hY);
            dX.CopyFromAsync(pinnedX, stream);
            dY.CopyFromAsync(pinnedY, stream);

            // The overview passes n as a 4-byte np.uint32 to the size_t
            // parameter; the library checks the argument sizes against the
            // kernel's parameters and refuses that instead of running it.
            try
            {
                kernel.Launch(NumBlocks, NumThreads, stream, a, dX, dY, dOut, (uint)n);
                Console.Error.WriteLine("saxpy: a 4-byte n was accepted for the size_t parameter");
                return 1;
            }
            catch (ArgumentException e)
            {
                Console.WriteLine("4-byte n refused as it should be: " + e.Message.Split('\n')[0].TrimEnd());
            }

            start.Record(stream);
            kernel.Launch(NumBlocks, NumThreads, stream, a, dX, dY, dOut, (ulong)n);
            stop.Record(stream);
            dOut.CopyToAsync(pinnedOut, stream);
            stream.Synchronize();
            pinnedOut.CopyTo(hOut);

            float ms = stop.ElapsedSince(start);
            Console.WriteLine("kernel time: {0:F3} ms ({1} threads x {2} blocks)", ms, NumThreads, NumBlocks);

            // A prepared launch, for launching the same kernel many times: the
            // configuration is checked once, the arguments are written into the
            // plan's block in place, and each launch is one native call.
            using (LaunchPlan plan = kernel.Prepare(NumBlocks, NumThreads, stream))
            {
                plan.SetArguments(a, dX, dY, dOut, (ulong)n);
                plan.Set(0, a2); // only a changes; the other arguments stay
                plan.Launch();
                dOut.CopyToAsync(pinnedOut, stream);
                stream.Synchronize();
                pinnedOut.CopyTo(hOut2);
            }
        }

        bool passed = Check("check", a, hX, hY, hOut);
        passed &= Check("check (LaunchPlan, a = " + a2 + ")", a2, hX, hY, hOut2);
        return passed ? 0 : 1;
    }

    // Host check, with NumPy's allclose tolerances (rtol 1e-5, atol 1e-8).
    private static bool Check(string what, float a, float[] hX, float[] hY, float[] hOut)
    {
        int bad = 0;
        double worst = 0;
        for (int i = 0; i < hOut.Length; i++)
        {
            float expected = a * hX[i] + hY[i];
            double error = Math.Abs((double)hOut[i] - expected);
            worst = Math.Max(worst, error);
            if (error > 1e-8 + 1e-5 * Math.Abs(expected))
                bad++;
        }
        if (bad != 0)
        {
            Console.WriteLine("{0}: FAILED ({1} of {2} elements outside tolerance, max error {3:G3})", what, bad, hOut.Length, worst);
            return false;
        }
        Console.WriteLine("{0}: PASSED ({1} elements, max error {2:G3})", what, hOut.Length, worst);
        return true;
    }

    // Device 0, or null with the reason when there is none (no driver, the
    // stub driver, or a driver that sees no GPU).
    private static Device FirstDevice(out string reason)
    {
        reason = null;
        try
        {
            if (Device.Count > 0)
                return Device.Get(0);
            reason = "the driver reports 0 devices";
        }
        catch (CudaException e)
        {
            reason = e.StatusName + ": " + e.Message;
        }
        return null;
    }
}
