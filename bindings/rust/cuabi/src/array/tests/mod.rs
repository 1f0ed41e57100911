use super::*;
use crate::generated::ErrorKind;

#[test]
fn shapes_and_element_sizes() {
    let d = ArrayDesc::new_1d(ArrayFormat::U16, 2, 100);
    assert_eq!(
        (d.width, d.height, d.depth, d.element_bytes()),
        (100, 0, 0, 4)
    );
    let d = ArrayDesc::new_3d(ArrayFormat::F32, 4, 8, 4, 2);
    assert_eq!((d.height, d.depth, d.element_bytes()), (4, 2, 16));
    assert_eq!(d.flags, ArrayFlags::NONE);
    let d = ArrayDesc::new_layered(ArrayFormat::S8, 1, 8, 0, 3)
        .with_flags(ArrayFlags::SURFACE_LOAD_STORE);
    assert_eq!(
        d.flags,
        ArrayFlags::LAYERED | ArrayFlags::SURFACE_LOAD_STORE
    );
    assert_eq!(d.element_bytes(), 1);
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Array>();
}

#[test]
fn descs_convert_to_and_from_the_c_struct() {
    // Only the library's init says what the defaults are.
    let defaults = ArrayDesc::default();
    let desc = ArrayDesc::new_2d(ArrayFormat::U16, 2, 64, 8);
    assert_eq!(desc.flags, defaults.flags);
    let raw = sys::cuabi_array_desc::from(desc);
    assert_eq!(
        raw.struct_size,
        std::mem::size_of::<sys::cuabi_array_desc>()
    );
    assert_eq!(
        (raw.width, raw.height, raw.depth, raw.channels),
        (64, 8, 0, 2)
    );
    assert_eq!(raw.format, sys::CUABI_FORMAT_U16);
    assert_eq!(ArrayDesc::try_from(&raw).unwrap(), desc);
    for format in [
        ArrayFormat::U8,
        ArrayFormat::U16,
        ArrayFormat::U32,
        ArrayFormat::S8,
        ArrayFormat::S16,
        ArrayFormat::S32,
        ArrayFormat::F16,
        ArrayFormat::F32,
    ] {
        let raw = sys::cuabi_array_desc::from(ArrayDesc { format, ..desc });
        assert_eq!(ArrayDesc::try_from(raw).unwrap().format, format);
    }
    // A format newer than this crate: the crate's error for an unknown value.
    let mut raw = sys::cuabi_array_desc::from(desc);
    raw.format = 0;
    let err = ArrayDesc::try_from(&raw).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::NotSupported);
    assert!(err.message().contains("format 0"), "{err}");
}
