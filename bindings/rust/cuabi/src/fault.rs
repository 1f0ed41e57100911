//! The launches a sticky fault names: [`Error::launches`], each a
//! [`FaultedLaunch`] holding the object layer's [`LaunchRecord`] (which is
//! why they are given here, above it, and not in `error.rs`, below it).

use crate::error::{Error, RecordedLaunch};
use crate::objects::LaunchRecord;

/// A launch that a sticky fault's [`Error`] names: one not seen complete
/// (no successful synchronize or query of its stream or device since) when
/// the fault surfaced, as `cuabi_last_error_get_launch` and
/// `cuabi_last_error_get_launch_kernel` give it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FaultedLaunch {
    /// The kernel's name.
    pub kernel: String,
    /// The rest of what the library recorded: grid, block, dynamic shared
    /// memory, cluster, the stream's id ([`Stream::id`](crate::types::Stream::id);
    /// 0 for the device's default stream), the launch's number on its
    /// stream, the device, and whether the driver's log named the kernel.
    pub record: LaunchRecord,
}

impl From<&RecordedLaunch> for FaultedLaunch {
    fn from(l: &RecordedLaunch) -> FaultedLaunch {
        FaultedLaunch {
            kernel: l.kernel.clone(),
            record: LaunchRecord {
                sequence: l.sequence,
                stream_id: l.stream_id,
                device: l.device,
                grid_x: l.grid[0],
                grid_y: l.grid[1],
                grid_z: l.grid[2],
                block_x: l.block[0],
                block_y: l.block[1],
                block_z: l.block[2],
                shared_mem_bytes: l.shared_mem_bytes,
                cluster_x: l.cluster[0],
                cluster_y: l.cluster[1],
                cluster_z: l.cluster[2],
                named_by_driver_log: l.named_by_driver_log,
            },
        }
    }
}

impl Error {
    /// After a sticky fault ([`ErrorKind::ContextLost`](crate::generated::ErrorKind::ContextLost)),
    /// the launches not seen complete when it surfaced, most recent first:
    /// those the message names, read when the error was made. Empty for
    /// every other error, and for a lost context where the library
    /// remembered no launch.
    pub fn launches(&self) -> &[FaultedLaunch] {
        self.launches_as(|recorded| recorded.iter().map(FaultedLaunch::from).collect::<Vec<_>>())
    }
}
