// Passing a file descriptor to a child process, for the memory pool IPC
// test (cuabi_memory_pool_export_fd gives a descriptor the child imports).
//
// Mono's Process.Start closes every descriptor above 2 in the child, so the
// descriptor cannot be inherited. Opening /proc/<parent>/fd/<n> in the child
// opens the file anew: for a regular file or a pipe that reaches the same
// file, but the pool's descriptor is a file of the NVIDIA driver whose open
// file carries the export, and a new open of its device node does not. So
// the parent sends the descriptor itself over a Unix socket (SCM_RIGHTS), as
// NVIDIA's memMapIPCDrv sample does: the parent listens on an abstract
// socket whose name goes to the child on its command line; the child
// connects and receives a duplicate of the parent's open file.

using System;
using System.Runtime.InteropServices;
using System.Text;
using System.Threading;

namespace Cuabi.Tests
{
    internal static class Posix
    {
        private const string Libc = "libc.so.6";

        internal const int AF_UNIX = 1, SOCK_STREAM = 1, SOCK_CLOEXEC = 0x80000, SOL_SOCKET = 1, SCM_RIGHTS = 1;
        internal const short POLLIN = 1;

        [StructLayout(LayoutKind.Sequential)]
        internal struct IoVec
        {
            public IntPtr Base;
            public UIntPtr Length;
        }

        [StructLayout(LayoutKind.Sequential)]
        internal struct MsgHdr
        {
            public IntPtr Name;
            public uint NameLength;
            public IntPtr Iov;
            public UIntPtr IovLength;
            public IntPtr Control;
            public UIntPtr ControlLength;
            public int Flags;
        }

        [StructLayout(LayoutKind.Sequential)]
        internal struct PollFd
        {
            public int Fd;
            public short Events;
            public short Revents;
        }

        [DllImport(Libc, SetLastError = true)] internal static extern int socket(int domain, int type, int protocol);
        [DllImport(Libc, SetLastError = true)] internal static extern int bind(int fd, byte[] address, uint length);
        [DllImport(Libc, SetLastError = true)] internal static extern int listen(int fd, int backlog);
        [DllImport(Libc, SetLastError = true)] internal static extern int accept(int fd, IntPtr address, IntPtr length);
        [DllImport(Libc, SetLastError = true)] internal static extern int connect(int fd, byte[] address, uint length);
        [DllImport(Libc, SetLastError = true)] internal static extern IntPtr sendmsg(int fd, ref MsgHdr message, int flags);
        [DllImport(Libc, SetLastError = true)] internal static extern IntPtr recvmsg(int fd, ref MsgHdr message, int flags);
        [DllImport(Libc, SetLastError = true)] internal static extern int poll([In, Out] PollFd[] fds, UIntPtr count, int timeoutMs);
        [DllImport(Libc, SetLastError = true)] internal static extern int close(int fd);
        [DllImport(Libc, SetLastError = true)] internal static extern int pipe([Out] int[] fds);
        [DllImport(Libc, SetLastError = true)] internal static extern IntPtr read(int fd, byte[] buffer, UIntPtr count);
        [DllImport(Libc, SetLastError = true)] internal static extern IntPtr write(int fd, byte[] buffer, UIntPtr count);

        internal static Exception Error(string call)
        {
            int errno = Marshal.GetLastWin32Error();
            return new InvalidOperationException(call + " failed: errno " + errno);
        }

        /// <summary>A sockaddr_un for the abstract socket <paramref name="name"/>, and its length.</summary>
        internal static byte[] AbstractAddress(string name, out uint length)
        {
            byte[] n = Encoding.ASCII.GetBytes(name);
            var a = new byte[110];
            a[0] = AF_UNIX; // sun_family, little-endian
            // sun_path[0] = 0: the abstract namespace
            Array.Copy(n, 0, a, 3, n.Length);
            length = (uint)(2 + 1 + n.Length);
            return a;
        }
    }

    /// <summary>
    /// A descriptor offered to one child process: a thread accepts one
    /// connection on an abstract Unix socket and sends the descriptor over it.
    /// </summary>
    internal sealed class FdOffer : IDisposable
    {
        private static int counter;

        private readonly int listener;
        private readonly int fd;
        private readonly Thread thread;
        private volatile bool stop;

        /// <summary>The socket's name, for the child's <see cref="FdPassing.Receive"/>.</summary>
        public readonly string Name;

        /// <summary>Whether the descriptor was sent; what went wrong otherwise (null while nothing did).</summary>
        public volatile bool Sent;
        public volatile string Error;

        public FdOffer(int fd)
        {
            this.fd = fd;
            Name = string.Format("cuabi-cs-fd-{0}-{1}", System.Diagnostics.Process.GetCurrentProcess().Id,
                Interlocked.Increment(ref counter));
            listener = Posix.socket(Posix.AF_UNIX, Posix.SOCK_STREAM | Posix.SOCK_CLOEXEC, 0);
            if (listener < 0)
                throw Posix.Error("socket");
            uint length;
            byte[] address = Posix.AbstractAddress(Name, out length);
            if (Posix.bind(listener, address, length) != 0 || Posix.listen(listener, 1) != 0)
            {
                Exception e = Posix.Error("bind/listen");
                Posix.close(listener);
                throw e;
            }
            thread = new Thread(Serve) { IsBackground = true };
            thread.Start();
        }

        private void Serve()
        {
            try
            {
                var fds = new[] { new Posix.PollFd { Fd = listener, Events = Posix.POLLIN } };
                while (!stop)
                {
                    int ready = Posix.poll(fds, (UIntPtr)1u, 100);
                    if (ready < 0)
                        throw Posix.Error("poll");
                    if (ready == 0)
                        continue;
                    int connection = Posix.accept(listener, IntPtr.Zero, IntPtr.Zero);
                    if (connection < 0)
                        throw Posix.Error("accept");
                    try
                    {
                        FdPassing.Send(connection, fd);
                        Sent = true;
                    }
                    finally
                    {
                        Posix.close(connection);
                    }
                    return;
                }
            }
            catch (Exception e)
            {
                Error = e.Message;
            }
        }

        /// <summary>Stops offering and closes the socket (the descriptor stays the caller's).</summary>
        public void Dispose()
        {
            stop = true;
            thread.Join();
            Posix.close(listener);
        }
    }

    internal static class FdPassing
    {
        /// <summary>Sends <paramref name="fd"/> over the connected socket <paramref name="socket"/> (one data byte, SCM_RIGHTS).</summary>
        internal static unsafe void Send(int socket, int fd)
        {
            byte data = 1;
            byte* control = stackalloc byte[24]; // CMSG_SPACE(sizeof(int))
            for (int i = 0; i < 24; i++)
                control[i] = 0;
            *(ulong*)control = 20;                // cmsg_len = CMSG_LEN(sizeof(int))
            *(int*)(control + 8) = Posix.SOL_SOCKET;
            *(int*)(control + 12) = Posix.SCM_RIGHTS;
            *(int*)(control + 16) = fd;
            var iov = new Posix.IoVec { Base = (IntPtr)(&data), Length = (UIntPtr)1u };
            var message = new Posix.MsgHdr
            {
                Iov = (IntPtr)(&iov), IovLength = (UIntPtr)1u, Control = (IntPtr)control, ControlLength = (UIntPtr)24u,
            };
            if ((long)Posix.sendmsg(socket, ref message, 0) != 1)
                throw Posix.Error("sendmsg");
        }

        /// <summary>Connects to the parent's socket <paramref name="name"/> and receives its descriptor: a new descriptor of this process.</summary>
        internal static unsafe int Receive(string name)
        {
            int s = Posix.socket(Posix.AF_UNIX, Posix.SOCK_STREAM | Posix.SOCK_CLOEXEC, 0);
            if (s < 0)
                throw Posix.Error("socket");
            try
            {
                uint length;
                byte[] address = Posix.AbstractAddress(name, out length);
                if (Posix.connect(s, address, length) != 0)
                    throw Posix.Error("connect to @" + name);
                byte data = 0;
                byte* control = stackalloc byte[64];
                for (int i = 0; i < 64; i++)
                    control[i] = 0;
                var iov = new Posix.IoVec { Base = (IntPtr)(&data), Length = (UIntPtr)1u };
                var message = new Posix.MsgHdr
                {
                    Iov = (IntPtr)(&iov), IovLength = (UIntPtr)1u, Control = (IntPtr)control, ControlLength = (UIntPtr)64u,
                };
                long got = (long)Posix.recvmsg(s, ref message, 0);
                if (got != 1)
                    throw got < 0 ? Posix.Error("recvmsg") : new InvalidOperationException("recvmsg: the parent sent nothing");
                if (message.ControlLength.ToUInt64() < 20 || *(int*)(control + 8) != Posix.SOL_SOCKET ||
                    *(int*)(control + 12) != Posix.SCM_RIGHTS)
                    throw new InvalidOperationException("recvmsg: no descriptor came with the message");
                return *(int*)(control + 16);
            }
            finally
            {
                Posix.close(s);
            }
        }
    }
}
