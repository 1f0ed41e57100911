//! The memory API's bad inputs (issue 13): stream-ordered allocation and
//! pools, managed memory, IPC handles, peer access, pitched memory, fills,
//! 3D copies, arrays, textures and surfaces.
//!
//! Its cases are counted on lines of their own, `bad-input corpus (Rust,
//! memory)` for those that need no GPU (what the crate checks itself, and
//! raw calls the library refuses before the driver: NULL and wrong-kind
//! handles, NULL and malformed structs) and `bad-input corpus (Rust, GPU,
//! memory)` for the rest.

use std::ffi::c_void;
use std::ptr::null_mut;

use cuabi::sys;
use cuabi::{
    AddressMode, ArrayDesc, ArrayFlags, ArrayFormat, Copy3d, DeviceBuffer, ErrorKind, EventFlags,
    FilterMode, IpcHandle, Location, ManagedFlags, MemoryPoolDesc, MemoryPoolFlags, ReadMode,
    Surface, Texture, TextureOptions, TextureSource,
};

use super::{answer, handle, raw, value, Cases, Cpu, Ctx, Gpu, Ran, Raw};

// ---------------------------------------------------------------------------
// Raw structs with the library's defaults
// ---------------------------------------------------------------------------

fn copy_desc() -> sys::cuabi_copy_3d_desc {
    // SAFETY: pointers, handles and integers; the library fills them in.
    let mut desc: sys::cuabi_copy_3d_desc = unsafe { std::mem::zeroed() };
    let size = std::mem::size_of::<sys::cuabi_copy_3d_desc>();
    assert_eq!(unsafe { sys::cuabi_copy_3d_desc_init(&mut desc, size) }, 0);
    desc
}

fn texture_desc() -> sys::cuabi_texture_desc {
    // SAFETY: as above.
    let mut desc: sys::cuabi_texture_desc = unsafe { std::mem::zeroed() };
    let size = std::mem::size_of::<sys::cuabi_texture_desc>();
    assert_eq!(unsafe { sys::cuabi_texture_desc_init(&mut desc, size) }, 0);
    desc
}

fn array_desc() -> sys::cuabi_array_desc {
    sys::cuabi_array_desc::from(ArrayDesc::default())
}

fn texture_create(ctx: &mut Ctx, desc: &sys::cuabi_texture_desc) -> Ran {
    let mut out = null_mut();
    let st = unsafe { sys::cuabi_texture_create(desc, &mut out) };
    let _owned = Raw(out, sys::cuabi_texture_release);
    raw(ctx, "cuabi_texture_create", st)
}

// ---------------------------------------------------------------------------
// The part without a GPU
// ---------------------------------------------------------------------------

pub fn cpu_cases() -> Cases<Cpu> {
    let mut c = Cases::<Cpu>::new();
    use ErrorKind::*;

    // --- IPC handles: bytes and hex the crate reads
    c.add(
        "an IPC handle of 64 bytes",
        InvalidArgument,
        "IPC handle: 64 bytes given, a handle is 128",
        |_, _| answer(IpcHandle::from_bytes(&[0u8; 64])),
    );
    c.add(
        "an IPC handle of 129 bytes",
        InvalidArgument,
        "IPC handle: 129 bytes given",
        |_, _| answer(IpcHandle::try_from(&[0u8; 129][..])),
    );
    c.add(
        "an IPC handle in 255 hex digits",
        InvalidArgument,
        "IPC handle: 255 hex digits given, a handle is 256",
        |_, _| answer(IpcHandle::from_hex(&"a".repeat(255))),
    );
    c.add(
        "an IPC handle with a character that is no hex digit",
        InvalidArgument,
        "IPC handle: character 9 is not a hex digit",
        |_, _| {
            let mut text = "0f".repeat(128);
            text.replace_range(9..10, "x");
            answer(IpcHandle::from_hex(&text))
        },
    );
    c.add(
        "an IPC handle with a multi-byte character",
        InvalidArgument,
        "is not a hex digit",
        |_, _| {
            let mut text = "0f".repeat(127);
            text.push('\u{e9}');
            answer(IpcHandle::from_hex(&text))
        },
    );

    // --- 3D copies: host memory the crate checks, the rest the library
    c.add(
        "a 3D copy from a host slice one row short",
        OutOfRange,
        "reaches byte 64 of the source host memory's 60 bytes",
        |_, ctx| {
            let src = [1.0f32; 15];
            let mut dst = [0.0f32; 16];
            let ran = answer(
                Copy3d::new()
                    .from_host(&src)
                    .to_host(&mut dst)
                    .extent(16, 4, 1)
                    .run(),
            );
            ctx.expect(dst.iter().all(|&v| v == 0.0), "the refused copy wrote");
            ran
        },
    );
    c.add(
        "a 3D copy into a host slice with too few slices",
        OutOfRange,
        "of the destination host memory's 96 bytes",
        |_, _| {
            let src = [1u8; 256];
            let mut dst = [0u8; 96];
            answer(
                Copy3d::new()
                    .from_host(&src)
                    .to_host(&mut dst)
                    .dst_layout(16, 3)
                    .extent(16, 3, 3)
                    .run(),
            )
        },
    );
    c.add(
        "a 3D copy whose host box starts past the slice",
        OutOfRange,
        "the source host memory's 16 bytes",
        |_, _| {
            let src = [1u8; 16];
            let mut dst = [0u8; 16];
            answer(
                Copy3d::new()
                    .from_host(&src)
                    .src_offset(1, 0, 0)
                    .to_host(&mut dst)
                    .extent(16, 1, 1)
                    .run(),
            )
        },
    );
    c.add(
        "a 3D copy whose host box overflows usize",
        OutOfRange,
        "reaches past usize::MAX",
        |_, _| {
            let src = [1u8; 16];
            let mut dst = [0u8; 16];
            answer(
                Copy3d::new()
                    .from_host(&src)
                    .src_offset(0, 0, usize::MAX / 2)
                    .src_layout(16, 4)
                    .to_host(&mut dst)
                    .extent(16, 1, 1)
                    .run(),
            )
        },
    );
    c.add(
        "a 3D copy between two host slices",
        InvalidArgument,
        "both sides are host memory",
        |_, ctx| {
            let src = [1u8; 64];
            let mut dst = [0u8; 64];
            let ran = answer(
                Copy3d::new()
                    .from_host(&src)
                    .to_host(&mut dst)
                    .extent(64, 1, 1)
                    .run(),
            );
            ctx.expect(dst.iter().all(|&v| v == 0), "the refused copy wrote");
            ran
        },
    );
    c.add(
        "a 3D copy with no memory named",
        InvalidArgument,
        "src: none of src_host, src_buffer, src_array is set",
        |_, _| answer(Copy3d::new().extent(16, 1, 1).run()),
    );
    c.add(
        "a 3D copy whose host rows are narrower than the box",
        InvalidArgument,
        "src pitch 8 is smaller than the row",
        |_, _| {
            let src = [1u8; 256];
            let mut dst = [0u8; 256];
            answer(
                Copy3d::new()
                    .from_host(&src)
                    .src_layout(8, 0)
                    .to_host(&mut dst)
                    .extent(16, 2, 1)
                    .run(),
            )
        },
    );
    c.add(
        "cuabi_copy_3d of a NULL desc (raw)",
        InvalidArgument,
        "desc is NULL",
        |_, ctx| {
            raw(ctx, "cuabi_copy_3d", unsafe {
                sys::cuabi_copy_3d(std::ptr::null())
            })
        },
    );
    c.add(
        "a 3D copy desc with struct_size 0 (raw)",
        InvalidArgument,
        "desc->struct_size is 0",
        |_, ctx| {
            let mut desc = copy_desc();
            desc.struct_size = 0;
            raw(ctx, "cuabi_copy_3d", unsafe { sys::cuabi_copy_3d(&desc) })
        },
    );
    c.add(
        "a program as a 3D copy's source buffer (raw)",
        InvalidHandle,
        "desc->src_buffer is not a live cuabi_buffer: it is a cuabi_program",
        |f, ctx| {
            let mut desc = copy_desc();
            desc.src_buffer = handle(f.compiled_value());
            let mut host = [0u8; 16];
            desc.dst_host = host.as_mut_ptr().cast();
            desc.width_bytes = 16;
            raw(ctx, "cuabi_copy_3d", unsafe { sys::cuabi_copy_3d(&desc) })
        },
    );
    // --- Textures and surfaces (raw)
    c.add(
        "cuabi_texture_create of a NULL desc (raw)",
        InvalidArgument,
        "desc is NULL",
        |_, ctx| {
            let mut out = null_mut();
            let st = unsafe { sys::cuabi_texture_create(std::ptr::null(), &mut out) };
            let _owned = Raw(out, sys::cuabi_texture_release);
            raw(ctx, "cuabi_texture_create", st)
        },
    );
    c.add(
        "a texture desc naming no memory (raw)",
        InvalidArgument,
        "desc sets neither array nor buffer",
        |_, ctx| texture_create(ctx, &texture_desc()),
    );
    c.add(
        "a program as a texture's array (raw)",
        InvalidHandle,
        "desc->array is not a live cuabi_array: it is a cuabi_program",
        |f, ctx| {
            let mut desc = texture_desc();
            desc.array = handle(f.compiled_value());
            texture_create(ctx, &desc)
        },
    );
    c.add(
        "a texture desc with struct_size 8 (raw)",
        InvalidArgument,
        "desc->struct_size is 8",
        |_, ctx| {
            let mut desc = texture_desc();
            desc.struct_size = 8;
            texture_create(ctx, &desc)
        },
    );
    c.add(
        "a surface over a NULL array (raw)",
        InvalidHandle,
        "array is NULL",
        |_, ctx| {
            let mut out = null_mut();
            let st = unsafe { sys::cuabi_surface_create(null_mut(), &mut out) };
            let _owned = Raw(out, sys::cuabi_surface_release);
            raw(ctx, "cuabi_surface_create", st)
        },
    );
    c.add(
        "the object value of a NULL texture (raw)",
        InvalidHandle,
        "texture is NULL",
        |_, ctx| {
            let mut object = 0u64;
            raw(ctx, "cuabi_texture_get_handle", unsafe {
                sys::cuabi_texture_get_handle(null_mut(), &mut object)
            })
        },
    );
    c.add(
        "the desc of a program as an array (raw)",
        InvalidHandle,
        "it is a cuabi_program",
        |f, ctx| {
            let mut desc = array_desc();
            raw(ctx, "cuabi_array_get_desc", unsafe {
                sys::cuabi_array_get_desc(handle(f.compiled_value()), &mut desc)
            })
        },
    );
    c.add(
        "an array desc initialised with struct_size 0 (raw)",
        InvalidArgument,
        "struct_size 0 is smaller",
        |_, ctx| {
            // SAFETY: integers only.
            let mut desc: sys::cuabi_array_desc = unsafe { std::mem::zeroed() };
            raw(ctx, "cuabi_array_desc_init", unsafe {
                sys::cuabi_array_desc_init(&mut desc, 0)
            })
        },
    );

    // --- Buffers, pools and IPC (raw)
    c.add(
        "free_async of a NULL buffer (raw)",
        InvalidHandle,
        "buffer is NULL",
        |_, ctx| {
            raw(ctx, "cuabi_buffer_free_async", unsafe {
                sys::cuabi_buffer_free_async(null_mut(), null_mut())
            })
        },
    );
    c.add(
        "free_async of a program as a buffer (raw)",
        InvalidHandle,
        "it is a cuabi_program",
        |f, ctx| {
            raw(ctx, "cuabi_buffer_free_async", unsafe {
                sys::cuabi_buffer_free_async(handle(f.compiled_value()), null_mut())
            })
        },
    );
    c.add(
        "the kind of a NULL buffer (raw)",
        InvalidHandle,
        "buffer is NULL",
        |_, ctx| {
            let mut kind = 0;
            raw(ctx, "cuabi_buffer_get_kind", unsafe {
                sys::cuabi_buffer_get_kind(null_mut(), &mut kind)
            })
        },
    );
    c.add(
        "the usage of a NULL pool (raw)",
        InvalidHandle,
        "pool is NULL",
        |_, ctx| {
            let (mut reserved, mut used) = (0u64, 0u64);
            raw(ctx, "cuabi_memory_pool_get_usage", unsafe {
                sys::cuabi_memory_pool_get_usage(null_mut(), &mut reserved, &mut used)
            })
        },
    );
    c.add(
        "a program as a pool to trim (raw)",
        InvalidHandle,
        "pool is not a live cuabi_memory_pool: it is a cuabi_program",
        |f, ctx| {
            raw(ctx, "cuabi_memory_pool_trim", unsafe {
                sys::cuabi_memory_pool_trim(handle(f.compiled_value()), 0)
            })
        },
    );
    c.add(
        "a pool desc initialised from NULL (raw)",
        InvalidArgument,
        "desc is NULL",
        |_, ctx| {
            let size = std::mem::size_of::<sys::cuabi_memory_pool_desc>();
            raw(ctx, "cuabi_memory_pool_desc_init", unsafe {
                sys::cuabi_memory_pool_desc_init(null_mut(), size)
            })
        },
    );
    c.add(
        "the IPC handle of a NULL buffer (raw)",
        InvalidHandle,
        "buffer is NULL",
        |_, ctx| {
            let mut bytes = [0u8; IpcHandle::SIZE];
            raw(ctx, "cuabi_buffer_get_ipc_handle", unsafe {
                sys::cuabi_buffer_get_ipc_handle(null_mut(), bytes.as_mut_ptr().cast(), bytes.len())
            })
        },
    );
    c.add(
        "opening an IPC buffer on a NULL device (raw)",
        InvalidHandle,
        "device is NULL",
        |_, ctx| {
            let bytes = [0u8; IpcHandle::SIZE];
            let mut out = null_mut();
            let st = unsafe {
                sys::cuabi_buffer_open_ipc(
                    null_mut(),
                    null_mut(),
                    bytes.as_ptr().cast(),
                    bytes.len(),
                    &mut out,
                )
            };
            let _owned = Raw(out, sys::cuabi_buffer_release);
            raw(ctx, "cuabi_buffer_open_ipc", st)
        },
    );
    c.add(
        "opening an IPC event on a program as its device (raw)",
        InvalidHandle,
        "it is a cuabi_program",
        |f, ctx| {
            let bytes = [0u8; IpcHandle::SIZE];
            let mut out = null_mut();
            let st = unsafe {
                sys::cuabi_event_open_ipc(
                    handle(f.compiled_value()),
                    bytes.as_ptr().cast(),
                    bytes.len(),
                    &mut out,
                )
            };
            let _owned = Raw(out, sys::cuabi_event_release);
            raw(ctx, "cuabi_event_open_ipc", st)
        },
    );
    c.add(
        "the peer access of NULL devices (raw)",
        InvalidHandle,
        "device is NULL",
        |_, ctx| {
            let mut can = 0;
            raw(ctx, "cuabi_device_can_access_peer", unsafe {
                sys::cuabi_device_can_access_peer(null_mut(), null_mut(), &mut can)
            })
        },
    );
    c
}

// ---------------------------------------------------------------------------
// The part that needs a GPU
// ---------------------------------------------------------------------------

/// A buffer of `n` u32s counting from 0.
fn counting(g: &Gpu, n: usize) -> Result<DeviceBuffer<u32>, super::Setup> {
    let data: Vec<u32> = (0..n as u32).collect();
    Ok(g.device.buffer_from_slice(&data)?)
}

/// Checks that `buffer` (made by [`counting`]) still counts from 0.
fn still_counting(ctx: &mut Ctx, buffer: &DeviceBuffer<u32>) {
    if let Some(values) = ctx.check("reading the buffer back", buffer.to_vec()) {
        let intact = values.iter().enumerate().all(|(i, &v)| v == i as u32);
        ctx.expect(intact, "the refused call changed the buffer");
    }
}

/// Bytes from `ptr` to the next multiple of the device's texture alignment
/// (`CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT`).
fn aligned_offset(g: &Gpu, ptr: u64) -> Result<usize, super::Setup> {
    let align = u64::try_from(g.device.attribute(14)?).map_err(|e| e.to_string())?;
    Ok(((align - ptr % align) % align) as usize)
}

/// A 2D float array of `w` x `h`.
fn float_array(
    g: &Gpu,
    w: usize,
    h: usize,
    flags: ArrayFlags,
) -> Result<cuabi::Array, super::Setup> {
    let desc = ArrayDesc::new_2d(ArrayFormat::F32, 1, w, h).with_flags(flags);
    Ok(g.device.create_array(&desc)?)
}

pub fn gpu_cases() -> Cases<Gpu> {
    let mut c = Cases::<Gpu>::new();
    use ErrorKind::*;

    // --- Stream-ordered allocation and pools
    c.add(
        "free_async of a buffer from Device::alloc",
        InvalidArgument,
        "not stream-ordered (cuabi_buffer_alloc_async): release it instead",
        |g, ctx| {
            let ran = answer(
                counting(g, 64)?
                    .free_async(Some(&g.stream))
                    .map_err(|(_, e)| e),
            );
            g.keeps_working(ctx);
            ran
        },
    );
    c.add(
        "free_async of a wrapped buffer",
        InvalidArgument,
        "the buffer is a wrapped buffer, not stream-ordered",
        |g, ctx| {
            let owner = counting(g, 64)?;
            let wrapped = unsafe { g.device.wrap_buffer::<u32>(owner.device_ptr(), 64)? };
            let ran = answer(wrapped.free_async(None).map_err(|(_, e)| e));
            still_counting(ctx, &owner);
            ran
        },
    );
    c.add(
        "free_async of a buffer a texture still reads (raw)",
        InvalidArgument,
        "the buffer is still read by 1 texture object(s)",
        |g, ctx| {
            let buffer = g.device.alloc_async::<f32>(1024, None, Some(&g.stream))?;
            let raw_buffer = buffer.as_raw();
            let mut desc = texture_desc();
            desc.buffer = raw_buffer;
            desc.offset = aligned_offset(g, buffer.device_ptr())?;
            desc.width = 512;
            let mut texture = null_mut();
            let st = unsafe { sys::cuabi_texture_create(&desc, &mut texture) };
            if st != 0 {
                return Err("the texture over the buffer could not be made".into());
            }
            let texture = Raw(texture, sys::cuabi_texture_release);
            let ran = raw(ctx, "cuabi_buffer_free_async", unsafe {
                sys::cuabi_buffer_free_async(raw_buffer, g.stream.as_raw())
            });
            let mut bytes = 0usize;
            let live = unsafe { sys::cuabi_buffer_get_size(raw_buffer, &mut bytes) } == 0;
            ctx.expect(
                live && bytes == 4096,
                "the refused free released the buffer",
            );
            drop(texture);
            ctx.check(
                "free_async once the texture is gone",
                buffer.free_async(Some(&g.stream)).map_err(|(_, e)| e),
            );
            ctx.check("synchronize", g.stream.synchronize());
            ran
        },
    );
    c.add(
        "a buffer's handle after free_async (raw)",
        InvalidHandle,
        "buffer is not a live cuabi_buffer",
        |g, ctx| {
            let buffer = g.device.alloc_async::<f32>(16, None, Some(&g.stream))?;
            let v = value(buffer.as_raw());
            buffer.free_async(Some(&g.stream)).map_err(|(_, e)| e)?;
            g.stream.synchronize()?;
            let mut bytes = 0usize;
            raw(ctx, "cuabi_buffer_get_size", unsafe {
                sys::cuabi_buffer_get_size(handle(v), &mut bytes)
            })
        },
    );
    c.add(
        "alloc_async of zero elements",
        InvalidArgument,
        "bytes is 0",
        |g, _| answer(g.device.alloc_async::<f32>(0, None, Some(&g.stream))),
    );
    c.add(
        "alloc_async of elements whose byte size overflows usize",
        InvalidArgument,
        "Device::alloc_async: 4611686018427387904 elements of 4 bytes overflow usize",
        |g, _| answer(g.device.alloc_async::<f32>(1 << 62, None, None)),
    );
    c.add(
        "alloc_async of 128 MiB from a pool limited to 64 MiB",
        OutOfMemory,
        "cuMemAllocFromPoolAsync of 134217728 bytes failed: out of device memory",
        |g, ctx| {
            let pool = g
                .device
                .create_memory_pool(&MemoryPoolDesc::new().max_bytes(64 << 20))?;
            let ran = answer(
                g.device
                    .alloc_async::<u8>(128 << 20, Some(&pool), Some(&g.stream)),
            );
            g.keeps_working(ctx);
            ran
        },
    );
    c.add(
        "a pool with flags this version does not define",
        InvalidArgument,
        "desc->flags has bits this version does not define: 256",
        |g, _| {
            let options = MemoryPoolDesc::new().flags(MemoryPoolFlags::from_bits(0x100));
            answer(g.device.create_memory_pool(&options))
        },
    );
    c.add(
        "export_fd of a pool made without IPC",
        InvalidArgument,
        "the pool was made without CUABI_MEMORY_POOL_IPC",
        |g, _| {
            answer(
                g.device
                    .create_memory_pool(&MemoryPoolDesc::new())?
                    .export_fd(),
            )
        },
    );
    c.add(
        "export_fd of the device's default pool",
        InvalidArgument,
        "without CUABI_MEMORY_POOL_IPC",
        |g, _| answer(g.device.default_memory_pool()?.export_fd()),
    );
    c.add(
        "importing a pool from descriptor -1 (raw)",
        InvalidArgument,
        "fd is -1, not a file descriptor",
        |g, ctx| {
            let mut out = null_mut();
            let st = unsafe { sys::cuabi_memory_pool_import_fd(g.device.as_raw(), -1, &mut out) };
            let _owned = Raw(out, sys::cuabi_memory_pool_release);
            raw(ctx, "cuabi_memory_pool_import_fd", st)
        },
    );

    // --- Managed memory
    c.add(
        "alloc_managed of zero elements",
        InvalidArgument,
        "bytes is 0: a managed buffer needs at least one byte",
        |g, _| answer(g.device.alloc_managed::<f32>(0, ManagedFlags::NONE)),
    );
    c.add(
        "alloc_managed with flags this version does not define",
        InvalidArgument,
        "flags has bits this version does not define: 128",
        |g, _| {
            answer(
                g.device
                    .alloc_managed::<f32>(16, ManagedFlags::from_bits(0x80)),
            )
        },
    );
    c.add(
        "prefetch to device 99",
        InvalidArgument,
        "location 99 is neither CUABI_LOCATION_HOST (-1) nor a device ordinal",
        |g, _| {
            let data = g.device.alloc_managed::<f32>(1024, ManagedFlags::NONE)?;
            answer(data.prefetch(Location::Device(99), Some(&g.stream)))
        },
    );
    c.add(
        "prefetch of elements past the end",
        OutOfRange,
        "prefetch range [4000, 4000 + 400) reaches past the end of the 4096-byte buffer",
        |g, _| {
            let data = g.device.alloc_managed::<f32>(1024, ManagedFlags::NONE)?;
            answer(data.prefetch_range(1000, 100, Location::Host, None))
        },
    );
    c.add(
        "prefetch from an offset whose bytes overflow usize",
        OutOfRange,
        "prefetch range of elements",
        |g, _| {
            let data = g.device.alloc_managed::<f32>(16, ManagedFlags::NONE)?;
            answer(data.prefetch_range(usize::MAX / 2, 1, Location::Host, None))
        },
    );
    c.add(
        "advice for a device ordinal past i32",
        InvalidArgument,
        "location Device(2147483648)",
        |g, _| {
            let data = g.device.alloc_managed::<f32>(16, ManagedFlags::NONE)?;
            answer(data.advise(
                cuabi::MemoryAdvice::SetAccessedBy,
                Location::Device(1 << 31),
            ))
        },
    );
    c.add(
        "advice of a preferred location on device 99",
        InvalidArgument,
        "location 99 is neither",
        |g, _| {
            let data = g.device.alloc_managed::<f32>(16, ManagedFlags::NONE)?;
            answer(data.advise(
                cuabi::MemoryAdvice::SetPreferredLocation,
                Location::Device(99),
            ))
        },
    );
    c.add(
        "the host pointer of a device buffer (raw)",
        InvalidArgument,
        "not managed memory (cuabi_buffer_alloc_managed)",
        |g, ctx| {
            let b = counting(g, 16)?;
            let mut ptr: *mut c_void = null_mut();
            raw(ctx, "cuabi_buffer_get_host_pointer", unsafe {
                sys::cuabi_buffer_get_host_pointer(b.as_raw(), &mut ptr)
            })
        },
    );
    c.add(
        "advice for a device buffer (raw)",
        InvalidArgument,
        "the buffer is a device buffer (cuabi_buffer_alloc), not managed memory",
        |g, ctx| {
            let b = counting(g, 16)?;
            raw(ctx, "cuabi_buffer_advise", unsafe {
                sys::cuabi_buffer_advise(b.as_raw(), 0, 64, sys::CUABI_ADVISE_SET_READ_MOSTLY, 0)
            })
        },
    );
    c.add(
        "advice 7, which the header does not define (raw)",
        InvalidArgument,
        "advice 7 is not a cuabi_memory_advice",
        |g, ctx| {
            let data = g.device.alloc_managed::<f32>(16, ManagedFlags::NONE)?;
            raw(ctx, "cuabi_buffer_advise", unsafe {
                sys::cuabi_buffer_advise(data.as_raw(), 0, 64, 7, 0)
            })
        },
    );

    // --- IPC
    c.add(
        "an IPC handle opened by the process that made it",
        InvalidArgument,
        "the handle was exported by this process",
        |g, ctx| {
            let b = counting(g, 256)?;
            let handle = b.ipc_handle()?;
            let ran = answer(g.device.open_ipc_buffer::<u32>(&handle, None));
            still_counting(ctx, &b);
            ran
        },
    );
    c.add(
        "an IPC handle of garbage",
        InvalidArgument,
        "the handle is not a cuabi IPC handle",
        |g, _| {
            let garbage = IpcHandle::from([0xA7; IpcHandle::SIZE]);
            answer(g.device.open_ipc_buffer::<u32>(&garbage, None))
        },
    );
    c.add(
        "an IPC handle with one bit flipped",
        InvalidArgument,
        "the handle's checksum does not match its bytes",
        |g, _| {
            let b = counting(g, 256)?;
            let mut bytes = *b.ipc_handle()?.as_bytes();
            bytes[77] ^= 0x10;
            answer(
                g.device
                    .open_ipc_buffer::<u32>(&IpcHandle::from(bytes), None),
            )
        },
    );
    c.add(
        "an event's IPC handle opened as a buffer",
        InvalidArgument,
        "the handle is an event's handle, not a buffer's",
        |g, _| {
            let flags = EventFlags::INTERPROCESS | EventFlags::DISABLE_TIMING;
            let event = g.device.create_event_with(flags)?;
            answer(g.device.open_ipc_buffer::<u8>(&event.ipc_handle()?, None))
        },
    );
    c.add(
        "a buffer's IPC handle opened as an event",
        InvalidArgument,
        "the handle is a buffer's handle, not an event's",
        |g, _| answer(g.device.open_ipc_event(&counting(g, 16)?.ipc_handle()?)),
    );
    c.add(
        "the IPC handle of a managed buffer",
        InvalidArgument,
        "can be shared",
        |g, _| {
            answer(
                g.device
                    .alloc_managed::<u32>(16, ManagedFlags::NONE)?
                    .ipc_handle(),
            )
        },
    );
    c.add(
        "the IPC handle of an allocation from the default pool",
        InvalidArgument,
        "stream-ordered from a pool made without CUABI_MEMORY_POOL_IPC",
        |g, ctx| {
            let b = g.device.alloc_async::<u32>(16, None, Some(&g.stream))?;
            let ran = answer(b.ipc_handle());
            ctx.check(
                "free_async",
                b.free_async(Some(&g.stream)).map_err(|(_, e)| e),
            );
            ran
        },
    );
    c.add(
        "the IPC handle of an event made without INTERPROCESS",
        InvalidArgument,
        "the event was made without CUABI_EVENT_INTERPROCESS",
        |g, _| {
            answer(
                g.device
                    .create_event_with(EventFlags::DISABLE_TIMING)?
                    .ipc_handle(),
            )
        },
    );
    c.add(
        "an INTERPROCESS event that times",
        InvalidArgument,
        "CUABI_EVENT_INTERPROCESS needs CUABI_EVENT_DISABLE_TIMING",
        |g, _| answer(g.device.create_event_with(EventFlags::INTERPROCESS)),
    );
    c.add(
        "an IPC handle of 127 bytes (raw)",
        InvalidArgument,
        "handle_size is 127; an IPC handle is 128 bytes",
        |g, ctx| {
            let bytes = *counting(g, 16)?.ipc_handle()?.as_bytes();
            let mut out = null_mut();
            let st = unsafe {
                sys::cuabi_buffer_open_ipc(
                    g.device.as_raw(),
                    null_mut(),
                    bytes.as_ptr().cast(),
                    127,
                    &mut out,
                )
            };
            let _owned = Raw(out, sys::cuabi_buffer_release);
            raw(ctx, "cuabi_buffer_open_ipc", st)
        },
    );
    c.add(
        "an IPC handle written into 64 bytes (raw)",
        InsufficientBuffer,
        "handle_size is 64; an IPC handle takes 128 bytes",
        |g, ctx| {
            let b = counting(g, 16)?;
            let mut bytes = [0x33u8; IpcHandle::SIZE];
            let st = unsafe {
                sys::cuabi_buffer_get_ipc_handle(b.as_raw(), bytes.as_mut_ptr().cast(), 64)
            };
            ctx.expect(
                bytes.iter().all(|&v| v == 0x33),
                "a too-small handle buffer was written",
            );
            raw(ctx, "cuabi_buffer_get_ipc_handle", st)
        },
    );

    // --- Peer access
    c.add(
        "enable_peer_access of a device and itself",
        InvalidArgument,
        "a device is not its own peer",
        |g, _| {
            answer(
                g.device
                    .enable_peer_access(&cuabi::Device::get(g.device.ordinal())?),
            )
        },
    );
    c.add(
        "disable_peer_access of a device and itself",
        InvalidArgument,
        "a device is not its own peer",
        |g, _| answer(g.device.disable_peer_access(&g.device)),
    );
    c.add(
        "a peer attribute of a device and itself",
        InvalidArgument,
        "a device is not its own peer",
        |g, _| answer(g.device.peer_attribute(&g.device, 1)),
    );

    // --- Pitched memory and fills
    c.add(
        "a pitched buffer of zero rows",
        InvalidArgument,
        "height is 0: a pitched buffer needs at least one row",
        |g, _| answer(g.device.alloc_pitched::<f32>(64, 0)),
    );
    c.add(
        "a pitched buffer of zero-width rows",
        InvalidArgument,
        "width_bytes is 0",
        |g, _| answer(g.device.alloc_pitched::<f32>(0, 4)),
    );
    c.add(
        "a pitched buffer whose row overflows usize",
        InvalidArgument,
        "Device::alloc_pitched",
        |g, _| answer(g.device.alloc_pitched::<u64>(usize::MAX / 4, 1)),
    );
    c.add(
        "a fill of 8-byte elements",
        InvalidArgument,
        "element_size is 8; expected 1, 2 or 4",
        |g, ctx| {
            let mut b = g.device.alloc_zeroed::<u64>(8)?;
            let ran = answer(b.fill(u64::MAX));
            ctx.expect(
                b.to_vec().is_ok_and(|v| v == [0; 8]),
                "the refused fill wrote",
            );
            ran
        },
    );
    c.add(
        "a fill of 3-byte elements",
        InvalidArgument,
        "element_size is 3",
        |g, _| answer(g.device.alloc_zeroed::<[u8; 3]>(8)?.fill([1, 2, 3])),
    );
    c.add(
        "a fill past the end",
        OutOfRange,
        "fill range [40, 40 + 32) reaches past the end of the 64-byte buffer",
        |g, ctx| {
            let mut b = counting(g, 16)?;
            let ran = answer(b.fill_range(10, 8, 7));
            still_counting(ctx, &b);
            ran
        },
    );
    c.add(
        "a fill from an offset whose bytes overflow usize",
        OutOfRange,
        "fill range of elements",
        |g, _| answer(counting(g, 16)?.fill_range(usize::MAX / 2, 1, 7)),
    );
    c.add(
        "a 16-bit fill of a value wider than 16 bits (raw)",
        InvalidArgument,
        "value 65536 does not fit in 2 byte(s)",
        |g, ctx| {
            let b = counting(g, 16)?;
            let st = unsafe { sys::cuabi_buffer_fill(b.as_raw(), 0, 0x1_0000, 2, 4) };
            let ran = raw(ctx, "cuabi_buffer_fill", st);
            still_counting(ctx, &b);
            ran
        },
    );
    c.add(
        "a 32-bit fill off a 4-byte boundary (raw)",
        InvalidArgument,
        "offset 2 does not put the fill on a 4-byte boundary",
        |g, ctx| {
            let b = counting(g, 16)?;
            raw(ctx, "cuabi_buffer_fill", unsafe {
                sys::cuabi_buffer_fill(b.as_raw(), 2, 1, 4, 1)
            })
        },
    );

    // --- 3D copies the library checks
    c.add(
        "a 3D copy past a buffer's end",
        OutOfRange,
        "src box reaches byte 80 of the 64-byte buffer",
        |g, _| {
            let b = counting(g, 16)?;
            let mut host = [0u8; 80];
            answer(
                Copy3d::new()
                    .from_buffer(&b)
                    .to_host(&mut host)
                    .extent(16, 5, 1)
                    .run(),
            )
        },
    );
    c.add(
        "a 3D copy whose buffer rows are narrower than the box",
        InvalidArgument,
        "dst pitch 8 is smaller than the row",
        |g, ctx| {
            let mut b = counting(g, 16)?;
            let host = [0u8; 64];
            let ran = answer(
                Copy3d::new()
                    .from_host(&host)
                    .to_buffer(&mut b)
                    .dst_layout(8, 0)
                    .extent(16, 2, 1)
                    .run(),
            );
            still_counting(ctx, &b);
            ran
        },
    );
    c.add(
        "a 3D copy into an array with a pitch",
        InvalidArgument,
        "dst_pitch and dst_height must be 0 for an array",
        |g, _| {
            let array = float_array(g, 16, 4, ArrayFlags::NONE)?;
            let host = [0f32; 64];
            answer(
                Copy3d::new()
                    .from_host(&host)
                    .to_array(&array)
                    .dst_layout(64, 0)
                    .extent(64, 4, 1)
                    .run(),
            )
        },
    );
    c.add(
        "a 3D copy from the middle of an array element",
        InvalidArgument,
        "must be whole elements of the array's 16 bytes",
        |g, _| {
            let desc = ArrayDesc::new_2d(ArrayFormat::F32, 4, 8, 2);
            let array = g.device.create_array(&desc)?;
            let mut host = [0f32; 64];
            answer(
                Copy3d::new()
                    .from_array(&array)
                    .src_offset(4, 0, 0)
                    .to_host(&mut host)
                    .extent(16, 1, 1)
                    .run(),
            )
        },
    );
    c.add(
        "a 3D copy past an array's width",
        OutOfRange,
        "dst box's x range [12, 20) exceeds the array's width of 16",
        |g, _| {
            let array = float_array(g, 16, 4, ArrayFlags::NONE)?;
            let host = [0f32; 64];
            answer(
                Copy3d::new()
                    .from_host(&host)
                    .to_array(&array)
                    .dst_offset(12 * 4, 0, 0)
                    .extent(8 * 4, 1, 1)
                    .run(),
            )
        },
    );
    c.add(
        "a 3D copy whose rows do not fit in a slice",
        InvalidArgument,
        "do not fit in a slice of 1 rows",
        |g, _| {
            let b = counting(g, 64)?;
            let mut host = [0u8; 256];
            answer(
                Copy3d::new()
                    .from_buffer(&b)
                    .src_layout(0, 1)
                    .to_host(&mut host)
                    .extent(16, 2, 2)
                    .run(),
            )
        },
    );

    c.add(
        "a 3D copy naming host memory and a buffer for its source (raw)",
        InvalidArgument,
        "src: more than one of src_host, src_buffer, src_array is set",
        |g, ctx| {
            let b = counting(g, 16)?;
            let mut host = [0u8; 64];
            let mut desc = copy_desc();
            desc.src_host = host.as_ptr().cast();
            desc.src_buffer = b.as_raw();
            desc.dst_host = host.as_mut_ptr().cast();
            desc.width_bytes = 64;
            raw(ctx, "cuabi_copy_3d", unsafe { sys::cuabi_copy_3d(&desc) })
        },
    );

    // --- Arrays
    c.add(
        "an array of width 0",
        InvalidArgument,
        "desc->width is 0: an array needs at least one element",
        |g, _| {
            answer(
                g.device
                    .create_array(&ArrayDesc::new_2d(ArrayFormat::F32, 1, 0, 4)),
            )
        },
    );
    c.add(
        "an array of 3 channels",
        InvalidArgument,
        "desc->channels is 3; expected 1, 2 or 4",
        |g, _| {
            answer(
                g.device
                    .create_array(&ArrayDesc::new_1d(ArrayFormat::U8, 3, 64)),
            )
        },
    );
    c.add(
        "a layered array with no layers",
        InvalidArgument,
        "a layered array needs desc->depth >= 1",
        |g, _| {
            let desc = ArrayDesc::new_layered(ArrayFormat::F32, 1, 16, 16, 0);
            answer(g.device.create_array(&desc))
        },
    );
    c.add(
        "a 3D array without a height",
        InvalidArgument,
        "desc->depth is 5 with height 0",
        |g, _| {
            answer(
                g.device
                    .create_array(&ArrayDesc::new_3d(ArrayFormat::F32, 1, 16, 0, 5)),
            )
        },
    );
    c.add(
        "texture gather on a 3D array",
        InvalidArgument,
        "CUABI_ARRAY_TEXTURE_GATHER applies to 2D arrays only",
        |g, _| {
            let desc = ArrayDesc::new_3d(ArrayFormat::F32, 1, 16, 16, 4)
                .with_flags(ArrayFlags::TEXTURE_GATHER);
            answer(g.device.create_array(&desc))
        },
    );
    c.add(
        "a cubemap of faces that are not square",
        InvalidArgument,
        "a cubemap has square faces (width 4, height 8) and depth 6",
        |g, _| {
            let desc =
                ArrayDesc::new_3d(ArrayFormat::F32, 1, 4, 8, 6).with_flags(ArrayFlags::CUBEMAP);
            answer(g.device.create_array(&desc))
        },
    );
    c.add(
        "a cubemap of 5 faces",
        InvalidArgument,
        "and depth 6, or a multiple of 6 when layered (depth 5)",
        |g, _| {
            let desc =
                ArrayDesc::new_3d(ArrayFormat::F32, 1, 8, 8, 5).with_flags(ArrayFlags::CUBEMAP);
            answer(g.device.create_array(&desc))
        },
    );
    c.add(
        "a layered cubemap of 9 faces",
        InvalidArgument,
        "or a multiple of 6 when layered (depth 9)",
        |g, _| {
            let desc = ArrayDesc::new_layered(ArrayFormat::F32, 1, 8, 8, 9)
                .with_flags(ArrayFlags::CUBEMAP);
            answer(g.device.create_array(&desc))
        },
    );
    c.add(
        "an array wider than the device allows",
        InvalidArgument,
        "exceeds the device's limit",
        |g, _| {
            answer(
                g.device
                    .create_array(&ArrayDesc::new_2d(ArrayFormat::F32, 1, 1 << 40, 2)),
            )
        },
    );
    c.add(
        "an array with flags this version does not define",
        InvalidArgument,
        "desc->flags has bits this version does not define: 256",
        |g, _| {
            let desc = ArrayDesc::new_2d(ArrayFormat::F32, 1, 16, 16)
                .with_flags(ArrayFlags::from_bits(0x100));
            answer(g.device.create_array(&desc))
        },
    );
    c.add(
        "an array format the header does not define (raw)",
        InvalidArgument,
        "desc->format 7 is not a cuabi_array_format",
        |g, ctx| {
            let mut desc = array_desc();
            (desc.width, desc.height, desc.format) = (16, 16, 7);
            let mut out = null_mut();
            let st = unsafe { sys::cuabi_array_create(g.device.as_raw(), &desc, &mut out) };
            let _owned = Raw(out, sys::cuabi_array_release);
            raw(ctx, "cuabi_array_create", st)
        },
    );

    // --- Textures and surfaces
    c.add(
        "a texture that wraps without normalised coordinates",
        InvalidArgument,
        "desc->address_x wraps or mirrors, which needs normalized_coords = 1",
        |g, _| {
            let array = float_array(g, 16, 16, ArrayFlags::NONE)?;
            let options = TextureOptions::new().address_mode(AddressMode::Wrap);
            answer(Texture::new(TextureSource::array(&array), &options))
        },
    );
    c.add(
        "a texture that mirrors in z without normalised coordinates",
        InvalidArgument,
        "desc->address_z wraps or mirrors",
        |g, _| {
            let array = float_array(g, 16, 16, ArrayFlags::NONE)?;
            let options = TextureOptions::new().address_modes(
                AddressMode::Clamp,
                AddressMode::Border,
                AddressMode::Mirror,
            );
            answer(Texture::new(TextureSource::array(&array), &options))
        },
    );
    c.add(
        "linear filtering of integer elements read as integers",
        InvalidArgument,
        "linear filtering of integer elements needs read_mode CUABI_READ_NORMALIZED_FLOAT",
        |g, _| {
            let array = g
                .device
                .create_array(&ArrayDesc::new_2d(ArrayFormat::U8, 1, 16, 16))?;
            let options = TextureOptions::new().filter(FilterMode::Linear);
            answer(Texture::new(TextureSource::array(&array), &options))
        },
    );
    c.add(
        "normalised-float reads of 32-bit floats",
        InvalidArgument,
        "read_mode CUABI_READ_NORMALIZED_FLOAT applies to 8- and 16-bit integer formats only",
        |g, _| {
            let array = float_array(g, 16, 16, ArrayFlags::NONE)?;
            let options = TextureOptions::new().read_mode(ReadMode::NormalizedFloat);
            answer(Texture::new(TextureSource::array(&array), &options))
        },
    );
    c.add(
        "a linear-memory texture with linear filtering",
        InvalidArgument,
        "it takes neither linear filtering nor normalized coordinates",
        |g, _| {
            let b = g.device.alloc_zeroed::<f32>(1024)?;
            let offset = aligned_offset(g, b.device_ptr())?;
            let source = TextureSource::linear(&b, ArrayFormat::F32, 1, 256).offset(offset);
            let options = TextureOptions::new().filter(FilterMode::Linear);
            answer(Texture::new(source, &options))
        },
    );
    c.add(
        "a linear-memory texture past the buffer's end",
        OutOfRange,
        "the texture's 257 elements of 4 bytes from offset 0 reach past the end of the \
         1024-byte buffer",
        |g, _| {
            let b = g.device.alloc_zeroed::<f32>(256)?;
            answer(Texture::new(
                TextureSource::linear(&b, ArrayFormat::F32, 1, 257),
                &TextureOptions::new(),
            ))
        },
    );
    c.add(
        "a linear-memory texture off the texture alignment",
        InvalidArgument,
        "is not a multiple of the device's texture alignment",
        |g, _| {
            let b = g.device.alloc_zeroed::<f32>(1024)?;
            let offset = aligned_offset(g, b.device_ptr())? + 4;
            let source = TextureSource::linear(&b, ArrayFormat::F32, 1, 128).offset(offset);
            answer(Texture::new(source, &TextureOptions::new()))
        },
    );
    c.add(
        "a 2D texture over an unpitched buffer with no pitch",
        InvalidArgument,
        "desc->pitch is 0 and the buffer is not pitched",
        |g, _| {
            let b = g.device.alloc_zeroed::<f32>(1024)?;
            let source = TextureSource::pitched(&b, ArrayFormat::F32, 1, 32, 32, 0);
            answer(Texture::new(source, &TextureOptions::new()))
        },
    );
    c.add(
        "a 2D texture whose pitch is smaller than its row",
        InvalidArgument,
        "desc->pitch 128 is smaller than a row of 100 elements of 4 bytes",
        |g, _| {
            let b = g.device.alloc_zeroed::<f32>(1024)?;
            let source = TextureSource::pitched(&b, ArrayFormat::F32, 1, 100, 2, 128);
            answer(Texture::new(source, &TextureOptions::new()))
        },
    );
    c.add(
        "a texture over a buffer of 3-channel elements",
        InvalidArgument,
        "desc->channels is 3",
        |g, _| {
            let b = g.device.alloc_zeroed::<f32>(1024)?;
            let source = TextureSource::linear(&b, ArrayFormat::F32, 3, 16);
            answer(Texture::new(source, &TextureOptions::new()))
        },
    );
    c.add(
        "a texture over both an array and a buffer (raw)",
        InvalidArgument,
        "desc sets both array and buffer; a texture reads exactly one",
        |g, ctx| {
            let array = float_array(g, 16, 16, ArrayFlags::NONE)?;
            let b = g.device.alloc_zeroed::<f32>(256)?;
            let mut desc = texture_desc();
            (desc.array, desc.buffer, desc.width) = (array.as_raw(), b.as_raw(), 256);
            texture_create(ctx, &desc)
        },
    );
    c.add(
        "a texture over an array given a buffer's width (raw)",
        InvalidArgument,
        "desc->offset, width, height and pitch describe a buffer",
        |g, ctx| {
            let array = float_array(g, 16, 16, ArrayFlags::NONE)?;
            let mut desc = texture_desc();
            (desc.array, desc.width) = (array.as_raw(), 16);
            texture_create(ctx, &desc)
        },
    );
    c.add(
        "a texture filter the header does not define (raw)",
        InvalidArgument,
        "desc->filter 7 is not a cuabi_filter_mode",
        |g, ctx| {
            let array = float_array(g, 16, 16, ArrayFlags::NONE)?;
            let mut desc = texture_desc();
            (desc.array, desc.filter) = (array.as_raw(), 7);
            texture_create(ctx, &desc)
        },
    );
    c.add(
        "a surface over an array made without SURFACE_LOAD_STORE",
        InvalidArgument,
        "the array was made without CUABI_ARRAY_SURFACE_LOAD_STORE",
        |g, _| answer(Surface::new(&float_array(g, 16, 16, ArrayFlags::NONE)?)),
    );
    c.add(
        "an array's handle released while a texture reads it (raw)",
        InvalidHandle,
        "array is not a live cuabi_array",
        |g, ctx| {
            let mut desc = array_desc();
            (desc.width, desc.height) = (16, 16);
            let mut array = null_mut();
            let st = unsafe { sys::cuabi_array_create(g.device.as_raw(), &desc, &mut array) };
            if st != 0 {
                return Err("the array could not be made".into());
            }
            let mut tdesc = texture_desc();
            tdesc.array = array;
            let mut texture = null_mut();
            let made = unsafe { sys::cuabi_texture_create(&tdesc, &mut texture) } == 0;
            let texture = Raw(texture, sys::cuabi_texture_release);
            unsafe { sys::cuabi_array_release(array) };
            if !made {
                return Err("the texture could not be made".into());
            }
            let mut out = null_mut();
            let st = unsafe { sys::cuabi_surface_create(array, &mut out) };
            let _owned = Raw(out, sys::cuabi_surface_release);
            let ran = raw(ctx, "cuabi_surface_create", st);
            let mut object = 0u64;
            let alive = unsafe { sys::cuabi_texture_get_handle(texture.0, &mut object) } == 0;
            ctx.expect(
                alive && object != 0,
                "the texture died with its array's handle",
            );
            ran
        },
    );
    c
}
