using System;

namespace Cuabi
{
    /// <summary>
    /// A value that lays out a C struct naming cuabi objects or host memory (a
    /// built struct of the header: <see cref="Copy3D"/> describes a
    /// cuabi_copy_3d_desc). The generated members taking such a struct take
    /// the class that implements this for it.
    /// </summary>
    /// <typeparam name="TNative">The C struct.</typeparam>
    internal interface IDescribes<TNative> where TNative : struct
    {
        /// <summary>
        /// The C struct, from the library's defaults, with what the library
        /// cannot check (host memory's extent) checked here. What it names
        /// is held (handles referenced, managed memory pinned) until
        /// <paramref name="lease"/> is disposed, after the call.
        /// </summary>
        /// <param name="what">The parameter's name, for a refusal.</param>
        /// <param name="lasting">The library goes on using the memory after the
        /// call returns (a graph's node, a queued copy): memory pinned only for
        /// the call is refused.</param>
        /// <param name="lease">Disposed by the caller once the call returned.</param>
        TNative Describe(string what, bool lasting, out IDisposable lease);

        /// <summary>
        /// The C struct as element <paramref name="index"/> of the array
        /// <paramref name="batch"/> names (a call's batch, whose memory the
        /// library uses after the call: memory pinned only for a call is
        /// refused), what it names held by <paramref name="lease"/>.
        /// </summary>
        TNative DescribeIn(string batch, int index, BatchLease lease);
    }

    /// <summary>
    /// A batch that lays out an array of C structs naming cuabi objects or
    /// host memory (<see cref="MemOpBatch"/> describes cuabi_mem_op elements).
    /// The generated members taking such an array take the class that
    /// implements this for its element.
    /// </summary>
    /// <typeparam name="TNative">The C struct of an element.</typeparam>
    internal interface IDescribesEach<TNative> where TNative : struct
    {
        /// <summary>How many elements the batch holds.</summary>
        int Count { get; }

        /// <summary>Element <paramref name="index"/>, what it names held by <paramref name="lease"/>.</summary>
        TNative Describe(BatchLease lease, int index);
    }
}
