// UTF-8 strings across the boundary, marshalled by hand so that Mono and
// .NET behave the same.

using System;
using System.Collections.Generic;
using System.Runtime.InteropServices;
using System.Text;

namespace Cuabi.Interop
{
    /// <summary>UTF-8 conversions for the C API's strings.</summary>
    public static class Utf8
    {
        private static readonly Encoding Strict = new UTF8Encoding(false, true);

        /// <summary>The NUL-terminated UTF-8 bytes of <paramref name="value"/>; null for null.</summary>
        /// <param name="value">The string to encode.</param>
        /// <param name="argument">The argument's name, for the error when the string cannot be passed to C.</param>
        /// <exception cref="ArgumentException">
        /// <paramref name="value"/> contains a NUL character, which C would cut it at, or an unpaired
        /// surrogate, which has no UTF-8 encoding.
        /// </exception>
        public static byte[] Encode(string value, string argument)
        {
            if (value == null)
                return null;
            if (value.IndexOf('\0') >= 0)
                throw new ArgumentException("contains a NUL character, which would cut the string short in C", argument);
            int count;
            try
            {
                count = Strict.GetByteCount(value);
            }
            catch (EncoderFallbackException)
            {
                throw UnpairedSurrogate(value, argument);
            }
            var bytes = new byte[count + 1];
            Strict.GetBytes(value, 0, value.Length, bytes, 0);
            return bytes;
        }

        // The error for a string the strict encoder refused: it names the
        // argument and the first surrogate without its partner.
        private static ArgumentException UnpairedSurrogate(string value, string argument)
        {
            int at = 0;
            for (int i = 0; i < value.Length; i++)
            {
                if (char.IsHighSurrogate(value[i]) && i + 1 < value.Length && char.IsLowSurrogate(value[i + 1]))
                {
                    i++;
                    continue;
                }
                if (char.IsSurrogate(value[i]))
                {
                    at = i;
                    break;
                }
            }
            return new ArgumentException(string.Format(
                "contains an unpaired surrogate (U+{0:X4} at index {1}), which has no UTF-8 encoding",
                (int)value[at], at), argument);
        }

        /// <summary>Decodes a NUL-terminated UTF-8 string; null for a NULL pointer.</summary>
        /// <param name="pointer">Address of the first byte.</param>
        public static unsafe string FromNative(IntPtr pointer)
        {
            if (pointer == IntPtr.Zero)
                return null;
            byte* p = (byte*)pointer;
            int n = 0;
            while (p[n] != 0)
                n++;
            return Encoding.UTF8.GetString(p, n);
        }

        /// <summary>Decodes UTF-8 bytes up to the first NUL (or the end).</summary>
        /// <param name="bytes">The buffer a two-call function filled.</param>
        /// <param name="length">How many bytes of it are valid.</param>
        public static string FromBuffer(byte[] bytes, int length)
        {
            int n = Array.IndexOf(bytes, (byte)0, 0, length);
            return Encoding.UTF8.GetString(bytes, 0, n < 0 ? length : n);
        }
    }

    /// <summary>
    /// A block of unmanaged memory holding NUL-terminated UTF-8 strings and,
    /// for string lists, the array of pointers to them (const char* const*).
    /// Freed on dispose.
    /// </summary>
    internal sealed class NativeStrings : IDisposable
    {
        private readonly List<IntPtr> blocks = new List<IntPtr>();

        /// <summary>A copy of <paramref name="value"/>; IntPtr.Zero for null.</summary>
        public IntPtr String(string value, string argument)
        {
            byte[] bytes = Utf8.Encode(value, argument);
            if (bytes == null)
                return IntPtr.Zero;
            IntPtr p = Alloc(bytes.Length);
            Marshal.Copy(bytes, 0, p, bytes.Length);
            return p;
        }

        /// <summary>A const char* const* array of copies; IntPtr.Zero for an empty list.</summary>
        public IntPtr Array(IList<string> values, string argument)
        {
            if (values == null || values.Count == 0)
                return IntPtr.Zero;
            IntPtr array = Alloc(IntPtr.Size * values.Count);
            for (int i = 0; i < values.Count; i++)
            {
                if (values[i] == null)
                    throw new ArgumentNullException(argument + "[" + i + "]");
                Marshal.WriteIntPtr(array, i * IntPtr.Size, String(values[i], argument + "[" + i + "]"));
            }
            return array;
        }

        /// <summary>Headers' names and sources as two arrays of copies (as <see cref="Array"/> makes them), and how many.</summary>
        public UIntPtr Headers(IEnumerable<KeyValuePair<string, string>> headers, string argument, out IntPtr names, out IntPtr sources)
        {
            var keys = new List<string>();
            var values = new List<string>();
            if (headers != null)
            {
                foreach (var header in headers)
                {
                    keys.Add(header.Key);
                    values.Add(header.Value);
                }
            }
            names = Array(keys, argument + " (name)");
            sources = Array(values, argument + " (source)");
            return (UIntPtr)(uint)keys.Count;
        }

        private IntPtr Alloc(int bytes)
        {
            IntPtr p = Marshal.AllocHGlobal(bytes);
            blocks.Add(p);
            return p;
        }

        public void Dispose()
        {
            foreach (IntPtr p in blocks)
                Marshal.FreeHGlobal(p);
            blocks.Clear();
        }
    }
}
