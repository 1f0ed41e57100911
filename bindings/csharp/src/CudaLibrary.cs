using System;

namespace Cuabi
{
    /// <summary>
    /// Device code loaded once as a library (cuLibraryLoadData, CUDA 12+) and
    /// usable in every device's context: <see cref="GetModule"/> gives it as
    /// a module of a device without loading the image again.
    /// </summary>
    public sealed partial class CudaLibrary : IDisposable
    {
    }
}
