using System;
using System.Collections.Generic;
using System.Collections.ObjectModel;
using Cuabi.Interop;

namespace Cuabi
{
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
    }
}
