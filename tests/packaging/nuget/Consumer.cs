// A program that uses cuabi as a NuGet consumer does: it references the
// Cuabi.dll of the installed package, which finds the package's libcuabi.so
// in its runtimes/linux-x64/native/. It says which library and assembly it
// loaded (CuabiLibrary.LoadedFrom, the assembly's location), compiles SAXPY
// with NVRTC, and runs it on device 0 where there is one.
//
//   Consumer.exe [--require-gpu]
//
// Exit status: 0 when SAXPY ran and checked out; 2 when there is no usable
// driver or device (after the compile), 1 with --require-gpu then, and 1 on
// any other failure.

using System;
using Cuabi;
using Cuabi.Interop;

public static class Consumer
{
    private const string Source = @"extern ""C"" __global__
void saxpy(float a, const float *x, const float *y, float *out, size_t n)
{
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  if (i < n) out[i] = a * x[i] + y[i];
}
";

    public static int Main(string[] args)
    {
        bool requireGpu = Array.IndexOf(args, "--require-gpu") >= 0;
        try
        {
            return Run(requireGpu);
        }
        catch (Exception e)
        {
            Console.Error.WriteLine("consumer: " + e.GetType().Name + ": " + e.Message);
            return 1;
        }
    }

    private static int Run(bool requireGpu)
    {
        Console.WriteLine("cuabi " + Cuda.VersionString);
        Console.WriteLine("library " + CuabiLibrary.LoadedFrom);
        Console.WriteLine("assembly " + typeof(Cuda).Assembly.GetName().Version + " " +
                          typeof(Cuda).Assembly.Location);

        using (var program = new Program(Source, "saxpy.cu"))
        {
            program.Compile("--gpu-architecture=compute_75");
            Console.WriteLine("compiled saxpy.cu: " + (program.Ptx.Contains(".entry saxpy") ? "PTX ok" : "no saxpy in the PTX"));
        }

        int count;
        try
        {
            count = Device.Count;
        }
        catch (CudaException e)
        {
            Console.WriteLine("no CUDA driver: " + e.StatusName);
            Console.WriteLine(e.Message);
            return requireGpu ? 1 : 2;
        }
        if (count == 0)
        {
            Console.WriteLine("no CUDA device");
            return requireGpu ? 1 : 2;
        }

        const int n = 1 << 20;
        var hostX = new float[n];
        var hostY = new float[n];
        for (int i = 0; i < n; i++)
        {
            hostX[i] = i % 1000;
            hostY[i] = 3 * (i % 7);
        }
        using (Device device = Device.Get(0))
        using (CudaModule module = device.Compile(Source))
        using (Kernel saxpy = module.GetKernel("saxpy"))
        using (CudaStream stream = device.CreateStream())
        using (DeviceBuffer<float> x = device.AllocateFrom(hostX))
        using (DeviceBuffer<float> y = device.AllocateFrom(hostY))
        using (DeviceBuffer<float> output = device.Allocate<float>(n))
        {
            Console.WriteLine("device 0: " + device.Name + ", compute capability " + device.ComputeCapability);
            saxpy.Launch(n / 256, 256, stream, 2.0f, x, y, output, (ulong)n);
            stream.Synchronize();
            float[] result = output.ToArray();
            for (int i = 0; i < n; i++)
            {
                float want = 2.0f * hostX[i] + hostY[i];
                if (result[i] != want)
                {
                    Console.WriteLine("SAXPY FAILED at " + i + ": " + result[i] + ", want " + want);
                    return 1;
                }
            }
        }
        Console.WriteLine("SAXPY ok: " + n + " elements");
        return 0;
    }
}
