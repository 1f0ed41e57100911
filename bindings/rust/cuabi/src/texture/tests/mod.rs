use super::*;
use crate::generated::{FilterMode, ReadMode};

#[test]
fn options_keep_what_was_set() {
    let options = TextureOptions::new();
    assert_eq!(options, TextureOptions::default());
    // What is not set is the library's default (cuabi_texture_desc_init).
    let f = options.fields;
    assert_eq!(f.address_x, AddressMode::Clamp);
    assert_eq!(f.filter, FilterMode::Point);
    let options = options
        .address_mode(AddressMode::Border)
        .filter(FilterMode::Linear)
        .read_mode(ReadMode::NormalizedFloat)
        .normalized_coords(true)
        .border_color([0.25, 0.5, 0.75, 1.0]);
    let f = options.fields;
    let address = [f.address_x, f.address_y, f.address_z];
    assert_eq!(address, [AddressMode::Border; 3]);
    let options = options.address_modes(AddressMode::Wrap, AddressMode::Clamp, AddressMode::Mirror);
    let f = options.fields;
    assert_eq!(
        [f.address_x, f.address_y, f.address_z],
        [AddressMode::Wrap, AddressMode::Clamp, AddressMode::Mirror]
    );
    assert_eq!(f.filter, FilterMode::Linear);
    assert_eq!(f.read_mode, ReadMode::NormalizedFloat);
    assert!(f.normalized_coords);
    let border = [f.border_r, f.border_g, f.border_b, f.border_a];
    assert_eq!(border, [0.25, 0.5, 0.75, 1.0]);
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Texture<'static>>();
    assert_send_sync::<Surface>();
}
