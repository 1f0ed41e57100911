using System;
using System.Runtime.InteropServices;
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

    public sealed partial class CudaGraph
    {
        /// <summary>
        /// A kernel node running <paramref name="kernel"/> with
        /// <paramref name="config"/> and <paramref name="args"/> (packed as
        /// <see cref="Kernel.Launch(LaunchConfig, CudaStream, object[])"/> packs them),
        /// after <paramref name="after"/> (a node of this graph, or null). The
        /// configuration and the arguments are checked as a launch's are.
        /// </summary>
        /// <exception cref="ArgumentException">The count, a type or a size does not fit the kernel.</exception>
        /// <exception cref="CudaException">The library refused the node; the message names why.</exception>
        public GraphNode AddKernelNode(GraphNode after, Kernel kernel, LaunchConfig config, params object[] args)
        {
            if (kernel == null)
                throw new ArgumentNullException("kernel");
            SafeGraphHandle h = Handle;
            SafeGraphNodeHandle afterHandle = GraphNode.HandleOf(after);
            LaunchConfigNative native = config.ToNative();
            SafeGraphNodeHandle made = null;
            CudaStatus status = KernelNodes.WithPacked(kernel, args, (block, size) =>
                NativeMethods.cuabi_graph_add_kernel_node(h, afterHandle, kernel.Handle, ref native, block, size, out made));
            GC.KeepAlive(after);
            config.KeepAlive();
            Errors.Check(status);
            return new GraphNode(made);
        }
    }

    public sealed partial class CudaGraphExec
    {
        /// <summary>
        /// Gives kernel node <paramref name="node"/> (of the graph this was
        /// instantiated from) <paramref name="kernel"/> with the grid, block
        /// and shared memory of <paramref name="config"/> and
        /// <paramref name="args"/>, packed and checked as
        /// <see cref="CudaGraph.AddKernelNode"/> packs and checks them, in this
        /// executable graph only: its next launches use them. The library
        /// refuses a node of another kind or graph, a kernel of another
        /// signature, and launch attributes (they stay as instantiated).
        /// </summary>
        /// <exception cref="ArgumentException">The count, a type or a size does not fit the kernel.</exception>
        /// <exception cref="CudaException">The library refused the update; the message names why.</exception>
        public void SetKernelNode(GraphNode node, Kernel kernel, LaunchConfig config, params object[] args)
        {
            if (kernel == null)
                throw new ArgumentNullException("kernel");
            SafeGraphExecHandle h = Handle;
            SafeGraphNodeHandle n = GraphNode.HandleOf(node);
            LaunchConfigNative native = config.ToNative();
            CudaStatus status = KernelNodes.WithPacked(kernel, args, (block, size) =>
                NativeMethods.cuabi_graph_exec_set_kernel_node(h, n, kernel.Handle, ref native, block, size));
            GC.KeepAlive(node);
            config.KeepAlive();
            Errors.Check(status);
        }

        /// <summary>
        /// Makes host node <paramref name="node"/> (of the graph this was
        /// instantiated from) call <paramref name="callback"/> in this
        /// executable graph only, from its next launch on. An exception it
        /// throws is reported as <see cref="CudaGraph.AddHostNode"/>'s are: the
        /// next <see cref="CudaStream.Synchronize"/> of the stream the graph ran
        /// on throws it as a <see cref="CudaException"/>. The callback is kept
        /// for the life of the process (so at least as long as this executable
        /// graph, and a launch under way that may still call it).
        /// </summary>
        /// <exception cref="CudaException">The library refused: a node of another kind or graph, or no callback.</exception>
        public void SetHostNode(GraphNode node, Action callback)
        {
            SafeGraphExecHandle h = Handle;
            SafeGraphNodeHandle n = GraphNode.HandleOf(node);
            HostFunctions.Install(callback, HostFunctions.KeptTrampoline, (fn, userData) =>
                NativeMethods.cuabi_graph_exec_set_host_node(h, n, fn, userData));
            GC.KeepAlive(node);
        }
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
