use super::*;
use crate::generated::MemoryPoolFlags;

#[test]
fn pool_descs_set_what_they_name() {
    // Only the library's init says what the defaults are.
    let defaults = MemoryPoolDesc::default();
    assert_eq!(MemoryPoolDesc::new(), defaults);
    let desc = defaults
        .max_bytes(1 << 30)
        .release_threshold(4096)
        .ipc(true);
    assert_eq!(desc.max_bytes, 1 << 30);
    assert_eq!(desc.release_threshold, 4096);
    assert_eq!(desc.flags, defaults.flags | MemoryPoolFlags::IPC);
    assert!(!desc.ipc(false).flags.contains(MemoryPoolFlags::IPC));
    let raw = sys::cuabi_memory_pool_desc::from(desc);
    assert_eq!(
        raw.struct_size,
        std::mem::size_of::<sys::cuabi_memory_pool_desc>()
    );
    assert_eq!((raw.max_bytes, raw.release_threshold), (1 << 30, 4096));
    assert_eq!(
        raw.flags & sys::CUABI_MEMORY_POOL_IPC,
        sys::CUABI_MEMORY_POOL_IPC
    );
    assert_eq!(MemoryPoolDesc::try_from(raw).unwrap(), desc);
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<MemoryPool>();
    assert_send_sync::<MemoryPoolDesc>();
}
