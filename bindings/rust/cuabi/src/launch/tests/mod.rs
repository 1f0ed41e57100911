use super::*;
use crate::types::ParamInfo;
use sealed::SealedArgs;

/// SAXPY's parameters: float a, float *x, float *y, float *out, size_t n.
fn saxpy_layout() -> Layout {
    let p = |offset, size| ParamInfo { offset, size };
    let params = vec![p(0, 4), p(8, 8), p(16, 8), p(24, 8), p(32, 8)];
    Layout::new(params, 40).unwrap()
}

fn arg<T: DeviceRepr>(value: &T) -> Arg {
    let (ptr, size) = sealed::Sealed::arg_bytes(value);
    Arg { ptr, size }
}

/// Packs `args` into a 40-byte block of 0xAA; `None` when they do not fit.
fn packed(layout: &Layout, args: &[Arg]) -> Option<Vec<u8>> {
    let mut block = vec![0xAAu8; 40];
    unsafe { pack(layout, args, block.as_mut_ptr()) }.then_some(block)
}

#[test]
fn arguments_land_at_their_offsets() {
    let (a, x, y, out, n) = (2.0f32, 0x1000u64, 0x2000u64, 0x3000u64, 1usize << 24);
    let block = packed(
        &saxpy_layout(),
        &[arg(&a), arg(&x), arg(&y), arg(&out), arg(&n)],
    )
    .expect("SAXPY's arguments fit");
    let mut want = 2.0f32.to_ne_bytes().to_vec();
    want.extend([0xAA; 4]); // padding is left alone
    for v in [x, y, out, n as u64] {
        want.extend(v.to_ne_bytes());
    }
    assert_eq!(block, want);
}

#[test]
fn every_size_is_copied_whole() {
    // The sizes copied without memcpy, and the others.
    for size in [1usize, 2, 3, 4, 6, 8, 12, 16, 24, 40] {
        let layout = Layout::new(vec![ParamInfo { offset: 0, size }], 40).unwrap();
        let value: Vec<u8> = (1..=size as u8).collect();
        let arg = Arg {
            ptr: value.as_ptr().cast(),
            size,
        };
        let block = packed(&layout, &[arg]).unwrap();
        assert_eq!(&block[..size], &value[..], "size {size}");
        assert!(block[size..].iter().all(|&b| b == 0xAA), "size {size}");
    }
}

#[test]
fn a_wrong_size_or_count_does_not_fit() {
    let layout = saxpy_layout();
    let (a, p, n, n32, a64) = (2.0f32, 0u64, 16usize, 16u32, 2.0f64);
    assert!(packed(&layout, &[arg(&a), arg(&p), arg(&p), arg(&p), arg(&n32)]).is_none());
    assert!(packed(&layout, &[arg(&a64), arg(&p), arg(&p), arg(&p), arg(&n)]).is_none());
    assert!(packed(&layout, &[arg(&a), arg(&p), arg(&p), arg(&p)]).is_none());
    let six = [arg(&a), arg(&p), arg(&p), arg(&p), arg(&n), arg(&n)];
    assert!(packed(&layout, &six).is_none());
    assert!(packed(&layout, &[]).is_none());
}

#[test]
fn tuples_give_their_signature_and_visit_in_order() {
    #[derive(Clone, Copy)]
    #[repr(C)]
    struct Params {
        scale: f32,
        count: i32,
        offset: f64,
    }
    unsafe impl DeviceRepr for Params {}
    let (a, b, c) = (
        1u8,
        Params {
            scale: 1.5,
            count: -3,
            offset: 0.25,
        },
        [3u16; 3],
    );
    let mut seen = Vec::new();
    (&a, &b, &c).each(|i, ptr, size| seen.push((i, ptr, size)));
    let want: [(usize, *const c_void, usize); 3] = [
        (0, (&a as *const u8).cast(), 1),
        (1, (&b as *const Params).cast(), 16),
        (2, (&c as *const [u16; 3]).cast(), 6),
    ];
    assert_eq!(seen, want);
    assert_eq!(<(&u8, &Params, &[u16; 3])>::SIZES, [1, 16, 6]);
    assert_eq!(<(&f32, &DeviceBuffer<f32>)>::SIZES, [4, 8]);
    assert!(<()>::SIZES.is_empty());
    let v = 0u32;
    let longest = (
        &v, &v, &v, &v, &v, &v, &v, &v, &v, &v, &v, &v, &v, &v, &v, &v, &v, &v, &v, &v, &v, &v, &v,
        &v,
    );
    let mut count = 0;
    longest.each(|i, _, _| {
        assert_eq!(i, count);
        count += 1;
    });
    assert_eq!(count, 24);
}

#[test]
fn threads_reuse_their_argument_list() {
    std::thread::spawn(|| {
        let first = take_spare();
        let address = first.as_ptr();
        assert!(first.capacity() >= FIRST_CAPACITY);
        give_back(first);
        // The next launch of this thread gets the same list back, empty.
        let second = take_spare();
        assert_eq!(second.as_ptr(), address);
        assert!(second.is_empty());
        // A launch built while another holds the list gets its own.
        let mut nested = take_spare();
        assert_ne!(nested.as_ptr(), address);
        let value = 1u32;
        nested.extend(std::iter::repeat_n(arg(&value), 100));
        let grown = nested.capacity();
        give_back(second);
        give_back(nested);
        // The thread keeps the larger list, emptied.
        let third = take_spare();
        assert_eq!(third.capacity(), grown);
        assert!(third.is_empty());
        // A huge list is not kept.
        give_back(third);
        let mut huge = take_spare();
        huge.extend(std::iter::repeat_n(arg(&value), MAX_KEPT + 1));
        give_back(huge);
        assert_eq!(take_spare().capacity(), FIRST_CAPACITY);
    })
    .join()
    .unwrap();
}

#[test]
fn extended_options_reach_the_c_struct_and_come_back() {
    let plain = LaunchConfig::new(8, 32).raw();
    assert_eq!(plain.flags, 0);
    assert_eq!(
        (plain.cluster_x, plain.cluster_y, plain.cluster_z),
        (0, 0, 0)
    );
    assert_eq!(plain.priority, 0);
    assert!(plain.programmatic_event.is_null());

    let config = LaunchConfig::new((8, 2), 32)
        .cooperative(true)
        .programmatic_serialization(true)
        .programmatic_event_at_block_start(true)
        .cluster(2, 1, 1)
        .priority(-3);
    let raw = config.raw();
    assert_eq!(
        raw.flags,
        sys::CUABI_LAUNCH_COOPERATIVE
            | sys::CUABI_LAUNCH_PROGRAMMATIC_SERIALIZATION
            | sys::CUABI_LAUNCH_PROGRAMMATIC_EVENT_AT_BLOCK_START
    );
    assert_eq!((raw.cluster_x, raw.cluster_y, raw.cluster_z), (2, 1, 1));
    assert_eq!(raw.priority, -3);
    assert_eq!(LaunchConfig::from_raw(&raw), config);

    // Options switch off again.
    let off = config
        .cooperative(false)
        .programmatic_serialization(false)
        .without_cluster();
    assert_eq!(off.flags, LaunchFlags::PROGRAMMATIC_EVENT_AT_BLOCK_START);
    let raw = off.raw();
    assert_eq!((raw.cluster_x, raw.cluster_y, raw.cluster_z), (0, 0, 0));
    assert_eq!(LaunchConfig::from_raw(&raw).cluster, None);

    // The programmatic event travels as its handle.
    let fake: sys::cuabi_event = std::ptr::without_provenance_mut(0x1234_0500_0007);
    let mut with_event = LaunchConfig::new(1, 1);
    with_event.programmatic_event = Some(fake.addr());
    assert_eq!(with_event.raw().programmatic_event, fake);
    assert_eq!(with_event.programmatic_event_handle(), Some(fake));
    assert_eq!(
        with_event
            .without_programmatic_event()
            .raw()
            .programmatic_event,
        std::ptr::null_mut()
    );
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<LaunchConfig>();
}

#[test]
fn tuples_pack_at_the_layouts_offsets_or_not_at_all() {
    let layout = saxpy_layout();
    let (a, x, y, out, n) = (2.0f32, 0x1000u64, 0x2000u64, 0x3000u64, 7usize);
    let block = with_packed(&layout, &(&a, &x, &y, &out, &n), |ptr, size| {
        assert_eq!(size, 40);
        unsafe { std::slice::from_raw_parts(ptr.cast::<u8>(), size) }.to_vec()
    })
    .expect("SAXPY's tuple fits");
    let mut want = 2.0f32.to_ne_bytes().to_vec();
    want.extend([0; 4]); // padding is zero
    for v in [x, y, out, n as u64] {
        want.extend(v.to_ne_bytes());
    }
    assert_eq!(block, want);
    let n32 = 7u32;
    let called = with_packed(&layout, &(&a, &x, &y, &out, &n32), |_, _| ());
    assert!(called.is_none(), "a 4-byte n does not fit");
    assert!(with_packed(&layout, &(&a, &x, &y, &out), |_, _| ()).is_none());
    // A block larger than the stack's goes to the heap, aligned.
    let big = Layout::new(
        vec![
            ParamInfo { offset: 0, size: 4 },
            ParamInfo {
                offset: 296,
                size: 8,
            },
        ],
        304,
    )
    .unwrap();
    let (first, last) = (5u32, 9u64);
    let tail = with_packed(&big, &(&first, &last), |ptr, size| {
        assert_eq!((size, ptr.addr() % 16), (304, 0));
        let bytes = unsafe { std::slice::from_raw_parts(ptr.cast::<u8>(), size) };
        (
            bytes[..4].to_vec(),
            bytes[296..].to_vec(),
            bytes[4..296].iter().all(|&b| b == 0),
        )
    })
    .unwrap();
    assert_eq!(
        tail,
        (
            5u32.to_ne_bytes().to_vec(),
            9u64.to_ne_bytes().to_vec(),
            true
        )
    );
}

#[test]
fn configs_take_the_librarys_defaults() {
    let raw = LaunchConfig::new((4, 5, 6), (7, 8))
        .with_shared_mem(100)
        .raw();
    assert_eq!(raw.struct_size, size_of::<sys::cuabi_launch_config>());
    assert_eq!((raw.grid_x, raw.grid_y, raw.grid_z), (4, 5, 6));
    assert_eq!((raw.block_x, raw.block_y, raw.block_z), (7, 8, 1));
    assert_eq!(raw.shared_mem_bytes, 100);
    let default = default_config();
    assert_eq!(
        (default.grid_x, default.block_z, default.shared_mem_bytes),
        (1, 1, 0)
    );
    assert_eq!(std::mem::align_of::<StackBlock>(), 16);
}
