use super::*;

#[test]
fn locations_become_the_librarys_int32() {
    assert_eq!(Location::Host.raw().unwrap(), -1);
    assert_eq!(Location::Device(3).raw().unwrap(), 3);
    let err = Location::Device(1 << 31).raw().unwrap_err();
    assert_eq!(err.kind(), crate::generated::ErrorKind::InvalidArgument);
    assert!(
        err.message().starts_with("location Device(2147483648)"),
        "{err}"
    );
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<ManagedBuffer<f32>>();
}
