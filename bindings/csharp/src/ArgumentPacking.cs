// Writing typed kernel arguments into an argument block at the kernel's
// parameter offsets: one writer per argument type (made once per type and
// kept), and per kernel parameter the last writer that fitted it, so that a
// launch with the same argument types as the one before costs one type
// comparison and one store per argument, with nothing allocated.

using System;
using System.Collections.Generic;
using System.Runtime.InteropServices;

namespace Cuabi
{
    /// <summary>How values of one .NET type are written into an argument block.</summary>
    internal sealed class ArgumentWriter
    {
        internal enum Kinds
        {
            Invalid,
            Memory,
            Boolean,
            SByte,
            Byte,
            Char,
            Int16,
            UInt16,
            Int32,
            UInt32,
            Single,
            Int64,
            UInt64,
            Double,
            IntPtr,
            UIntPtr,
            Struct,
        }

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
            switch (Type.GetTypeCode(t)) // an enum answers its underlying type's code
            {
                case TypeCode.Boolean: return new ArgumentWriter(t, Kinds.Boolean, 1);
                case TypeCode.SByte: return new ArgumentWriter(t, Kinds.SByte, 1);
                case TypeCode.Byte: return new ArgumentWriter(t, Kinds.Byte, 1);
                case TypeCode.Char: return new ArgumentWriter(t, Kinds.Char, 2);
                case TypeCode.Int16: return new ArgumentWriter(t, Kinds.Int16, 2);
                case TypeCode.UInt16: return new ArgumentWriter(t, Kinds.UInt16, 2);
                case TypeCode.Int32: return new ArgumentWriter(t, Kinds.Int32, 4);
                case TypeCode.UInt32: return new ArgumentWriter(t, Kinds.UInt32, 4);
                case TypeCode.Single: return new ArgumentWriter(t, Kinds.Single, 4);
                case TypeCode.Int64: return new ArgumentWriter(t, Kinds.Int64, 8);
                case TypeCode.UInt64: return new ArgumentWriter(t, Kinds.UInt64, 8);
                case TypeCode.Double: return new ArgumentWriter(t, Kinds.Double, 8);
            }
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
        /// <exception cref="ObjectDisposedException">Device memory that was disposed.</exception>
        internal unsafe void Write(object a, byte* dst)
        {
            switch (Kind)
            {
                case Kinds.Memory: *(ulong*)dst = ((DeviceMemory)a).LaunchPointer; return;
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
    /// writer that fitted each parameter last. Shared by a kernel and its
    /// plans; safe to use from several threads at once.
    /// </summary>
    internal sealed class ArgumentLayout
    {
        private static readonly object[] NoArguments = new object[0];

        internal readonly KernelParameter[] Parameters;
        internal readonly int BlockSize;
        private readonly int[] offsets;
        // Each entry is replaced whole (a reference store), so a reader sees
        // either the old writer or the new one, and each was checked against
        // its parameter before it was stored.
        private readonly ArgumentWriter[] writers;

        internal ArgumentLayout(KernelParameter[] parameters, int blockSize)
        {
            Parameters = parameters;
            BlockSize = blockSize;
            offsets = new int[parameters.Length];
            writers = new ArgumentWriter[parameters.Length];
            for (int i = 0; i < parameters.Length; i++)
                offsets[i] = parameters[i].Offset;
        }

        internal int Count
        {
            get { return Parameters.Length; }
        }

        /// <summary>
        /// Writes every argument at its parameter's offset. Each is checked
        /// first (count, null, type, size, disposed memory); on a failure the
        /// arguments before the failing one may already be written.
        /// </summary>
        internal unsafe void Write(object kernel, object[] args, byte* block)
        {
            if (args == null)
                args = NoArguments;
            ArgumentWriter[] w = writers;
            int[] off = offsets;
            if (args.Length != w.Length)
                throw CountMismatch(kernel, args.Length);
            for (int i = 0; i < args.Length; i++)
            {
                object a = args[i];
                if (a == null)
                    throw NullArgument(kernel, i);
                ArgumentWriter writer = w[i];
                if (writer == null || !ReferenceEquals(writer.Type, a.GetType()))
                    writer = Resolve(kernel, i, a.GetType(), Suffix.Launch);
                writer.Write(a, block + off[i]);
            }
        }

        /// <summary>Checks every argument as <see cref="Write"/> does, writing nothing; returns each one's writer.</summary>
        internal ArgumentWriter[] Check(object kernel, object[] args, Suffix suffix)
        {
            if (args == null)
                args = NoArguments;
            if (args.Length != Parameters.Length)
                throw CountMismatch(kernel, args.Length, suffix);
            var result = new ArgumentWriter[args.Length];
            for (int i = 0; i < args.Length; i++)
            {
                object a = args[i];
                if (a == null)
                    throw NullArgument(kernel, i);
                ArgumentWriter writer = writers[i];
                if (writer == null || !ReferenceEquals(writer.Type, a.GetType()))
                    writer = Resolve(kernel, i, a.GetType(), suffix);
                var memory = a as DeviceMemory;
                if (memory != null && memory.IsDisposed)
                    throw new ObjectDisposedException(memory.GetType().FullName, string.Format(
                        "{0}: argument {1} is device memory that was disposed; {2}", Describe(kernel), i, SuffixText(suffix)));
                result[i] = writer;
            }
            return result;
        }

        /// <summary>
        /// The writer for a <paramref name="type"/> argument to parameter
        /// <paramref name="index"/>, checked against the parameter and then
        /// remembered for it.
        /// </summary>
        /// <exception cref="ArgumentException">The type cannot be passed, or its size differs from the parameter's.</exception>
        internal ArgumentWriter Resolve(object kernel, int index, Type type, Suffix suffix)
        {
            ArgumentWriter writer = ArgumentWriter.For(type);
            string name = suffix == Suffix.PlanSet ? "value" : "args[" + index + "]";
            if (writer.Size < 0)
                throw new ArgumentException(string.Format(
                    "{0}: argument {1} is a {2}, which cannot be passed by value to a kernel (pass numbers, enums, " +
                    "IntPtr, device buffers, or structs made only of such values); {3}",
                    Describe(kernel), index, type.FullName, SuffixText(suffix)), name);
            CheckSize(kernel, index, type, writer.Size, suffix);
            writers[index] = writer;
            return writer;
        }

        /// <summary>Throws unless a <paramref name="size"/>-byte <paramref name="type"/> fits parameter <paramref name="index"/>.</summary>
        internal void CheckSize(object kernel, int index, Type type, int size, Suffix suffix)
        {
            KernelParameter p = Parameters[index];
            string name = suffix == Suffix.PlanSet ? "value" : "args[" + index + "]";
            if (size != p.Size)
                throw new ArgumentException(string.Format(
                    "{0} parameter {1} is {4} bytes, but argument {1} is a {2} of {3} bytes{5}; {6}",
                    Describe(kernel), index, type.FullName, size, p.Size,
                    p.Size == 8 && size == 4 ? " (a size_t or 64-bit parameter needs a long or ulong)" : "",
                    SuffixText(suffix)), name);
            if (p.Offset < 0 || p.Offset + size > BlockSize)
                throw new ArgumentException(string.Format(
                    "{0}: parameter {1} lies outside the {2}-byte argument block", Describe(kernel), index, BlockSize), name);
        }

        /// <summary>What a failure left undone, for the end of its message.</summary>
        internal enum Suffix
        {
            Launch,
            PlanSet,
        }

        private static string SuffixText(Suffix s)
        {
            return s == Suffix.Launch ? "nothing was launched" : "the plan's arguments are unchanged";
        }

        internal ArgumentException CountMismatch(object kernel, int given, Suffix suffix = Suffix.Launch)
        {
            return new ArgumentException(string.Format(
                "{0} takes {1} parameter(s), but {2} argument(s) were given; {3}",
                Describe(kernel), Parameters.Length, given, SuffixText(suffix)), "args");
        }

        private static ArgumentNullException NullArgument(object kernel, int i)
        {
            return new ArgumentNullException("args[" + i + "]", string.Format(
                "{0}: argument {1} is null; pass IntPtr.Zero for a NULL pointer parameter", Describe(kernel), i));
        }

        /// <summary>"kernel 'name'" for a <see cref="Kernel"/> or a name; "kernel" when the name cannot be read.</summary>
        internal static string Describe(object kernel)
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
    }

    /// <summary>Packs typed launch arguments into a caller's block (the layout is given, not read from a kernel).</summary>
    internal static class ArgumentPacker
    {
        /// <summary>
        /// Clears <paramref name="block"/> and writes <paramref name="args"/>
        /// at the offsets of <paramref name="parameters"/>, checking each as a
        /// launch does.
        /// </summary>
        internal static unsafe void Pack(object kernel, KernelParameter[] parameters, object[] args, byte* block,
            int blockSize)
        {
            for (int i = 0; i < blockSize; i++)
                block[i] = 0;
            new ArgumentLayout(parameters, blockSize).Write(kernel, args, block);
        }
    }
}
