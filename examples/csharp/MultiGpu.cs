// Several GPUs from one program, as examples/multi_gpu does in C and Python:
//
// 1. SAXPY split over every device, gathered on device 0 and checked.
// 2. A copy between every ordered pair of devices, with the path cuabi
//    reports (direct where peer access is enabled, else through host
//    memory), checked.
// 3. An event recorded on device 0's stream after a slow kernel orders a
//    stream of device 1, which copies what the kernel wrote: checked.
// 4. IPC across GPUs: this program on GPU 0 exports a buffer and an
//    interprocess event and starts itself as a child on GPU 1, which opens
//    the event on GPU 0, makes its own stream wait on it, opens the buffer
//    on GPU 1 (peer access where it can), checks it and writes 2 * x + 1
//    back; the parent checks every value.
//
// With one device it prints "MultiGpu: needs two devices, found 1" and exits
// 0; --one-gpu runs every step with two logical devices on GPU 0 (the IPC
// child on GPU 0). Exit status: 0 verified (or one device), 1 failure, 3 no
// CUDA device.

using System;
using System.Diagnostics;
using Cuabi;

public static class MultiGpu
{
    private const string Prog = "MultiGpu";
    private const string Source = @"
extern ""C"" __global__ void saxpy(float a, const float* x, const float* y, float* out,
                                 size_t n) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
       i += (size_t)gridDim.x * blockDim.x)
    out[i] = a * x[i] + y[i];
}
extern ""C"" __global__ void slow_fill(float* x, size_t n, long long cycles) {
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    const long long t0 = clock64();
    while (clock64() - t0 < cycles) {
    }
  }
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
       i += (size_t)gridDim.x * blockDim.x)
    x[i] = (float)(i % 1000) * 0.5f;
}
extern ""C"" __global__ void transform(float* x, size_t n) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
       i += (size_t)gridDim.x * blockDim.x)
    x[i] = 2.0f * x[i] + 1.0f;
}
";
    private const int Threads = 256;
    private const int ClockRate = 13; // CU_DEVICE_ATTRIBUTE_CLOCK_RATE, kHz

    public static int Main(string[] args)
    {
        try
        {
            if (args.Length > 0 && args[0] == "--child")
                return Child(args);
            return Parent(Array.IndexOf(args, "--one-gpu") >= 0);
        }
        catch (Exception e)
        {
            Console.Error.WriteLine(Prog + ": FAILED: " + e.GetType().Name + ": " + e.Message);
            return 1;
        }
    }

    private static int Blocks(long n)
    {
        return (int)Math.Max(1, Math.Min(4096, (n + Threads - 1) / Threads));
    }

    private static float Expected(long i)
    {
        return (i % 1000) * 0.5f;
    }

    private static string PathText(CopyPath path)
    {
        if (path == CopyPath.SameDevice) return "within one device";
        if (path == CopyPath.Peer) return "direct (peer access)";
        return "through host memory";
    }

    private static CudaModule Build(Device device)
    {
        using (var program = new Program(Source, "multi_gpu.cu"))
        {
            ComputeCapability cc = device.ComputeCapability;
            program.Compile("--gpu-architecture=compute_" + cc.Major + cc.Minor);
            return device.LoadModule(program.Ptx);
        }
    }

    private static int Parent(bool oneGpu)
    {
        int count;
        try
        {
            count = Device.Count;
        }
        catch (CudaException e)
        {
            Console.Error.WriteLine(Prog + ": no CUDA device: " + e.Message);
            return 3;
        }
        if (count == 0)
        {
            Console.Error.WriteLine(Prog + ": no CUDA device: the driver reports 0 devices");
            return 3;
        }
        if (count < 2 && !oneGpu)
        {
            Console.WriteLine(Prog + ": needs two devices, found " + count);
            return 0;
        }
        int ndev = oneGpu ? 2 : count;
        var devices = new Device[ndev];
        var streams = new CudaStream[ndev];
        var modules = new CudaModule[ndev];
        for (int i = 0; i < ndev; i++)
        {
            devices[i] = Device.Get(oneGpu ? 0 : i);
            streams[i] = devices[i].CreateStream();
            modules[i] = Build(devices[i]);
        }
        Console.WriteLine("{0}: {1} CUDA device(s), {2} logical device(s)", Prog, count, ndev);
        if (!oneGpu)
            for (int i = 0; i < ndev; i++)
                for (int j = 0; j < ndev; j++)
                    if (i != j && devices[i].CanAccessPeer(devices[j]))
                        devices[i].EnablePeerAccess(devices[j]);

        // 1. SAXPY split over every device, gathered on device 0.
        const int n = 1 << 22;
        const float a = 2.5f;
        var hx = new float[n];
        var hy = new float[n];
        for (int i = 0; i < n; i++)
        {
            hx[i] = (i % 977) * 0.25f;
            hy[i] = (i % 613) * 0.125f;
        }
        var gathered = new float[n];
        var parts = new DeviceBuffer<float>[ndev];
        for (int i = 0; i < ndev; i++)
        {
            int lo = (int)((long)n * i / ndev), hi = (int)((long)n * (i + 1) / ndev), len = hi - lo;
            using (DeviceBuffer<float> x = devices[i].Allocate<float>(len))
            using (DeviceBuffer<float> y = devices[i].Allocate<float>(len))
            using (DeviceBuffer<float> on0 = devices[0].Allocate<float>(len))
            using (Kernel saxpy = modules[i].GetKernel("saxpy"))
            {
                x.CopyFrom(hx, lo, 0, len);
                y.CopyFrom(hy, lo, 0, len);
                parts[i] = devices[i].Allocate<float>(len);
                saxpy.Launch(Blocks(len), Threads, streams[i], a, x, y, parts[i], (ulong)len);
                streams[i].Synchronize();
                on0.CopyFrom(parts[i]);
                var part = new float[len];
                on0.CopyTo(part);
                Array.Copy(part, 0, gathered, lo, len);
            }
        }
        int wrong = 0;
        for (int i = 0; i < n; i++)
            if (gathered[i] != a * hx[i] + hy[i]) wrong++;
        Console.WriteLine("{0}: SAXPY of {1} elements on {2} devices, gathered on device 0: {3}",
                          Prog, n, ndev, wrong == 0 ? "verified" : "FAILED");
        if (wrong != 0) return 1;

        // 2. A copy between every ordered pair, with its path.
        for (int i = 0; i < ndev; i++)
            for (int j = 0; j < ndev; j++)
            {
                if (i == j) continue;
                using (DeviceBuffer<float> dst = devices[j].Allocate<float>(parts[i].Count))
                {
                    CopyPath path = dst.GetCopyPathFrom(parts[i]);
                    dst.CopyFrom(parts[i]);
                    var want = new float[parts[i].Count];
                    var got = new float[parts[i].Count];
                    parts[i].CopyTo(want);
                    dst.CopyTo(got);
                    bool same = true;
                    for (int k = 0; k < want.Length && same; k++) same = want[k] == got[k];
                    Console.WriteLine("  copy device {0} -> device {1}: {2}, {3}", i, j, PathText(path),
                                      same ? "verified" : "FAILED");
                    if (!same) return 1;
                }
            }

        // 3. Device 1's stream waits on an event recorded on device 0.
        const int m = 1 << 20;
        long cycles = (long)Math.Max(1, devices[0].GetAttribute(ClockRate)) * 50;
        using (DeviceBuffer<float> a0 = devices[0].Allocate<float>(m))
        using (DeviceBuffer<float> a1 = devices[1].Allocate<float>(m))
        using (CudaEvent ready = devices[0].CreateEvent(EventFlags.DisableTiming))
        using (Kernel slowFill = modules[0].GetKernel("slow_fill"))
        {
            a1.CopyFrom(new float[m]);
            slowFill.Launch(Blocks(m), Threads, streams[0], a0, (ulong)m, cycles);
            ready.Record(streams[0]);
            streams[1].WaitEvent(ready);
            a1.CopyFromAsync(a0, streams[1]);
            streams[1].Synchronize();
            var seen = new float[m];
            a1.CopyTo(seen);
            int stale = 0;
            for (int i = 0; i < m; i++)
                if (seen[i] != Expected(i)) stale++;
            Console.WriteLine("{0}: device 1's stream waited on an event recorded on device 0: {1}", Prog,
                              stale == 0 ? "all finished values" : "FAILED");
            if (stale != 0) return 1;

            // 4. IPC across GPUs: a child process on GPU 1 (GPU 0 with --one-gpu).
            int childGpu = oneGpu ? 0 : 1;
            using (DeviceBuffer<float> shared = devices[0].Allocate<float>(m))
            using (CudaEvent done = devices[0].CreateEvent(EventFlags.Interprocess | EventFlags.DisableTiming))
            {
                slowFill.Launch(Blocks(m), Threads, streams[0], shared, (ulong)m, cycles);
                done.Record(streams[0]);
                int status = RunChild(childGpu, m, shared.GetIpcHandle(), done.GetIpcHandle());
                streams[0].Synchronize();
                if (status != 0)
                {
                    Console.Error.WriteLine("{0}: the child (GPU {1}) failed: exit {2}", Prog, childGpu, status);
                    return 1;
                }
                shared.CopyTo(seen);
                wrong = 0;
                for (int i = 0; i < m; i++)
                    if (seen[i] != 2.0f * Expected(i) + 1.0f) wrong++;
                Console.WriteLine("{0}: the child on GPU {1} read GPU 0's buffer and wrote 2 * x + 1: {2}", Prog,
                                  childGpu, wrong == 0 ? "verified" : "FAILED");
                if (wrong != 0) return 1;
            }
        }
        Console.WriteLine("{0}: PASSED on {1} devices", Prog, ndev);
        return 0;
    }

    private static int RunChild(int gpu, int length, byte[] buffer, byte[] ev)
    {
        // This very program (a bundled executable, or mono with the assembly).
        string self = Process.GetCurrentProcess().MainModule.FileName;
        string arguments = "--child " + gpu + " " + length + " " + Hex(buffer) + " " + Hex(ev);
        string assembly = typeof(MultiGpu).Assembly.Location;
        if (!string.IsNullOrEmpty(assembly) && System.IO.File.Exists(assembly) &&
            System.IO.Path.GetFileName(self).StartsWith("mono", StringComparison.Ordinal))
            arguments = "\"" + assembly + "\" " + arguments;
        var info = new ProcessStartInfo(self, arguments) { UseShellExecute = false };
        using (Process child = Process.Start(info))
        {
            if (!child.WaitForExit(120000))
            {
                child.Kill();
                return -1;
            }
            return child.ExitCode;
        }
    }

    private static string Hex(byte[] bytes)
    {
        return BitConverter.ToString(bytes).Replace("-", "");
    }

    private static byte[] FromHex(string text)
    {
        var bytes = new byte[text.Length / 2];
        for (int i = 0; i < bytes.Length; i++) bytes[i] = Convert.ToByte(text.Substring(2 * i, 2), 16);
        return bytes;
    }

    private static int Child(string[] args)
    {
        if (args.Length != 5) throw new ArgumentException("--child needs GPU, LENGTH, BUFFER_HEX and EVENT_HEX");
        int gpu = int.Parse(args[1]);
        int len = int.Parse(args[2]);
        using (Device d0 = Device.Get(0))
        using (Device dc = Device.Get(gpu))
        using (CudaStream stream = dc.CreateStream())
        using (CudaEvent ready = CudaEvent.OpenIpc(d0, FromHex(args[4])))
        {
            // The event opened on the exporter's GPU, waited on by this GPU's stream.
            stream.WaitEvent(ready);
            // Opened on this GPU where it can reach GPU 0's memory (peer
            // access), else on GPU 0, where it lives.
            Device opener = dc;
            if (gpu != 0)
            {
                if (dc.CanAccessPeer(d0))
                    dc.EnablePeerAccess(d0);
                else
                {
                    Console.WriteLine("{0} (child): GPU {1} cannot reach GPU 0's memory; opened on GPU 0", Prog, gpu);
                    opener = d0;
                }
            }
            using (DeviceBuffer<float> shared = DeviceBuffer<float>.OpenIpc(opener, FromHex(args[3])))
            using (DeviceBuffer<float> local = dc.Allocate<float>(len))
            using (CudaModule module = Build(dc))
            using (Kernel transform = module.GetKernel("transform"))
            {
                if (shared.Count != len)
                    throw new InvalidOperationException("the opened buffer holds " + shared.Count + " floats, not " + len);
                CopyPath path = local.GetCopyPathFrom(shared);
                local.CopyFromAsync(shared, stream);
                stream.Synchronize();
                var seen = new float[len];
                local.CopyTo(seen);
                int wrong = 0;
                for (int i = 0; i < len; i++)
                    if (seen[i] != Expected(i)) wrong++;
                Console.WriteLine("{0} (child, GPU {1}): buffer opened on GPU {2}, read {3}: {4}", Prog, gpu,
                                  shared.DeviceOrdinal, PathText(path), wrong == 0 ? "every value as written" : "values wrong");
                if (wrong != 0) return 1;
                if (shared.DeviceOrdinal == gpu)
                    transform.Launch(Blocks(len), Threads, stream, shared, (ulong)len); // in place, over the link
                else
                {
                    transform.Launch(Blocks(len), Threads, stream, local, (ulong)len);
                    shared.CopyFromAsync(local, stream);
                }
                stream.Synchronize();
            }
        }
        return 0;
    }
}
