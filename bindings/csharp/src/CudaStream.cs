using System;
using Cuabi.Interop;

namespace Cuabi
{
    /// <summary>
    /// A CUDA stream: work submitted to it runs in order. Methods that take a
    /// stream accept null for the device's default stream.
    /// </summary>
    public sealed class CudaStream : IDisposable
    {
        private readonly SafeStreamHandle handle;

        internal CudaStream(SafeStreamHandle handle)
        {
            this.handle = handle;
        }

        /// <summary>
        /// Wraps a CUstream (a cudaStream_t) owned by someone else; disposing
        /// the wrapper does not destroy it. It must belong to the device's
        /// primary context.
        /// </summary>
        /// <param name="device">The device whose primary context owns the stream.</param>
        /// <param name="cuStream">The raw CUstream value.</param>
        public static CudaStream Wrap(Device device, ulong cuStream)
        {
            if (device == null)
                throw new ArgumentNullException("device");
            SafeStreamHandle h;
            Errors.Check(NativeMethods.cuabi_stream_wrap(device.Handle, cuStream, out h));
            return new CudaStream(h);
        }

        /// <summary>The raw handle, for the <see cref="NativeMethods"/> layer.</summary>
        public SafeStreamHandle Handle
        {
            get { handle.ThrowIfClosed(this); return handle; }
        }

        /// <summary>The raw CUstream value, for interop.</summary>
        public ulong NativeHandle
        {
            get
            {
                ulong s;
                Errors.Check(NativeMethods.cuabi_stream_get_handle(Handle, out s));
                return s;
            }
        }

        /// <summary>Waits until all work submitted to the stream is done.</summary>
        public void Synchronize()
        {
            Errors.Check(NativeMethods.cuabi_stream_synchronize(Handle));
        }

        /// <summary>True when all work submitted to the stream is done (does not wait).</summary>
        public bool IsComplete
        {
            get
            {
                CudaStatus status = NativeMethods.cuabi_stream_query(Handle);
                if (status == CudaStatus.NotReady)
                    return false;
                Errors.Check(status);
                return true;
            }
        }

        /// <summary>Makes later work on this stream wait for <paramref name="ev"/>.</summary>
        /// <param name="ev">A recorded event, possibly of another stream.</param>
        public void WaitEvent(CudaEvent ev)
        {
            if (ev == null)
                throw new ArgumentNullException("ev");
            Errors.Check(NativeMethods.cuabi_stream_wait_event(Handle, ev.Handle));
        }

        /// <summary>Starts capturing the work submitted to this stream into a graph instead of running it.</summary>
        /// <param name="mode">The capture mode.</param>
        public void BeginCapture(CaptureMode mode = CaptureMode.Global)
        {
            Errors.Check(NativeMethods.cuabi_stream_begin_capture(Handle, mode));
        }

        /// <summary>Ends the capture started by <see cref="BeginCapture"/> and returns the graph.</summary>
        public CudaGraph EndCapture()
        {
            SafeGraphHandle g;
            Errors.Check(NativeMethods.cuabi_stream_end_capture(Handle, out g));
            return new CudaGraph(g);
        }

        /// <summary>Releases the stream (pending work still completes).</summary>
        public void Dispose()
        {
            handle.Dispose();
        }

        /// <summary>The stream's handle, or the NULL (default) stream for null.</summary>
        internal static SafeStreamHandle HandleOf(CudaStream stream)
        {
            return stream == null ? SafeStreamHandle.Null : stream.Handle;
        }
    }

    /// <summary>A CUDA event: a marker in a stream, for synchronisation and timing.</summary>
    public sealed class CudaEvent : IDisposable
    {
        private readonly SafeEventHandle handle;

        internal CudaEvent(SafeEventHandle handle)
        {
            this.handle = handle;
        }

        /// <summary>The raw handle, for the <see cref="NativeMethods"/> layer.</summary>
        public SafeEventHandle Handle
        {
            get { handle.ThrowIfClosed(this); return handle; }
        }

        /// <summary>Records the event on <paramref name="stream"/>.</summary>
        /// <param name="stream">The stream, or null for the default stream.</param>
        public void Record(CudaStream stream = null)
        {
            Errors.Check(NativeMethods.cuabi_event_record(Handle, CudaStream.HandleOf(stream)));
        }

        /// <summary>Waits until the event is reached.</summary>
        public void Synchronize()
        {
            Errors.Check(NativeMethods.cuabi_event_synchronize(Handle));
        }

        /// <summary>True when the event has been reached (does not wait).</summary>
        public bool IsComplete
        {
            get
            {
                CudaStatus status = NativeMethods.cuabi_event_query(Handle);
                if (status == CudaStatus.NotReady)
                    return false;
                Errors.Check(status);
                return true;
            }
        }

        /// <summary>Milliseconds from <paramref name="start"/> to this event; both recorded and completed.</summary>
        /// <param name="start">The earlier event.</param>
        public float ElapsedSince(CudaEvent start)
        {
            return ElapsedMilliseconds(start, this);
        }

        /// <summary>Milliseconds between two recorded, completed timing events.</summary>
        /// <param name="start">The earlier event.</param>
        /// <param name="end">The later event.</param>
        public static float ElapsedMilliseconds(CudaEvent start, CudaEvent end)
        {
            if (start == null)
                throw new ArgumentNullException("start");
            if (end == null)
                throw new ArgumentNullException("end");
            float ms;
            Errors.Check(NativeMethods.cuabi_event_get_elapsed_ms(start.Handle, end.Handle, out ms));
            return ms;
        }

        /// <summary>Releases the event.</summary>
        public void Dispose()
        {
            handle.Dispose();
        }
    }

    /// <summary>A graph captured from a stream (<see cref="CudaStream.EndCapture"/>).</summary>
    public sealed class CudaGraph : IDisposable
    {
        private readonly SafeGraphHandle handle;

        internal CudaGraph(SafeGraphHandle handle)
        {
            this.handle = handle;
        }

        /// <summary>The raw handle, for the <see cref="NativeMethods"/> layer.</summary>
        public SafeGraphHandle Handle
        {
            get { handle.ThrowIfClosed(this); return handle; }
        }

        /// <summary>The number of nodes (kernels, copies, memsets, ...) in the graph.</summary>
        public long NodeCount
        {
            get
            {
                UIntPtr count;
                Errors.Check(NativeMethods.cuabi_graph_get_node_count(Handle, out count));
                return (long)count.ToUInt64();
            }
        }

        /// <summary>Instantiates the graph, ready to launch (many times).</summary>
        public CudaGraphExec Instantiate()
        {
            SafeGraphExecHandle e;
            Errors.Check(NativeMethods.cuabi_graph_instantiate(Handle, out e));
            return new CudaGraphExec(e);
        }

        /// <summary>Releases the graph (instantiations stay usable).</summary>
        public void Dispose()
        {
            handle.Dispose();
        }
    }

    /// <summary>An instantiated graph.</summary>
    public sealed class CudaGraphExec : IDisposable
    {
        private readonly SafeGraphExecHandle handle;

        internal CudaGraphExec(SafeGraphExecHandle handle)
        {
            this.handle = handle;
        }

        /// <summary>The raw handle, for the <see cref="NativeMethods"/> layer.</summary>
        public SafeGraphExecHandle Handle
        {
            get { handle.ThrowIfClosed(this); return handle; }
        }

        /// <summary>Runs the graph on <paramref name="stream"/>.</summary>
        /// <param name="stream">The stream, or null for the default stream.</param>
        public void Launch(CudaStream stream = null)
        {
            Errors.Check(NativeMethods.cuabi_graph_exec_launch(Handle, CudaStream.HandleOf(stream)));
        }

        /// <summary>Releases the instantiation.</summary>
        public void Dispose()
        {
            handle.Dispose();
        }
    }
}
