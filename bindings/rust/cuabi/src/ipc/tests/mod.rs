use super::*;
use crate::generated::ErrorKind;

#[test]
fn handles_round_trip_through_hex_and_bytes() {
    let bytes: [u8; IPC_HANDLE_SIZE] = std::array::from_fn(|i| (i * 37 + 11) as u8);
    let handle = IpcHandle::from(bytes);
    assert_eq!(handle.as_bytes(), &bytes);
    let hex = handle.to_hex();
    assert_eq!(&hex[..4], "0b30");
    assert_eq!(IpcHandle::from_hex(&hex).unwrap(), handle);
    assert_eq!(IpcHandle::from_hex(&hex.to_uppercase()).unwrap(), handle);
    assert_eq!(IpcHandle::from_hex(&format!(" {hex}\n")).unwrap(), handle);
    assert_eq!(IpcHandle::from_bytes(&bytes).unwrap(), handle);
    assert_eq!(IpcHandle::try_from(&bytes[..]).unwrap(), handle);
    assert_eq!(
        format!("{handle:?}"),
        format!("IpcHandle({}...)", &hex[..16])
    );
}

#[test]
fn malformed_handles_are_refused_naming_what_is_wrong() {
    let err = IpcHandle::from_bytes(&[0u8; 64]).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidArgument);
    assert_eq!(err.message(), "IPC handle: 64 bytes given, a handle is 128");
    let err = IpcHandle::from_hex(&"0".repeat(255)).unwrap_err();
    assert_eq!(
        err.message(),
        "IPC handle: 255 hex digits given, a handle is 256"
    );
    let mut text = "ab".repeat(128);
    text.replace_range(9..10, "g");
    let err = IpcHandle::from_hex(&text).unwrap_err();
    assert_eq!(err.message(), "IPC handle: character 9 is not a hex digit");
    // A multi-byte character is no hex digit either (and no panic).
    let mut text = "ab".repeat(127);
    text.push('\u{e9}');
    assert_eq!(text.len(), 256);
    let err = IpcHandle::from_hex(&text).unwrap_err();
    assert_eq!(
        err.message(),
        "IPC handle: character 254 is not a hex digit"
    );
}
