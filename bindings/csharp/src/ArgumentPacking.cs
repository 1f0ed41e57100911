// Writing typed kernel arguments into an argument block at the kernel's
// parameter offsets: one writer per argument type (made once per type and
// kept). The library checks an argument signature, the byte size of each
// argument, once (cuabi_function_check_arg_sizes, or _check_arg_size for one
// argument); the layout then keeps, per parameter, the writer of the type it
// accepted last, so that a launch with the same argument types as the one
// before costs one type comparison and one store per argument, with nothing
// allocated and no native call.

using System;
using System.Collections.Generic;
using System.Runtime.InteropServices;
using Cuabi.Interop;

namespace Cuabi
{
    /// <summary>How values of one .NET type are written into an argument block.</summary>
    internal sealed class ArgumentWriter
    {
        internal enum Kinds
        {
            Invalid,
            Memory,
            Object,
            // The numbers, valued and ordered as Type.GetTypeCode names them.
            Boolean = TypeCode.Boolean,
            Char,
            SByte,
            Byte,
            Int16,
            UInt16,
            Int32,
            UInt32,
            Int64,
            UInt64,
            Single,
            Double,
            IntPtr,
            UIntPtr,
            Struct,
        }

        // The bytes of each number, Boolean to Double in Type.GetTypeCode's order.
        private static readonly int[] NumberSizes = { 1, 2, 1, 1, 2, 2, 4, 4, 8, 8, 4, 8 };

        private static readonly Dictionary<Type, ArgumentWriter> Known = new Dictionary<Type, ArgumentWriter>();

        /// <summary>The type this writer writes (an exact type, not a base type).</summary>
        internal readonly Type Type;

        /// <summary>Bytes written, or -1 when values of the type cannot be passed to a kernel.</summary>
        internal readonly int Size;

        internal readonly Kinds Kind;

        private ArgumentWriter(Type type, Kinds kind, int size)
        {
            Type = type;
            Kind = kind;
            Size = size;
        }

        /// <summary>The writer for values of exactly <paramref name="type"/> (made once, then shared).</summary>
        internal static ArgumentWriter For(Type type)
        {
            lock (Known)
            {
                ArgumentWriter w;
                if (!Known.TryGetValue(type, out w))
                {
                    w = Make(type);
                    Known.Add(type, w);
                }
                return w;
            }
        }

        private static ArgumentWriter Make(Type t)
        {
            if (typeof(DeviceMemory).IsAssignableFrom(t))
                return new ArgumentWriter(t, Kinds.Memory, 8);
            if (typeof(IArgumentObject).IsAssignableFrom(t)) // textures and surfaces: their 8-byte object
                return new ArgumentWriter(t, Kinds.Object, 8);
            TypeCode code = Type.GetTypeCode(t); // an enum answers its underlying type's code
            if (code >= TypeCode.Boolean && code <= TypeCode.Double)
                return new ArgumentWriter(t, (Kinds)code, NumberSizes[code - TypeCode.Boolean]);
            if (t == typeof(IntPtr))
                return new ArgumentWriter(t, Kinds.IntPtr, IntPtr.Size);
            if (t == typeof(UIntPtr))
                return new ArgumentWriter(t, Kinds.UIntPtr, UIntPtr.Size);
            if (!t.IsValueType || t.IsPrimitive || !PlainData.Is(t))
                return new ArgumentWriter(t, Kinds.Invalid, -1); // a class, or a struct holding references
            try
            {
                return new ArgumentWriter(t, Kinds.Struct, Marshal.SizeOf(t));
            }
            catch (ArgumentException)
            {
                return new ArgumentWriter(t, Kinds.Invalid, -1); // a generic or otherwise unmarshallable struct
            }
        }

        /// <summary>Writes <paramref name="a"/>, a value of exactly <see cref="Type"/>, at <paramref name="dst"/>.</summary>
        /// <exception cref="ObjectDisposedException">Device memory, a texture or a surface that was disposed.</exception>
        internal unsafe void Write(object a, byte* dst)
        {
            switch (Kind)
            {
                case Kinds.Memory: *(ulong*)dst = ((DeviceMemory)a).LaunchPointer; return;
                case Kinds.Object: *(ulong*)dst = ((IArgumentObject)a).LaunchValue; return;
                case Kinds.Single: *(float*)dst = (float)a; return;
                case Kinds.Int32: *(int*)dst = (int)a; return;
                case Kinds.UInt32: *(uint*)dst = (uint)a; return;
                case Kinds.Int64: *(long*)dst = (long)a; return;
                case Kinds.UInt64: *(ulong*)dst = (ulong)a; return;
                case Kinds.Double: *(double*)dst = (double)a; return;
                case Kinds.IntPtr: *(IntPtr*)dst = (IntPtr)a; return;
                case Kinds.UIntPtr: *(UIntPtr*)dst = (UIntPtr)a; return;
                case Kinds.Boolean: *dst = (bool)a ? (byte)1 : (byte)0; return;
                case Kinds.SByte: *(sbyte*)dst = (sbyte)a; return;
                case Kinds.Byte: *dst = (byte)a; return;
                case Kinds.Char: *(char*)dst = (char)a; return;
                case Kinds.Int16: *(short*)dst = (short)a; return;
                case Kinds.UInt16: *(ushort*)dst = (ushort)a; return;
                case Kinds.Struct: Marshal.StructureToPtr(a, (IntPtr)dst, false); return;
            }
            throw new InvalidOperationException("no writer for " + Type.FullName);
        }
    }

    /// <summary>
    /// A kernel's parameters as the argument block holds them, with the
    /// writer the library accepted last for each parameter. Shared by a
    /// kernel and its plans; safe to use from several threads at once.
    /// </summary>
    internal sealed class ArgumentLayout
    {
        private static readonly object[] NoArguments = new object[0];

        /// <summary>The kernel, whose parameters the library checks arguments against.</summary>
        internal readonly SafeFunctionHandle Function;
        internal readonly KernelParameter[] Parameters;
        internal readonly int BlockSize;
        internal readonly int[] Offsets;

        /// <summary>
        /// Per parameter, the writer of the type the library accepted last for
        /// it (null: none yet). Each entry is replaced whole (a reference
        /// store), so a reader sees the old writer or the new one, each
        /// accepted for its parameter.
        /// </summary>
        internal readonly ArgumentWriter[] Accepted;

        internal ArgumentLayout(SafeFunctionHandle function, KernelParameter[] parameters, int blockSize)
        {
            Function = function;
            Parameters = parameters;
            BlockSize = blockSize;
            Offsets = new int[parameters.Length];
            Accepted = new ArgumentWriter[parameters.Length];
            for (int i = 0; i < parameters.Length; i++)
                Offsets[i] = parameters[i].Offset;
        }

        /// <summary>
        /// Writes every argument at its parameter's offset. A signature the
        /// library has not accepted is checked first (<see cref="Check"/>); on
        /// a failure the arguments before the failing one may already be written.
        /// </summary>
        internal unsafe void Write(object[] args, byte* block)
        {
            if (args == null)
                args = NoArguments;
            ArgumentWriter[] w = Accepted;
            int[] off = Offsets;
            if (args.Length == w.Length)
            {
                int i = 0;
                for (; i < args.Length; i++)
                {
                    object a = args[i];
                    ArgumentWriter writer = w[i];
                    if (a == null || writer == null || !ReferenceEquals(writer.Type, a.GetType()))
                        break;
                    writer.Write(a, block + off[i]);
                }
                if (i == args.Length)
                    return;
            }
            ArgumentWriter[] writers = Check(args);
            for (int i = 0; i < writers.Length; i++)
                writers[i].Write(args[i], block + off[i]);
        }

        /// <summary>
        /// The writer of each argument, writing nothing. A signature not
        /// accepted before is checked: null and types that cannot be passed
        /// here, the count and every size by the library, whose message names
        /// the kernel and the parameter.
        /// </summary>
        /// <exception cref="ArgumentNullException">An argument is null.</exception>
        /// <exception cref="ArgumentException">A type cannot be passed, or the library refused the signature.</exception>
        internal ArgumentWriter[] Check(object[] args)
        {
            if (args == null)
                args = NoArguments;
            var writers = new ArgumentWriter[args.Length];
            bool accepted = args.Length == Accepted.Length;
            for (int i = 0; i < args.Length; i++)
            {
                object a = args[i];
                if (a == null)
                    throw new ArgumentNullException("args[" + i + "]",
                        "argument " + i + " is null; pass IntPtr.Zero for a NULL pointer parameter");
                ArgumentWriter writer = accepted ? Accepted[i] : null;
                if (writer == null || !ReferenceEquals(writer.Type, a.GetType()))
                {
                    writer = Passable(a.GetType(), i, "args[" + i + "]");
                    accepted = false;
                }
                writers[i] = writer;
            }
            if (accepted)
                return writers;
            var sizes = new UIntPtr[writers.Length];
            for (int i = 0; i < writers.Length; i++)
                sizes[i] = (UIntPtr)(uint)writers[i].Size;
            CudaStatus status = NativeMethods.cuabi_function_check_arg_sizes(Function, sizes, (UIntPtr)(uint)sizes.Length);
            if (status != CudaStatus.Success)
                throw Errors.FromArgumentCheck(status, "args");
            for (int i = 0; i < writers.Length; i++)
                Accepted[i] = writers[i];
            return writers;
        }

        /// <summary>
        /// Has the library check a <paramref name="type"/> argument to parameter
        /// <paramref name="index"/> (cuabi_function_check_arg_size), one not
        /// accepted for it before, and keeps its writer.
        /// </summary>
        /// <exception cref="ArgumentOutOfRangeException"><paramref name="index"/> is not a parameter of the kernel.</exception>
        /// <exception cref="ArgumentException">The type cannot be passed, or its size differs from the parameter's.</exception>
        internal void Accept(int index, Type type)
        {
            Ranges.NotNegative(index, "index");
            ArgumentWriter writer = Passable(type, index, "value");
            CudaStatus status = NativeMethods.cuabi_function_check_arg_size(Function, (UIntPtr)(uint)index,
                (UIntPtr)(uint)writer.Size);
            if (status == CudaStatus.InvalidArgument && index >= Accepted.Length)
                throw new ArgumentOutOfRangeException("index", index, Errors.FromLastError(status).Message);
            if (status != CudaStatus.Success)
                throw Errors.FromArgumentCheck(status, "value");
            Accepted[index] = writer;
        }

        /// <summary>The writer for <paramref name="type"/>; throws when its values cannot be passed to a kernel at all.</summary>
        private static ArgumentWriter Passable(Type type, int index, string paramName)
        {
            ArgumentWriter writer = ArgumentWriter.For(type);
            if (writer.Size < 0)
                throw new ArgumentException(string.Format(
                    "argument {0} is a {1}, which cannot be passed by value to a kernel (pass numbers, enums, " +
                    "IntPtr, device buffers, textures, surfaces, or structs made only of such values)", index, type.FullName), paramName);
            return writer;
        }
    }
}
