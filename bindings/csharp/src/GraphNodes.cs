using System;
using Cuabi.Interop;

namespace Cuabi
{
    /// <summary>
    /// A node of a graph built node by node (cuabi_graph_node): made by the
    /// <c>CudaGraph.Add*Node</c> methods; it keeps its graph alive. Its kind,
    /// edges, allocation address and conditional bodies are generated members.
    /// </summary>
    public sealed partial class GraphNode : IDisposable
    {
    }

    /// <summary>Kernel nodes' argument blocks, packed as a launch packs them.</summary>
    internal static class KernelNodes
    {
        internal delegate CudaStatus BlockCall(IntPtr block, UIntPtr size);

        /// <summary>Packs <paramref name="args"/> at <paramref name="kernel"/>'s offsets and calls <paramref name="call"/> with the block.</summary>
        internal static unsafe CudaStatus WithPacked(Kernel kernel, object[] args, BlockCall call)
        {
            ArgumentLayout layout = kernel.GetLayout();
            int size = layout.BlockSize;
            var block = new byte[Math.Max(size, 1)];
            CudaStatus status;
            fixed (byte* b = block)
            {
                layout.Write(args, b);
                status = call(size == 0 ? IntPtr.Zero : (IntPtr)b, (UIntPtr)(uint)size);
            }
            GC.KeepAlive(args);
            return status;
        }
    }
}
