using System;
using System.Runtime.CompilerServices;
using Cuabi.Interop;

namespace Cuabi
{
    /// <summary>
    /// The library as a whole: versions, where the driver and NVRTC come
    /// from, status names, the driver's log, health (the
    /// <see cref="ContextLost"/> event), core dumps and NVTX annotations
    /// (<see cref="NvtxRange"/> is the scope of a range).
    /// </summary>
    /// <remarks>
    /// Each public member loads the native library first (see
    /// <see cref="CuabiLibrary.Load"/>); its native calls live in separate,
    /// non-inlined methods so that Mono binds them only after that.
    /// </remarks>
    public static partial class Cuda
    {
        // ---- the context lost: an event over cuabi_set_context_lost_callback ----

        private static readonly object contextLostGate = new object();
        private static Action<string> contextLostHandlers;
        private static bool contextLostRegistered;
        private static string contextLostSeen; // the message, once the native callback has run

        /// <summary>Held for the life of the process: the function pointer given to the library stays valid.</summary>
        private static readonly ContextLostFnNative ContextLostTrampoline = OnContextLost;

        /// <summary>
        /// Raised once per process, when a call first finds the context lost
        /// (the driver fails every later CUDA call of the process, on every
        /// device; <see cref="Device.Health"/> is then <see cref="Health.Lost"/>), with
        /// that call's message, the one <see cref="ContextLostMessage"/> keeps.
        /// </summary>
        /// <remarks>
        /// The handlers run on the thread of the call that found it, after that
        /// call failed and before its <see cref="CudaException"/> is thrown; they
        /// may call the library (CUDA work then fails with
        /// <see cref="CudaStatus.ContextLost"/>). The first handler added
        /// registers one native callback (cuabi_set_context_lost_callback) for the
        /// process; it stays registered when handlers are removed. A handler added
        /// after the context was lost is called at once, on the adding thread,
        /// with the message. An exception a handler throws is caught and ignored:
        /// it never reaches native code, and the other handlers still run.
        /// </remarks>
        /// <exception cref="CudaException">The library refused the callback (then the handler is not added).</exception>
        public static event Action<string> ContextLost
        {
            add
            {
                if (value == null)
                    return;
                CuabiLibrary.Load();
                string lost;
                bool register = false;
                lock (contextLostGate)
                {
                    lost = contextLostSeen;
                    if (lost == null)
                    {
                        contextLostHandlers += value;
                        register = !contextLostRegistered;
                        contextLostRegistered = true;
                    }
                }
                if (lost != null)
                {
                    RaiseContextLost(value, lost);
                    return;
                }
                if (!register)
                    return;
                // Outside the lock: registered after the loss, the library calls
                // back at once, on this thread.
                CudaException error = RegisterContextLostCore();
                if (error != null)
                {
                    lock (contextLostGate)
                    {
                        contextLostHandlers -= value;
                        contextLostRegistered = false;
                    }
                    throw error;
                }
            }
            remove
            {
                lock (contextLostGate)
                {
                    contextLostHandlers -= value;
                }
            }
        }

        /// <summary>Registers the native callback; the library's refusal, or null.</summary>
        [MethodImpl(MethodImplOptions.NoInlining)]
        private static CudaException RegisterContextLostCore()
        {
            CudaStatus status = NativeMethods.cuabi_set_context_lost_callback(ContextLostTrampoline, IntPtr.Zero);
            return status == CudaStatus.Success ? null : Errors.FromLastError(status);
        }

        // The native callback: runs each handler once, catching what they throw.
        private static void OnContextLost(IntPtr userData, IntPtr message)
        {
            try
            {
                string text = Utf8.FromNative(message) ?? "";
                Action<string> handlers;
                lock (contextLostGate)
                {
                    if (contextLostSeen != null)
                        return; // told already
                    contextLostSeen = text;
                    handlers = contextLostHandlers;
                    contextLostHandlers = null; // never called again
                }
                if (handlers == null)
                    return;
                foreach (Delegate d in handlers.GetInvocationList())
                    RaiseContextLost((Action<string>)d, text);
            }
            catch
            {
                // Nothing may unwind into native code.
            }
        }

        private static void RaiseContextLost(Action<string> handler, string message)
        {
            try
            {
                handler(message);
            }
            catch
            {
                // Documented: a handler's exception is ignored.
            }
        }
    }
}
