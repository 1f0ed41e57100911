using System;
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

    /// <summary>Loaded device code. Kernels taken from it keep it alive.</summary>
    public sealed class CudaModule : IDisposable
    {
        private readonly SafeModuleHandle handle;

        internal CudaModule(SafeModuleHandle handle)
        {
            this.handle = handle;
        }

        /// <summary>The raw handle, for the <see cref="NativeMethods"/> layer.</summary>
        public SafeModuleHandle Handle
        {
            get { handle.ThrowIfClosed(this); return handle; }
        }

        /// <summary>True when <see cref="Device.Compile"/> served this module from the on-disk cache.</summary>
        public bool FromCache
        {
            get
            {
                int hit;
                Errors.Check(NativeMethods.cuabi_module_get_from_cache(Handle, out hit));
                return hit != 0;
            }
        }

        /// <summary>A kernel by its name, or by a name expression given at compile time.</summary>
        /// <param name="name">The kernel's (extern "C") name or name expression.</param>
        /// <exception cref="CudaException"><see cref="CudaStatus.NotFound"/> when the module has no such kernel.</exception>
        public Kernel GetKernel(string name)
        {
            if (name == null)
                throw new ArgumentNullException("name");
            SafeFunctionHandle function;
            Errors.Check(NativeMethods.cuabi_module_get_function(Handle, Utf8.Encode(name, "name"), out function));
            return new Kernel(function);
        }

        /// <summary>The lowered name of a name expression given at compile time.</summary>
        /// <param name="expression">The name expression.</param>
        public string GetLoweredName(string expression)
        {
            if (expression == null)
                throw new ArgumentNullException("expression");
            var h = Handle;
            byte[] e = Utf8.Encode(expression, "expression");
            return Errors.ReadString(delegate(byte[] b, ref UIntPtr s) { return NativeMethods.cuabi_module_get_lowered_name(h, e, b, ref s); });
        }

        /// <summary>A __device__ global: its address and size.</summary>
        /// <param name="name">The global's name.</param>
        /// <exception cref="CudaException"><see cref="CudaStatus.NotFound"/> when there is no such global.</exception>
        public ModuleGlobal GetGlobal(string name)
        {
            if (name == null)
                throw new ArgumentNullException("name");
            ulong ptr;
            UIntPtr bytes;
            Errors.Check(NativeMethods.cuabi_module_get_global(Handle, Utf8.Encode(name, "name"), out ptr, out bytes));
            return new ModuleGlobal(ptr, (long)bytes.ToUInt64());
        }

        /// <summary>Releases the module (kernels taken from it stay usable).</summary>
        public void Dispose()
        {
            handle.Dispose();
        }
    }
}
