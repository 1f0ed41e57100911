// CUDA arrays, texture and surface objects, and copies in three dimensions,
// every extent and range checked before the driver sees it.
#include <string>

#include "driver_log.hpp"
#include "memory.hpp"

namespace cuabi {

namespace {

std::string str(uint64_t v) { return std::to_string(v); }

bool valid_channels(uint32_t channels) { return channels == 1 || channels == 2 || channels == 4; }

void check_format(cuabi_array_format format, uint32_t channels, const char* what) {
  if (format_size(format) == 0)
    fail_invalid(std::string(what) + "format " + std::to_string(format) +
                 " is not a cuabi_array_format");
  if (!valid_channels(channels))
    fail_invalid(std::string(what) + "channels is " + std::to_string(channels) +
                 "; expected 1, 2 or 4");
}

void within(size_t value, int limit, const char* what, const char* attribute) {
  if (limit > 0 && value > static_cast<size_t>(limit))
    fail_invalid(std::string(what) + " " + str(value) + " exceeds the device's limit of " +
                 std::to_string(limit) + " (" + attribute + ")");
}

bool is_integer(cuabi_array_format f) { return f != CUABI_FORMAT_F16 && f != CUABI_FORMAT_F32; }

}  // namespace

size_t format_size(cuabi_array_format format) {
  switch (format) {
    case CUABI_FORMAT_U8:
    case CUABI_FORMAT_S8: return 1;
    case CUABI_FORMAT_U16:
    case CUABI_FORMAT_S16:
    case CUABI_FORMAT_F16: return 2;
    case CUABI_FORMAT_U32:
    case CUABI_FORMAT_S32:
    case CUABI_FORMAT_F32: return 4;
    default: return 0;
  }
}

size_t Array::element_size() const { return format_size(desc.format) * desc.channels; }

Array::~Array() {
  if (enter_quietly(*this)) driver().cuArrayDestroy(array);
}

Ref<Array> create_array(Ref<Device> dev, const cuabi_array_desc* desc) {
  check_format(desc->format, desc->channels, "desc->");
  const uint32_t known = CUABI_ARRAY_LAYERED | CUABI_ARRAY_SURFACE_LOAD_STORE |
                         CUABI_ARRAY_TEXTURE_GATHER | CUABI_ARRAY_CUBEMAP;
  if (desc->flags & ~known)
    fail_invalid("desc->flags has bits this version does not define: " +
                 std::to_string(desc->flags));
  const bool layered = desc->flags & CUABI_ARRAY_LAYERED;
  const size_t w = desc->width, h = desc->height, d = desc->depth;
  if (w == 0) fail_invalid("desc->width is 0: an array needs at least one element");
  if (h == 0 && d != 0 && !layered)
    fail_invalid("desc->depth is " + str(d) +
                 " with height 0: a 3D array needs a height (or set CUABI_ARRAY_LAYERED for "
                 "layers of 1D arrays)");
  if (layered && d == 0) fail_invalid("a layered array needs desc->depth >= 1 (its layers)");
  if ((desc->flags & CUABI_ARRAY_TEXTURE_GATHER) && (h == 0 || d != 0 || layered))
    fail_invalid("CUABI_ARRAY_TEXTURE_GATHER applies to 2D arrays only");
  const bool cubemap = desc->flags & CUABI_ARRAY_CUBEMAP;
  if (cubemap && (w != h || (layered ? d == 0 || d % 6 != 0 : d != 6)))
    fail_invalid("a cubemap has square faces (width " + str(w) + ", height " + str(h) +
                 ") and depth 6, or a multiple of 6 when layered (depth " + str(d) + ")");
  dev->make_current();
  const Device& D = *dev;
  if (cubemap) {
    within(w, D.get_attribute(layered ? CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURECUBEMAP_LAYERED_WIDTH
                                      : CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURECUBEMAP_WIDTH),
           "desc->width", "MAXIMUM_TEXTURECUBEMAP_WIDTH");
  } else if (layered && h == 0) {
    within(w, D.get_attribute(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_LAYERED_WIDTH), "desc->width",
           "MAXIMUM_TEXTURE1D_LAYERED_WIDTH");
    within(d, D.get_attribute(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_LAYERED_LAYERS), "desc->depth",
           "MAXIMUM_TEXTURE1D_LAYERED_LAYERS");
  } else if (layered) {
    within(w, D.get_attribute(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LAYERED_WIDTH), "desc->width",
           "MAXIMUM_TEXTURE2D_LAYERED_WIDTH");
    within(h, D.get_attribute(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LAYERED_HEIGHT), "desc->height",
           "MAXIMUM_TEXTURE2D_LAYERED_HEIGHT");
    within(d, D.get_attribute(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LAYERED_LAYERS), "desc->depth",
           "MAXIMUM_TEXTURE2D_LAYERED_LAYERS");
  } else if (d != 0) {
    within(w, D.get_attribute(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_WIDTH), "desc->width",
           "MAXIMUM_TEXTURE3D_WIDTH");
    within(h, D.get_attribute(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_HEIGHT), "desc->height",
           "MAXIMUM_TEXTURE3D_HEIGHT");
    within(d, D.get_attribute(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_DEPTH), "desc->depth",
           "MAXIMUM_TEXTURE3D_DEPTH");
  } else if (h != 0) {
    within(w, D.get_attribute(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_WIDTH), "desc->width",
           "MAXIMUM_TEXTURE2D_WIDTH");
    within(h, D.get_attribute(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_HEIGHT), "desc->height",
           "MAXIMUM_TEXTURE2D_HEIGHT");
  } else {
    within(w, D.get_attribute(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_WIDTH), "desc->width",
           "MAXIMUM_TEXTURE1D_WIDTH");
  }
  CUDA_ARRAY3D_DESCRIPTOR ad{};
  ad.Width = w;
  ad.Height = h;
  ad.Depth = d;
  ad.Format = static_cast<CUarray_format>(desc->format);
  ad.NumChannels = desc->channels;
  if (layered) ad.Flags |= CUDA_ARRAY3D_LAYERED;
  if (desc->flags & CUABI_ARRAY_SURFACE_LOAD_STORE) ad.Flags |= CUDA_ARRAY3D_SURFACE_LDST;
  if (desc->flags & CUABI_ARRAY_TEXTURE_GATHER) ad.Flags |= CUDA_ARRAY3D_TEXTURE_GATHER;
  if (cubemap) ad.Flags |= CUDA_ARRAY3D_CUBEMAP;
  CUarray a = nullptr;
  const CUresult r = driver().cuArray3DCreate(&a, &ad);
  if (r == CUDA_ERROR_OUT_OF_MEMORY)
    fail(CUABI_ERROR_OUT_OF_MEMORY, "cuArray3DCreate failed: out of device memory on device " +
                                        std::to_string(D.ordinal) + driver_log_of_failure(),
         r);
  check(r, "cuArray3DCreate");
  cuabi_array_desc kept = *desc;
  kept.struct_size = sizeof(cuabi_array_desc);
  return make<Array>(std::move(dev), a, kept);
}

// ---------------------------------------------------------------------------
// Textures and surfaces
// ---------------------------------------------------------------------------

Texture::Texture(Ref<Device> dev, CUtexObject t, Ref<Array> a, Ref<Buffer> b)
    : DeviceChild(kKind, std::move(dev)), texture(t), array(std::move(a)), buffer(std::move(b)) {
  if (buffer) buffer->users.fetch_add(1, std::memory_order_acq_rel);
}

Texture::~Texture() {
  if (enter_quietly(*this)) driver().cuTexObjectDestroy(texture);
  if (buffer) buffer->users.fetch_sub(1, std::memory_order_acq_rel);
}

Ref<Texture> create_texture(const cuabi_texture_desc& t, Ref<Array> array, Ref<Buffer> buffer) {
  if (!array == !buffer)
    fail_invalid(array ? "desc sets both array and buffer; a texture reads exactly one"
                       : "desc sets neither array nor buffer; a texture reads exactly one");
  const cuabi_address_mode modes[3] = {t.address_x, t.address_y, t.address_z};
  const char* mode_names[3] = {"desc->address_x", "desc->address_y", "desc->address_z"};
  for (int i = 0; i < 3; ++i) {
    if (modes[i] < CUABI_ADDRESS_WRAP || modes[i] > CUABI_ADDRESS_BORDER)
      fail_invalid(std::string(mode_names[i]) + " " + std::to_string(modes[i]) +
                   " is not a cuabi_address_mode");
    if ((modes[i] == CUABI_ADDRESS_WRAP || modes[i] == CUABI_ADDRESS_MIRROR) &&
        !t.normalized_coords)
      fail_invalid(std::string(mode_names[i]) +
                   " wraps or mirrors, which needs normalized_coords = 1");
  }
  if (t.filter != CUABI_FILTER_POINT && t.filter != CUABI_FILTER_LINEAR)
    fail_invalid("desc->filter " + std::to_string(t.filter) + " is not a cuabi_filter_mode");
  if (t.read_mode != CUABI_READ_ELEMENT_TYPE && t.read_mode != CUABI_READ_NORMALIZED_FLOAT)
    fail_invalid("desc->read_mode " + std::to_string(t.read_mode) + " is not a cuabi_read_mode");
  if (t.normalized_coords > 1)
    fail_invalid("desc->normalized_coords is " + std::to_string(t.normalized_coords) +
                 "; expected 0 or 1");

  CUDA_RESOURCE_DESC res{};
  cuabi_array_format format;
  Ref<Device> dev;
  if (array) {
    if (t.offset || t.width || t.height || t.pitch)
      fail_invalid("desc->offset, width, height and pitch describe a buffer; a texture over an "
                   "array takes the array's shape (leave them 0)");
    format = array->desc.format;
    res.resType = CU_RESOURCE_TYPE_ARRAY;
    res.res.array.hArray = array->array;
    dev = array->device;
  } else {
    check_format(t.format, t.channels, "desc->");
    format = t.format;
    const Buffer& b = *buffer;
    dev = b.device;
    if (t.width == 0) fail_invalid("desc->width is 0: a texture needs at least one element");
    const size_t es = format_size(t.format) * t.channels;
    if (t.offset > b.size)
      fail(CUABI_ERROR_OUT_OF_RANGE,
           "desc->offset " + str(t.offset) + " is past the " + str(b.size) + "-byte buffer");
    const size_t avail = b.size - t.offset;
    b.enter();
    if (t.height == 0) {
      if (t.width > avail / es)
        fail(CUABI_ERROR_OUT_OF_RANGE, "the texture's " + str(t.width) + " elements of " +
                                           str(es) + " bytes from offset " + str(t.offset) +
                                           " reach past the end of the " + str(b.size) +
                                           "-byte buffer");
      const int align = dev->get_attribute(CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT);
      if (align > 0 && (b.ptr + t.offset) % static_cast<size_t>(align) != 0)
        fail_invalid("the texture's start (the buffer's address + desc->offset " +
                     str(t.offset) + ") is not a multiple of the device's texture alignment (" +
                     std::to_string(align) + " bytes)");
      if (t.filter == CUABI_FILTER_LINEAR || t.normalized_coords)
        fail_invalid("a texture over linear memory (height 0) is read with tex1Dfetch by "
                     "index: it takes neither linear filtering nor normalized coordinates");
      res.resType = CU_RESOURCE_TYPE_LINEAR;
      res.res.linear.devPtr = b.ptr + t.offset;
      res.res.linear.format = static_cast<CUarray_format>(t.format);
      res.res.linear.numChannels = t.channels;
      res.res.linear.sizeInBytes = t.width * es;
    } else {
      const size_t pitch = t.pitch ? t.pitch : b.pitch;
      if (pitch == 0)
        fail_invalid("desc->pitch is 0 and the buffer is not pitched: give the row pitch");
      if (t.width > pitch / es)
        fail_invalid("desc->pitch " + str(pitch) + " is smaller than a row of " + str(t.width) +
                     " elements of " + str(es) + " bytes");
      if (t.height - 1 > (avail - t.width * es) / pitch)
        fail(CUABI_ERROR_OUT_OF_RANGE, "the texture's " + str(t.height) + " rows of pitch " +
                                           str(pitch) + " from offset " + str(t.offset) +
                                           " reach past the end of the " + str(b.size) +
                                           "-byte buffer");
      const int align = dev->get_attribute(CU_DEVICE_ATTRIBUTE_TEXTURE_PITCH_ALIGNMENT);
      if (align > 0 && (pitch % static_cast<size_t>(align) != 0 ||
                        (b.ptr + t.offset) % static_cast<size_t>(align) != 0))
        fail_invalid("the pitch (" + str(pitch) + ") and the start (offset " + str(t.offset) +
                     ") of a pitched texture must be multiples of the device's texture pitch "
                     "alignment (" + std::to_string(align) + " bytes)");
      res.resType = CU_RESOURCE_TYPE_PITCH2D;
      res.res.pitch2D.devPtr = b.ptr + t.offset;
      res.res.pitch2D.format = static_cast<CUarray_format>(t.format);
      res.res.pitch2D.numChannels = t.channels;
      res.res.pitch2D.width = t.width;
      res.res.pitch2D.height = t.height;
      res.res.pitch2D.pitchInBytes = pitch;
    }
  }
  if (t.read_mode == CUABI_READ_NORMALIZED_FLOAT && (!is_integer(format) || format_size(format) > 2))
    fail_invalid("read_mode CUABI_READ_NORMALIZED_FLOAT applies to 8- and 16-bit integer "
                 "formats only");
  if (t.filter == CUABI_FILTER_LINEAR && is_integer(format) &&
      t.read_mode != CUABI_READ_NORMALIZED_FLOAT)
    fail_invalid("linear filtering of integer elements needs read_mode "
                 "CUABI_READ_NORMALIZED_FLOAT");
  CUDA_TEXTURE_DESC td{};
  for (int i = 0; i < 3; ++i) td.addressMode[i] = static_cast<CUaddress_mode>(modes[i]);
  td.filterMode = static_cast<CUfilter_mode>(t.filter);
  if (t.normalized_coords) td.flags |= CU_TRSF_NORMALIZED_COORDINATES;
  if (is_integer(format) && t.read_mode == CUABI_READ_ELEMENT_TYPE)
    td.flags |= CU_TRSF_READ_AS_INTEGER;
  td.borderColor[0] = t.border_r;
  td.borderColor[1] = t.border_g;
  td.borderColor[2] = t.border_b;
  td.borderColor[3] = t.border_a;
  dev->make_current();
  CUtexObject tex = 0;
  check(driver().cuTexObjectCreate(&tex, &res, &td, nullptr), "cuTexObjectCreate");
  return make<Texture>(std::move(dev), tex, std::move(array), std::move(buffer));
}

Surface::Surface(Ref<Array> a, CUsurfObject s)
    : DeviceChild(kKind, a->device), surface(s), array(std::move(a)) {}

Surface::~Surface() {
  if (enter_quietly(*this)) driver().cuSurfObjectDestroy(surface);
}

Ref<Surface> create_surface(Ref<Array> array) {
  if (!(array->desc.flags & CUABI_ARRAY_SURFACE_LOAD_STORE))
    fail_invalid("the array was made without CUABI_ARRAY_SURFACE_LOAD_STORE; surfaces need it");
  array->enter();
  CUDA_RESOURCE_DESC res{};
  res.resType = CU_RESOURCE_TYPE_ARRAY;
  res.res.array.hArray = array->array;
  CUsurfObject s = 0;
  check(driver().cuSurfObjectCreate(&s, &res), "cuSurfObjectCreate");
  return make<Surface>(std::move(array), s);
}

// ---------------------------------------------------------------------------
// Copies in three dimensions
// ---------------------------------------------------------------------------

namespace {

// a * b + c without overflow; false when it overflows.
bool mul_add(size_t a, size_t b, size_t c, size_t* out) {
  size_t m;
  if (__builtin_mul_overflow(a, b, &m)) return false;
  return !__builtin_add_overflow(m, c, out);
}

// Checks one side and fills its half of `p`.
void prepare_side(const CopySide& s, size_t width, size_t height, size_t depth, bool is_src,
                  CUDA_MEMCPY3D& p) {
  const std::string n = s.name;
  const int count = (s.host != nullptr) + (s.buffer != nullptr) + (s.array != nullptr);
  if (count != 1)
    fail_invalid(n + (count == 0 ? ": none of " : ": more than one of ") + n + "_host, " + n +
                 "_buffer, " + n + "_array is set; each side is exactly one");
  CUmemorytype type;
  size_t pitch = 0, rows = 0;
  if (s.array) {
    if (s.pitch || s.height)
      fail_invalid(n + "_pitch and " + n + "_height must be 0 for an array (it has its own)");
    const Array& a = *s.array;
    const size_t es = a.element_size();
    if (s.x_bytes % es || width % es)
      fail_invalid(n + "_x_bytes (" + str(s.x_bytes) + ") and width_bytes (" + str(width) +
                   ") must be whole elements of the array's " + str(es) + " bytes");
    const size_t aw = a.desc.width, ah = a.desc.height ? a.desc.height : 1,
                 ad = a.desc.depth ? a.desc.depth : 1;
    if (s.x_bytes / es > aw || width / es > aw - s.x_bytes / es)
      fail(CUABI_ERROR_OUT_OF_RANGE, n + " box's x range [" + str(s.x_bytes / es) + ", " +
                                         str(s.x_bytes / es + width / es) +
                                         ") exceeds the array's width of " + str(aw));
    if (s.y > ah || height > ah - s.y)
      fail(CUABI_ERROR_OUT_OF_RANGE, n + " box's rows [" + str(s.y) + ", " + str(s.y + height) +
                                         ") exceed the array's height of " + str(ah));
    if (s.z > ad || depth > ad - s.z)
      fail(CUABI_ERROR_OUT_OF_RANGE, n + " box's slices [" + str(s.z) + ", " + str(s.z + depth) +
                                         ") exceed the array's depth of " + str(ad));
    type = CU_MEMORYTYPE_ARRAY;
  } else {
    pitch = s.pitch ? s.pitch : (s.buffer && s.buffer->pitch ? s.buffer->pitch : width);
    // Rows per slice matter between slices only; a 2D box's default is
    // the rows it reaches.
    rows = s.height ? s.height : (depth > 1 ? height : s.y + height);
    if (s.x_bytes > pitch || width > pitch - s.x_bytes)
      fail_invalid(n + " pitch " + str(pitch) + " is smaller than the row: x_bytes " +
                   str(s.x_bytes) + " + width_bytes " + str(width));
    if (depth > 1 && (s.y > rows || height > rows - s.y))
      fail_invalid(n + " box's rows [" + str(s.y) + ", " + str(s.y + height) +
                   ") do not fit in a slice of " + str(rows) + " rows (" + n + "_height)");
    if (s.buffer) {
      // The last byte the box touches, plus one.
      size_t slice_bytes = 0, end_slice = 0, end_row = 0, end = 0;
      const bool ok = mul_add(pitch, rows, 0, &slice_bytes) &&
                      mul_add(s.z + depth - 1, slice_bytes, 0, &end_slice) &&
                      mul_add(s.y + height - 1, pitch, end_slice, &end_row) &&
                      !__builtin_add_overflow(end_row, s.x_bytes + width, &end);
      if (!ok || end > s.buffer->size)
        fail(CUABI_ERROR_OUT_OF_RANGE,
             n + " box reaches " + (ok ? "byte " + str(end) : std::string("past 2^64 bytes")) +
                 " of the " + str(s.buffer->size) + "-byte buffer (rows of " + str(pitch) +
                 " bytes, slices of " + str(rows) + " rows)");
      type = CU_MEMORYTYPE_DEVICE;
    } else {
      type = CU_MEMORYTYPE_HOST;
    }
  }
  if (is_src) {
    p.srcMemoryType = type;
    p.srcXInBytes = s.x_bytes;
    p.srcY = s.y;
    p.srcZ = s.z;
    p.srcHost = s.host;
    p.srcDevice = s.buffer ? s.buffer->ptr : 0;
    p.srcArray = s.array ? s.array->array : nullptr;
    p.srcPitch = pitch;
    p.srcHeight = rows;
  } else {
    p.dstMemoryType = type;
    p.dstXInBytes = s.x_bytes;
    p.dstY = s.y;
    p.dstZ = s.z;
    p.dstHost = const_cast<void*>(s.host);
    p.dstDevice = s.buffer ? s.buffer->ptr : 0;
    p.dstArray = s.array ? s.array->array : nullptr;
    p.dstPitch = pitch;
    p.dstHeight = rows;
  }
}

const DeviceChild* device_side(const CopySide& s) {
  if (s.buffer) return s.buffer;
  if (s.array) return s.array;
  return nullptr;
}

}  // namespace

Copy3dPlan plan_copy_3d(const CopySide& src, const CopySide& dst, size_t width, size_t height,
                        size_t depth) {
  if (height == 0) height = 1;
  if (depth == 0) depth = 1;
  Copy3dPlan plan;
  CUDA_MEMCPY3D& p = plan.params;
  p = CUDA_MEMCPY3D{};
  prepare_side(src, width, height, depth, true, p);
  prepare_side(dst, width, height, depth, false, p);
  const DeviceChild* a = device_side(src);
  const DeviceChild* b = device_side(dst);
  if (!a && !b)
    fail_invalid("both sides are host memory; at least one must be a buffer or an array");
  if (a && b && a->device.get() != b->device.get())
    fail_invalid("src is on device " + std::to_string(a->device->ordinal) + " and dst on device " +
                 std::to_string(b->device->ordinal) +
                 "; a 3D copy stays on one device (copy between devices with cuabi_buffer_copy)");
  plan.src_side = a;
  plan.dst_side = b;
  p.WidthInBytes = width;
  p.Height = height;
  p.Depth = depth;
  return plan;
}

void copy_3d(const CopySide& src, const CopySide& dst, size_t width, size_t height, size_t depth,
             const Pin<Stream>* stream) {
  Copy3dPlan plan = plan_copy_3d(src, dst, width, height, depth);
  const DeviceChild* a = plan.src_side;
  const DeviceChild* b = plan.dst_side;
  const CUDA_MEMCPY3D& p = plan.params;
  if (width == 0) return;
  const DeviceChild& on = a ? *a : *b;
  on.enter();
  if (a && b && a != b) b->device->check_epoch(b->epoch);
  if (stream) {
    CUstream s = stream_for(*stream, *on.device);
    check(driver().cuMemcpy3DAsync(&p, s), "cuMemcpy3DAsync");
  } else {
    check(driver().cuMemcpy3D(&p), "cuMemcpy3D");
    check(driver().cuStreamSynchronize(nullptr), "cuStreamSynchronize");
  }
}

}  // namespace cuabi
