use super::*;
use crate::generated::ErrorKind;

fn place(x_bytes: usize, y: usize, z: usize, pitch: usize, height: usize) -> Place {
    Place {
        x_bytes,
        y,
        z,
        pitch,
        height,
    }
}

#[test]
fn host_boxes_end_at_their_last_byte() {
    // 16 bytes x 4 rows, tight: 64 bytes.
    assert!(host_range("source", 64, &place(0, 0, 0, 0, 0), (16, 4, 1)).is_ok());
    let err = host_range("source", 63, &place(0, 0, 0, 0, 0), (16, 4, 1)).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::OutOfRange);
    assert!(
        err.message()
            .contains("reaches byte 64 of the source host memory's 63 bytes"),
        "{err}"
    );
    // Rows 20 bytes apart: the last row ends at 3 * 20 + 16 = 76.
    assert!(host_range("destination", 76, &place(0, 0, 0, 20, 0), (16, 4, 1)).is_ok());
    assert!(host_range("destination", 75, &place(0, 0, 0, 20, 0), (16, 4, 1)).is_err());
    // An offset box in a volume of 5-row slices: slice 1 + 2 = 3, row
    // 3 * 5 + 1 + 1 = 17, byte 17 * 20 + 4 + 16 = 360.
    assert!(host_range("source", 360, &place(4, 1, 1, 20, 5), (16, 2, 3)).is_ok());
    assert!(host_range("source", 359, &place(4, 1, 1, 20, 5), (16, 2, 3)).is_err());
    // Height and depth 0 count as 1.
    assert!(host_range("source", 16, &place(0, 0, 0, 0, 0), (16, 0, 0)).is_ok());
    // One slice from slice 1: slices are y + height = 3 rows apart, so
    // row 1 * 3 + 1 + 1 = 5 ends at byte 5 * 16 + 16 = 96.
    assert!(host_range("source", 96, &place(0, 1, 1, 0, 0), (16, 2, 1)).is_ok());
    assert!(host_range("source", 95, &place(0, 1, 1, 0, 0), (16, 2, 1)).is_err());
    // Sizes that overflow usize reach past any slice.
    let err = host_range("source", 64, &place(0, usize::MAX, 0, 8, 0), (8, 2, 1)).unwrap_err();
    assert!(err.message().contains("past usize::MAX"), "{err}");
}

#[test]
fn a_short_host_slice_is_refused_before_the_library_is_called() {
    let src = [1.0f32; 15];
    let mut dst = [0.0f32; 16];
    let err = Copy3d::new()
        .from_host(&src)
        .to_host(&mut dst)
        .extent(16, 4, 1)
        .run()
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::OutOfRange);
    assert!(
        err.message().contains("the source host memory's 60 bytes"),
        "{err}"
    );
}
