using System;
using System.Collections.Generic;
using System.Collections.ObjectModel;
using System.Runtime.InteropServices;
using Cuabi.Interop;

namespace Cuabi
{
    /// <summary>Grid or block dimensions.</summary>
    public struct Dim3
    {
        /// <summary>Creates dimensions.</summary>
        /// <param name="x">X extent.</param>
        /// <param name="y">Y extent.</param>
        /// <param name="z">Z extent.</param>
        public Dim3(uint x, uint y = 1, uint z = 1)
        {
            X = x;
            Y = y;
            Z = z;
        }

        /// <summary>X extent.</summary>
        public uint X { get; private set; }
        /// <summary>Y extent.</summary>
        public uint Y { get; private set; }
        /// <summary>Z extent.</summary>
        public uint Z { get; private set; }

        /// <summary>A one-dimensional extent.</summary>
        /// <param name="x">X extent (negative values are refused).</param>
        public static implicit operator Dim3(int x)
        {
            if (x < 0)
                throw new ArgumentOutOfRangeException("x", x, "a dimension cannot be negative");
            return new Dim3((uint)x);
        }

        /// <summary>"(x, y, z)".</summary>
        public override string ToString()
        {
            return "(" + X + ", " + Y + ", " + Z + ")";
        }
    }

    /// <summary>Grid, block and dynamic shared memory of a launch.</summary>
    public struct LaunchConfig
    {
        /// <summary>Creates a launch configuration.</summary>
        /// <param name="grid">Blocks in the grid.</param>
        /// <param name="block">Threads in a block.</param>
        /// <param name="sharedMemoryBytes">Dynamic shared memory per block.</param>
        public LaunchConfig(Dim3 grid, Dim3 block, uint sharedMemoryBytes = 0)
        {
            Grid = grid;
            Block = block;
            SharedMemoryBytes = sharedMemoryBytes;
        }

        /// <summary>Blocks in the grid.</summary>
        public Dim3 Grid { get; set; }
        /// <summary>Threads in a block.</summary>
        public Dim3 Block { get; set; }
        /// <summary>Dynamic shared memory per block, in bytes.</summary>
        public uint SharedMemoryBytes { get; set; }

        internal LaunchConfigNative ToNative()
        {
            var c = LaunchConfigNative.Create();
            c.grid_x = Grid.X;
            c.grid_y = Grid.Y;
            c.grid_z = Grid.Z;
            c.block_x = Block.X;
            c.block_y = Block.Y;
            c.block_z = Block.Z;
            c.shared_mem_bytes = SharedMemoryBytes;
            return c;
        }
    }

    /// <summary>One kernel parameter as the driver reports it: where it sits in the argument block and its size.</summary>
    public struct KernelParameter
    {
        /// <summary>Creates a parameter description.</summary>
        /// <param name="index">Position in the kernel's signature.</param>
        /// <param name="offset">Byte offset in the packed argument block.</param>
        /// <param name="size">Size in bytes.</param>
        public KernelParameter(int index, int offset, int size)
        {
            Index = index;
            Offset = offset;
            Size = size;
        }

        /// <summary>Position in the kernel's signature, from 0.</summary>
        public int Index { get; private set; }
        /// <summary>Byte offset in the packed argument block.</summary>
        public int Offset { get; private set; }
        /// <summary>Size in bytes.</summary>
        public int Size { get; private set; }

        /// <summary>"#index: size bytes at offset".</summary>
        public override string ToString()
        {
            return "#" + Index + ": " + Size + " bytes at " + Offset;
        }
    }

    /// <summary>
    /// A kernel of a module, launched with typed arguments packed into one
    /// block at the kernel's parameter offsets (one native call per launch).
    /// </summary>
    public sealed class Kernel : IDisposable
    {
        // Above this the argument block is taken from the heap instead of the stack.
        private const int StackBlockLimit = 1024;

        private readonly SafeFunctionHandle handle;
        private volatile Layout layout;
        private string name;

        private sealed class Layout
        {
            internal KernelParameter[] Parameters;
            internal int BlockSize;
        }

        internal Kernel(SafeFunctionHandle handle)
        {
            this.handle = handle;
        }

        /// <summary>The raw handle, for the <see cref="NativeMethods"/> layer.</summary>
        public SafeFunctionHandle Handle
        {
            get { handle.ThrowIfClosed(this); return handle; }
        }

        /// <summary>The name the kernel was taken by (its extern "C" name or the name expression).</summary>
        public string Name
        {
            get
            {
                if (name == null)
                {
                    var h = Handle;
                    name = Errors.ReadString(delegate(byte[] b, ref UIntPtr s) { return NativeMethods.cuabi_function_get_name(h, b, ref s); });
                }
                return name;
            }
        }

        /// <summary>The kernel's parameters, as the driver reports them (driver 12.4 or newer).</summary>
        /// <exception cref="CudaException"><see cref="CudaStatus.NotSupported"/> with an older driver.</exception>
        public ReadOnlyCollection<KernelParameter> Parameters
        {
            get { return Array.AsReadOnly(GetLayout().Parameters); }
        }

        /// <summary>The byte length of the packed argument block.</summary>
        public int ArgumentBlockSize
        {
            get { return GetLayout().BlockSize; }
        }

        /// <summary>Any CUfunction_attribute.</summary>
        /// <param name="attribute">The attribute.</param>
        public int GetAttribute(FunctionAttribute attribute)
        {
            int value;
            Errors.Check(NativeMethods.cuabi_function_get_attribute(Handle, (int)attribute, out value));
            return value;
        }

        /// <summary>Sets a settable CUfunction_attribute (e.g. <see cref="FunctionAttribute.MaxDynamicSharedSizeBytes"/>).</summary>
        /// <param name="attribute">The attribute.</param>
        /// <param name="value">Its new value.</param>
        public void SetAttribute(FunctionAttribute attribute, int value)
        {
            Errors.Check(NativeMethods.cuabi_function_set_attribute(Handle, (int)attribute, value));
        }

        /// <summary>Launches the kernel.</summary>
        /// <param name="grid">Blocks in the grid.</param>
        /// <param name="block">Threads in a block.</param>
        /// <param name="stream">The stream, or null for the device's default stream.</param>
        /// <param name="args">One argument per kernel parameter; see <see cref="Launch(LaunchConfig, CudaStream, object[])"/>.</param>
        public void Launch(Dim3 grid, Dim3 block, CudaStream stream, params object[] args)
        {
            Launch(new LaunchConfig(grid, block), stream, args);
        }

        /// <summary>
        /// Launches the kernel. Each argument must have exactly the size of
        /// its parameter: float, double, sbyte/byte, short/ushort, int/uint,
        /// long/ulong (for size_t), bool (1 byte), char (2 bytes),
        /// IntPtr/UIntPtr, enums (their underlying type), a
        /// <see cref="DeviceBuffer{T}"/> (its 8-byte device pointer), or any
        /// other struct (its marshalled layout; declare it
        /// [StructLayout(LayoutKind.Sequential)] to match the C struct).
        /// </summary>
        /// <param name="config">Grid, block and dynamic shared memory.</param>
        /// <param name="stream">The stream, or null for the device's default stream.</param>
        /// <param name="args">One argument per kernel parameter.</param>
        /// <exception cref="ArgumentException">
        /// The argument count differs from the parameter count, or an argument's
        /// size differs from its parameter's (e.g. a 4-byte uint for a size_t);
        /// the message names the parameter. Nothing is launched.
        /// </exception>
        /// <exception cref="CudaException">The library refused or the driver failed the launch.</exception>
        public unsafe void Launch(LaunchConfig config, CudaStream stream, params object[] args)
        {
            var h = Handle;
            var streamHandle = stream == null ? SafeStreamHandle.Null : stream.Handle;
            Layout l = GetLayout();
            var native = config.ToNative();
            var held = new List<SafeHandle>();
            try
            {
                if (l.BlockSize <= StackBlockLimit)
                {
                    byte* block = stackalloc byte[Math.Max(l.BlockSize, 1)];
                    ArgumentPacker.Pack(this, l.Parameters, args, block, l.BlockSize, held);
                    Errors.Check(NativeMethods.cuabi_launch_packed(h, ref native, streamHandle,
                        l.BlockSize == 0 ? IntPtr.Zero : (IntPtr)block, (UIntPtr)(uint)l.BlockSize));
                }
                else
                {
                    var heap = new byte[l.BlockSize];
                    fixed (byte* block = heap)
                    {
                        ArgumentPacker.Pack(this, l.Parameters, args, block, l.BlockSize, held);
                        Errors.Check(NativeMethods.cuabi_launch_packed(h, ref native, streamHandle, (IntPtr)block,
                            (UIntPtr)(uint)l.BlockSize));
                    }
                }
            }
            finally
            {
                foreach (var s in held)
                    s.DangerousRelease();
            }
        }

        /// <summary>Releases the kernel handle.</summary>
        public void Dispose()
        {
            handle.Dispose();
        }

        /// <summary>The kernel's name.</summary>
        public override string ToString()
        {
            return handle.IsClosed ? "Kernel (disposed)" : "Kernel " + Name;
        }

        private Layout GetLayout()
        {
            Layout l = layout;
            if (l != null)
                return l;
            var h = Handle;
            UIntPtr count, blockSize;
            Errors.Check(NativeMethods.cuabi_function_get_param_count(h, out count));
            Errors.Check(NativeMethods.cuabi_function_get_args_size(h, out blockSize));
            var parameters = new KernelParameter[(int)count.ToUInt64()];
            for (int i = 0; i < parameters.Length; i++)
            {
                UIntPtr offset, size;
                Errors.Check(NativeMethods.cuabi_function_get_param_info(h, (UIntPtr)(uint)i, out offset, out size));
                parameters[i] = new KernelParameter(i, (int)offset.ToUInt64(), (int)size.ToUInt64());
            }
            l = new Layout { Parameters = parameters, BlockSize = (int)blockSize.ToUInt64() };
            layout = l;
            return l;
        }
    }

    /// <summary>Writes typed launch arguments into the packed block at the parameters' offsets.</summary>
    internal static class ArgumentPacker
    {
        /// <summary>
        /// Packs <paramref name="args"/> into <paramref name="block"/> (zeroed
        /// first). Device buffers are add-ref'd into <paramref name="held"/>
        /// so that they cannot be released before the launch call returns.
        /// </summary>
        internal static unsafe void Pack(object kernel, KernelParameter[] parameters, object[] args, byte* block,
            int blockSize, List<SafeHandle> held)
        {
            if (args == null)
                args = new object[0];
            if (args.Length != parameters.Length)
                throw new ArgumentException(string.Format(
                    "{0} takes {1} parameter(s), but {2} argument(s) were given; nothing was launched",
                    Describe(kernel), parameters.Length, args.Length), "args");
            for (int i = 0; i < blockSize; i++)
                block[i] = 0;
            for (int i = 0; i < args.Length; i++)
            {
                object a = args[i];
                KernelParameter p = parameters[i];
                if (a == null)
                    throw new ArgumentNullException("args[" + i + "]", string.Format(
                        "{0}: argument {1} is null; pass IntPtr.Zero for a NULL pointer parameter", Describe(kernel), i));
                int size = SizeOf(a);
                if (size < 0)
                    throw new ArgumentException(string.Format(
                        "{0}: argument {1} is a {2}, which cannot be passed by value to a kernel",
                        Describe(kernel), i, a.GetType().FullName), "args[" + i + "]");
                if (size != p.Size)
                    throw new ArgumentException(string.Format(
                        "{0} parameter {1} is {4} bytes, but argument {1} is a {2} of {3} bytes{5}; nothing was launched",
                        Describe(kernel), i, a.GetType().FullName, size, p.Size,
                        p.Size == 8 && size == 4 ? " (a size_t or 64-bit parameter needs a long or ulong)" : ""),
                        "args[" + i + "]");
                if (p.Offset < 0 || p.Offset + size > blockSize)
                    throw new ArgumentException(string.Format(
                        "{0}: parameter {1} lies outside the {2}-byte argument block", Describe(kernel), i, blockSize));
                Write(a, block + p.Offset, held);
            }
        }

        private static string Describe(object kernel)
        {
            var k = kernel as Kernel;
            if (k != null)
            {
                try
                {
                    return "kernel '" + k.Name + "'";
                }
                catch (Exception)
                {
                    return "kernel";
                }
            }
            return kernel == null ? "kernel" : "kernel '" + kernel + "'";
        }

        /// <summary>The argument's size in the block, or -1 when it cannot be passed.</summary>
        internal static int SizeOf(object a)
        {
            if (a is DeviceMemory)
                return 8;
            Type t = a.GetType();
            switch (Type.GetTypeCode(t))
            {
                case TypeCode.Boolean:
                case TypeCode.SByte:
                case TypeCode.Byte:
                    return 1;
                case TypeCode.Char:
                case TypeCode.Int16:
                case TypeCode.UInt16:
                    return 2;
                case TypeCode.Int32:
                case TypeCode.UInt32:
                case TypeCode.Single:
                    return 4;
                case TypeCode.Int64:
                case TypeCode.UInt64:
                case TypeCode.Double:
                    return 8;
            }
            if (t == typeof(IntPtr) || t == typeof(UIntPtr))
                return IntPtr.Size;
            if (!t.IsValueType)
                return -1;
            try
            {
                return Marshal.SizeOf(t);
            }
            catch (ArgumentException)
            {
                return -1; // a generic or otherwise unmarshallable struct
            }
        }

        private static unsafe void Write(object a, byte* dst, List<SafeHandle> held)
        {
            var memory = a as DeviceMemory;
            if (memory != null)
            {
                SafeBufferHandle h = memory.Handle;
                bool added = false;
                h.DangerousAddRef(ref added);
                if (added)
                    held.Add(h);
                *(ulong*)dst = memory.DevicePointer;
                return;
            }
            Type t = a.GetType();
            switch (Type.GetTypeCode(t))
            {
                case TypeCode.Boolean: *dst = (bool)a ? (byte)1 : (byte)0; return;
                case TypeCode.SByte: *(sbyte*)dst = (sbyte)a; return;
                case TypeCode.Byte: *dst = (byte)a; return;
                case TypeCode.Char: *(char*)dst = (char)a; return;
                case TypeCode.Int16: *(short*)dst = (short)a; return;
                case TypeCode.UInt16: *(ushort*)dst = (ushort)a; return;
                case TypeCode.Int32: *(int*)dst = (int)a; return;
                case TypeCode.UInt32: *(uint*)dst = (uint)a; return;
                case TypeCode.Single: *(float*)dst = (float)a; return;
                case TypeCode.Int64: *(long*)dst = (long)a; return;
                case TypeCode.UInt64: *(ulong*)dst = (ulong)a; return;
                case TypeCode.Double: *(double*)dst = (double)a; return;
            }
            if (t == typeof(IntPtr))
            {
                *(IntPtr*)dst = (IntPtr)a;
                return;
            }
            if (t == typeof(UIntPtr))
            {
                *(UIntPtr*)dst = (UIntPtr)a;
                return;
            }
            Marshal.StructureToPtr(a, (IntPtr)dst, false);
        }
    }
}
