using System;
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
        /// <summary>Loads CUBIN, PTX or fatbin bytes (e.g. <see cref="Program.Cubin"/>, <see cref="Linker.Image"/>) as a library.</summary>
        /// <param name="image">The image.</param>
        /// <exception cref="CudaException"><see cref="CudaStatus.InvalidArgument"/> for no bytes; a driver error for an image it refuses.</exception>
        public static CudaLibrary Load(byte[] image)
        {
            if (image == null)
                throw new ArgumentNullException("image");
            return LoadData(image);
        }
    }
}
