use super::*;
use crate::types::fill_value;

#[test]
fn fill_values_keep_their_bytes_in_the_low_bits() {
    assert_eq!(fill_value(&0xABu8), (0xAB, 1));
    assert_eq!(fill_value(&0xBEEFu16), (0xBEEF, 2));
    assert_eq!(fill_value(&-2i16), (0xFFFE, 2));
    assert_eq!(fill_value(&0x1234_5678u32), (0x1234_5678, 4));
    assert_eq!(fill_value(&1.5f32), (1.5f32.to_bits(), 4));
    assert_eq!(
        fill_value(&[1u8, 2, 3, 4]),
        (u32::from_le_bytes([1, 2, 3, 4]), 4)
    );
    // Wider or odd sizes go to the library as they are, for it to refuse.
    assert_eq!(fill_value(&u64::MAX), (0, 8));
    assert_eq!(fill_value(&[7u8; 3]), (0x07_0707, 3));
}

#[test]
fn byte_lengths_overflow_into_an_error() {
    assert_eq!(byte_len::<f64>(3, "length").unwrap(), 24);
    let err = byte_len::<u32>(usize::MAX / 2, "length").unwrap_err();
    assert_eq!(err.kind(), crate::generated::ErrorKind::InvalidArgument);
    assert!(err.message().starts_with("length:"), "{err}");
}
