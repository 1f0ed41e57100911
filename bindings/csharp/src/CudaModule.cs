using System;
using System.Collections.Generic;
using System.Collections.ObjectModel;
using Cuabi.Interop;

namespace Cuabi
{
    /// <summary>A __device__ global variable of a module: its device address and size.</summary>
    public struct ModuleGlobal
    {
        /// <summary>Creates the description.</summary>
        /// <param name="devicePointer">The device address.</param>
        /// <param name="sizeInBytes">The size in bytes.</param>
        public ModuleGlobal(ulong devicePointer, long sizeInBytes)
        {
            DevicePointer = devicePointer;
            SizeInBytes = sizeInBytes;
        }

        /// <summary>The device address.</summary>
        public ulong DevicePointer { get; private set; }

        /// <summary>The size in bytes.</summary>
        public long SizeInBytes { get; private set; }
    }

    /// <summary>A kernel of a module (<see cref="CudaModule.Kernels"/>): its C++ name and its symbol.</summary>
    public struct ModuleKernel
    {
        /// <summary>Creates the description.</summary>
        /// <param name="name">The demangled name.</param>
        /// <param name="symbol">The symbol in the image.</param>
        public ModuleKernel(string name, string symbol)
        {
            Name = name;
            Symbol = symbol;
        }

        /// <summary>
        /// As the C++ demangler writes it: "doublify(float*)", and for a
        /// template instance with its return type,
        /// "void ops::scale&lt;float&gt;(float*, float)"; an extern "C"
        /// kernel's name as it is.
        /// </summary>
        public string Name { get; private set; }

        /// <summary>The symbol in the image ("_Z8doublifyPf"), as the driver names the kernel.</summary>
        public string Symbol { get; private set; }

        /// <summary>"Name (Symbol)", or the name alone when they are the same.</summary>
        public override string ToString()
        {
            return Name == Symbol ? Name : Name + " (" + Symbol + ")";
        }
    }

    /// <summary>Loaded device code. Kernels taken from it keep it alive.</summary>
    public sealed partial class CudaModule : IDisposable
    {
        private ReadOnlyCollection<ModuleKernel> kernels;

        /// <summary>The name of kernel <paramref name="index"/> (0 to <see cref="KernelCount"/> - 1, in the driver's order).</summary>
        /// <param name="index">The kernel's index.</param>
        /// <param name="form">Demangled (as C++ writes it) or the symbol in the image.</param>
        /// <exception cref="ArgumentOutOfRangeException"><paramref name="index"/> is negative.</exception>
        /// <exception cref="CudaException"><see cref="CudaStatus.OutOfRange"/> for an index past the last kernel.</exception>
        public string GetKernelName(int index, NameForm form = NameForm.Demangled)
        {
            Ranges.NotNegative(index, "index");
            return GetKernelName((long)index, form);
        }

        /// <summary>
        /// Every kernel of the module, with its demangled name and its symbol
        /// (read once, then kept). A C++ kernel is found by
        /// <see cref="GetKernel"/> under its plain or qualified name when no
        /// other kernel has it.
        /// </summary>
        /// <exception cref="CudaException"><see cref="CudaStatus.NotSupported"/> with a driver older than 12.4.</exception>
        public IReadOnlyList<ModuleKernel> Kernels
        {
            get
            {
                var list = kernels;
                if (list == null)
                {
                    int count = KernelCount;
                    var items = new ModuleKernel[count];
                    for (int i = 0; i < count; i++)
                        items[i] = new ModuleKernel(GetKernelName(i, NameForm.Demangled), GetKernelName(i, NameForm.Symbol));
                    kernels = list = new ReadOnlyCollection<ModuleKernel>(items);
                }
                return list;
            }
        }

        /// <summary>
        /// A kernel by its name: an extern "C" name, a name expression given at
        /// compile time, the symbol, or a C++ kernel's plain ("doublify") or
        /// qualified ("ops::scale") name when no other kernel of the module
        /// has it.
        /// </summary>
        /// <param name="name">The kernel's name.</param>
        /// <exception cref="CudaException">
        /// <see cref="CudaStatus.NotFound"/> when the module has no such kernel (the message lists its kernels);
        /// <see cref="CudaStatus.InvalidArgument"/> when several kernels have the name (the message lists them).
        /// </exception>
        public Kernel GetKernel(string name)
        {
            return GetFunction(name);
        }

        /// <summary>A __device__ global: its address and size.</summary>
        /// <param name="name">The global's name.</param>
        /// <exception cref="CudaException"><see cref="CudaStatus.NotFound"/> when there is no such global.</exception>
        public ModuleGlobal GetGlobal(string name)
        {
            ulong ptr;
            long bytes;
            GetGlobal(name, out ptr, out bytes);
            return new ModuleGlobal(ptr, bytes);
        }
    }
}
