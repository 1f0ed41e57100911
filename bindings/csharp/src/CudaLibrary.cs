using System;
using System.Runtime.CompilerServices;
using Cuabi.Interop;

namespace Cuabi
{
    /// <summary>
    /// Device code loaded once as a library (cuLibraryLoadData, CUDA 12+) and
    /// usable in every device's context: <see cref="GetModule"/> gives it as
    /// a module of a device without loading the image again.
    /// </summary>
    public sealed partial class CudaLibrary : IDisposable
    {
        private static readonly byte[] NoBytes = new byte[1];

        /// <summary>Loads CUBIN, PTX or fatbin bytes (e.g. <see cref="Program.Cubin"/>, <see cref="Linker.Image"/>) as a library.</summary>
        /// <param name="image">The image.</param>
        /// <exception cref="CudaException"><see cref="CudaStatus.InvalidArgument"/> for no bytes; a driver error for an image it refuses.</exception>
        public static CudaLibrary Load(byte[] image)
        {
            if (image == null)
                throw new ArgumentNullException("image");
            CuabiLibrary.Load();
            return LoadCore(image);
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        private static unsafe CudaLibrary LoadCore(byte[] image)
        {
            SafeLibraryHandle h;
            // An empty array still passes an address, so the library names the size.
            fixed (byte* p = image.Length == 0 ? NoBytes : image)
                Errors.Check(NativeMethods.cuabi_library_load_data((IntPtr)p, (UIntPtr)(uint)image.Length, out h));
            return new CudaLibrary(h);
        }
    }
}
