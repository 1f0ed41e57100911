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
        private readonly SafeGraphNodeHandle handle;

        internal GraphNode(SafeGraphNodeHandle handle)
        {
            this.handle = handle;
        }

        /// <summary>The raw handle, for the <see cref="NativeMethods"/> layer.</summary>
        public SafeGraphNodeHandle Handle
        {
            get { handle.ThrowIfClosed(this); return handle; }
        }

        /// <summary>Releases the handle; the node stays in its graph.</summary>
        public void Dispose()
        {
            handle.Dispose();
        }
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
        public unsafe GraphNode AddKernelNode(GraphNode after, Kernel kernel, LaunchConfig config, params object[] args)
        {
            if (kernel == null)
                throw new ArgumentNullException("kernel");
            SafeGraphHandle h = Handle;
            SafeGraphNodeHandle afterHandle = after == null ? new SafeGraphNodeHandle(IntPtr.Zero, false) : after.Handle;
            ArgumentLayout layout = kernel.GetLayout();
            int size = layout.BlockSize;
            var block = new byte[Math.Max(size, 1)];
            LaunchConfigNative native = config.ToNative();
            CudaStatus status;
            SafeGraphNodeHandle made;
            fixed (byte* b = block)
            {
                layout.Write(args, b);
                status = NativeMethods.cuabi_graph_add_kernel_node(h, afterHandle, kernel.Handle, ref native,
                    size == 0 ? IntPtr.Zero : (IntPtr)b, (UIntPtr)(uint)size, out made);
            }
            GC.KeepAlive(args);
            GC.KeepAlive(after);
            Errors.Check(status);
            return new GraphNode(made);
        }

        /// <summary>
        /// A node calling <paramref name="callback"/> at every launch of the
        /// graph, on a driver thread, after <paramref name="after"/> (or null).
        /// An exception it throws is reported as a stream's host function's is:
        /// the next <see cref="CudaStream.Synchronize"/> of the stream the graph
        /// ran on throws it as a <see cref="CudaException"/>. The callback is
        /// kept for the life of the process (the graph may run as long as any
        /// instantiation of it lives).
        /// </summary>
        public GraphNode AddHostNode(GraphNode after, Action callback)
        {
            SafeGraphHandle h = Handle;
            SafeGraphNodeHandle afterHandle = after == null ? new SafeGraphNodeHandle(IntPtr.Zero, false) : after.Handle;
            SafeGraphNodeHandle made;
            if (callback == null)
            {
                Errors.Check(NativeMethods.cuabi_graph_add_host_node(h, afterHandle, null, IntPtr.Zero, out made));
                return new GraphNode(made);
            }
            GCHandle keep = GCHandle.Alloc(callback);
            CudaStatus status;
            try
            {
                status = NativeMethods.cuabi_graph_add_host_node(h, afterHandle, GraphHostNodes.Trampoline,
                    GCHandle.ToIntPtr(keep), out made);
            }
            catch
            {
                keep.Free();
                throw;
            }
            GC.KeepAlive(after);
            if (status != CudaStatus.Success)
            {
                CudaException e = Errors.FromLastError(status);
                keep.Free();
                throw e;
            }
            return new GraphNode(made);
        }
    }

    /// <summary>The trampoline of graphs' host nodes: runs the callback at each launch, keeping it.</summary>
    internal static class GraphHostNodes
    {
        /// <summary>Held for the life of the process, so that the function pointer given out stays valid.</summary>
        internal static readonly HostFnNative Trampoline = Run;

        private static int Run(IntPtr userData, IntPtr message, UIntPtr messageSize)
        {
            try
            {
                var callback = (Action)GCHandle.FromIntPtr(userData).Target;
                callback();
                return 0;
            }
            catch (Exception e)
            {
                try
                {
                    HostFunctions.WriteMessage(message, messageSize, e.GetType().FullName + ": " + e.Message);
                }
                catch
                {
                }
                return 1;
            }
        }
    }
}
