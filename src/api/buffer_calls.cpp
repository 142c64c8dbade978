// Buffers: their records (flags, size, host pointer, sub-buffer parent, an image made from one),
// their release, every app command that may write one, after which the copies coex keeps elsewhere
// are stale, and every one that reads one on the app's device, before which home gets what other
// devices wrote (lazy home, exec/home_sync.h).
#include <algorithm>

#include "api/handler_util.h"
#include "exec/home_sync.h"

namespace coex::api {
namespace {

void record_buffer(cl_mem mem, cl_context context, cl_mem_flags flags, size_t size, void* host_ptr) {
  record_safely("clCreateBuffer", [&] {
    auto record = std::make_shared<model::BufferRecord>();
    record->handle = mem;
    record->context = context;
    record->context_record = rt().registries().contexts.find(context);
    record->flags = flags;
    record->size = size;
    record->host_ptr = host_ptr;
    // The shadows go with the state's last holder: the root, its sub-buffers, running launches.
    auto* created = new coherence::BufferState(size);
    // The app's own host memory is the buffer: apps read it after clFinish, with no call coex sees.
    created->lazy_allowed = !(flags & CL_MEM_USE_HOST_PTR);
    record->state = std::shared_ptr<coherence::BufferState>(created, [](auto* state) {
      for (auto& [device, shadow] : state->shadows()) {
        for (auto& [range, sub] : shadow.sub_buffers) cl().clReleaseMemObject(sub);
        if (shadow.mem) cl().clReleaseMemObject(shadow.mem);
      }
      delete state;
    });
    rt().registries().buffers.insert(mem, record);
  });
}

cl_mem CL_API_CALL create_buffer(cl_context context, cl_mem_flags flags, size_t size, void* host_ptr,
                                 cl_int* errcode_ret) {
  cl_mem mem = cl().clCreateBuffer(context, flags, size, host_ptr, errcode_ret);
  if (mem) record_buffer(mem, context, flags, size, host_ptr);
  return mem;
}

cl_mem CL_API_CALL create_buffer_with_properties(cl_context context, const cl_mem_properties* properties,
                                                 cl_mem_flags flags, size_t size, void* host_ptr, cl_int* errcode_ret) {
  cl_mem mem = cl().clCreateBufferWithProperties(context, properties, flags, size, host_ptr, errcode_ret);
  if (mem) record_buffer(mem, context, flags, size, host_ptr);
  return mem;
}

// Records `view` (a sub-buffer, or an image made from a buffer), of handle `handle`, as bytes
// [offset, offset + size) of the tracked buffer `of`: the root's state, its bytes counted from the
// root's start.
void record_view(const std::shared_ptr<model::BufferRecord>& view, cl_mem handle, cl_context context,
                 const std::shared_ptr<model::BufferRecord>& of, size_t offset, size_t size, cl_mem_flags flags) {
  view->handle = handle;
  view->context = context;
  view->context_record = of->context_record;
  view->flags = flags;
  view->size = size;
  view->root = of->root_or_self(of);
  view->origin = of->origin + offset;
  view->state = of->state;
  rt().registries().buffers.insert(handle, view);
}

cl_mem CL_API_CALL create_sub_buffer(cl_mem parent, cl_mem_flags flags, cl_buffer_create_type type, const void* info,
                                     cl_int* errcode_ret) {
  cl_mem mem = cl().clCreateSubBuffer(parent, flags, type, info, errcode_ret);
  if (!mem) return mem;
  record_safely("clCreateSubBuffer", [&] {
    auto parent_record = rt().registries().buffers.find(parent);
    if (!parent_record || type != CL_BUFFER_CREATE_TYPE_REGION) return;  // untracked: never split
    const auto* region = static_cast<const cl_buffer_region*>(info);
    auto record = std::make_shared<model::BufferRecord>();
    record_view(record, mem, parent_record->context, parent_record, region->origin, region->size,
                flags ? flags : parent_record->flags);
  });
  return mem;
}

// An image made from a buffer (CL_MEM_OBJECT_IMAGE1D_BUFFER, or a 2D image of cl_khr_image2d_from_buffer)
// is that buffer's memory under another handle. It is recorded as an alias of the whole buffer, as a
// sub-buffer of all of it would be, so that what reads it (a kernel coex does not split: image
// arguments; an image command) first gets on home what other devices wrote of the buffer, and what
// writes it makes their copies stale. Untracked, a read through the image after a split found device
// 1's half missing, and a split after a write through it read device 1's old copy
// (tests/apps/image_of_buffer). coex keeps a reference to the buffer, which bytes brought home for
// the image are written into (BufferRecord::image_of). Other images are no buffer's: untracked.
void record_image(cl_mem image, cl_context context, const cl_image_desc* desc) {
  if (!image || !desc || !desc->buffer) return;
  record_safely("clCreateImage", [&] {
    // An image made from such an image (OpenCL 2.0's 2D image of another) aliases the same buffer.
    auto buffer = rt().registries().buffers.find(desc->buffer);
    if (!buffer || cl().clRetainMemObject(buffer->home_handle()) != CL_SUCCESS) return;
    auto record = std::shared_ptr<model::BufferRecord>(new model::BufferRecord, [](model::BufferRecord* alias) {
      cl().clReleaseMemObject(alias->image_of);
      delete alias;
    });
    record->image_of = buffer->home_handle();
    record_view(record, image, context, buffer, 0, buffer->size, buffer->flags);
  });
}

cl_mem CL_API_CALL create_image(cl_context context, cl_mem_flags flags, const cl_image_format* format,
                                const cl_image_desc* desc, void* host_ptr, cl_int* errcode_ret) {
  cl_mem image = cl().clCreateImage(context, flags, format, desc, host_ptr, errcode_ret);
  record_image(image, context, desc);
  return image;
}

cl_mem CL_API_CALL create_image_with_properties(cl_context context, const cl_mem_properties* properties,
                                                cl_mem_flags flags, const cl_image_format* format,
                                                const cl_image_desc* desc, void* host_ptr, cl_int* errcode_ret) {
  cl_mem image = cl().clCreateImageWithProperties(context, properties, flags, format, desc, host_ptr, errcode_ret);
  record_image(image, context, desc);
  return image;
}

// At the app's last release the record leaves its registry; coex's shadow buffers go with the
// record's last holder (docs/design.md, "The way in").
cl_int CL_API_CALL release_mem(cl_mem mem) {
  cl_int err = cl().clReleaseMemObject(mem);
  if (err == CL_SUCCESS) record_safely("clReleaseMemObject", [&] { app_released(rt().registries().buffers, mem); });
  return err;
}

cl_int CL_API_CALL retain_mem(cl_mem mem) {
  cl_int err = cl().clRetainMemObject(mem);
  if (err == CL_SUCCESS) record_safely("clRetainMemObject", [&] { app_retained(rt().registries().buffers, mem); });
  return err;
}

// The app may write [offset, offset + size) of `mem` with the command it is enqueuing.
void app_writes(const char* call, cl_mem mem, size_t offset, size_t size) {
  record_safely(call, [&] {
    auto record = rt().registries().buffers.find(mem);
    if (!record) return;
    std::lock_guard lock(record->state->mutex());
    uint64_t begin = record->origin + std::min(offset, record->size);
    uint64_t end = record->origin + std::min(offset + size, record->size);
    record->state->app_wrote(begin, end);
  });
}
// The app is about to write [offset, offset + size) of `mem`: what home lacks of it comes home
// first, for a split in flight ahead of the command that reads those bytes there (BufferState::
// app_wrote then forgets them everywhere). Returns the error of that.
cl_int app_will_write(const char* call, cl_command_queue queue, cl_mem mem, size_t offset, size_t size) {
  return exec::app_will_write(rt(), call, queue, mem, offset, size);
}

// The app may write anywhere in `mem` (a rect, an image copy, an unmap: coex does not work out the
// range): what home lacks comes home first, for the bytes the command leaves as they are. Returns
// the error of that.
cl_int app_may_write_all(const char* call, cl_command_queue queue, cl_mem mem) {
  return exec::app_will_write(rt(), call, queue, mem, 0, SIZE_MAX);
}
void app_writes_all(const char* call, cl_mem mem) { app_writes(call, mem, 0, SIZE_MAX / 2); }

cl_int CL_API_CALL read_buffer(cl_command_queue queue, cl_mem buffer, cl_bool blocking, size_t offset, size_t size,
                               void* ptr, cl_uint nwait, const cl_event* wait, cl_event* event) {
  if (cl_int err = exec::app_reads(rt(), "clEnqueueReadBuffer", queue, buffer, offset, size)) return err;
  return cl().clEnqueueReadBuffer(queue, buffer, blocking, offset, size, ptr, nwait, wait, event);
}

cl_int CL_API_CALL read_buffer_rect(cl_command_queue queue, cl_mem buffer, cl_bool blocking,
                                    const size_t* buffer_origin, const size_t* host_origin, const size_t* region,
                                    size_t buffer_row_pitch, size_t buffer_slice_pitch, size_t host_row_pitch,
                                    size_t host_slice_pitch, void* ptr, cl_uint nwait, const cl_event* wait,
                                    cl_event* event) {
  if (cl_int err = exec::app_reads(rt(), "clEnqueueReadBufferRect", queue, buffer, 0, SIZE_MAX)) return err;
  return cl().clEnqueueReadBufferRect(queue, buffer, blocking, buffer_origin, host_origin, region, buffer_row_pitch,
                                      buffer_slice_pitch, host_row_pitch, host_slice_pitch, ptr, nwait, wait, event);
}

cl_int CL_API_CALL copy_buffer_to_image(cl_command_queue queue, cl_mem src, cl_mem dst, size_t src_offset,
                                        const size_t* dst_origin, const size_t* region, cl_uint nwait,
                                        const cl_event* wait, cl_event* event) {
  if (cl_int err = exec::app_reads(rt(), "clEnqueueCopyBufferToImage", queue, src, src_offset, SIZE_MAX)) return err;
  if (cl_int err = app_may_write_all("clEnqueueCopyBufferToImage", queue, dst)) return err;  // of a buffer's image
  cl_int err = cl().clEnqueueCopyBufferToImage(queue, src, dst, src_offset, dst_origin, region, nwait, wait, event);
  if (err == CL_SUCCESS) app_writes_all("clEnqueueCopyBufferToImage", dst);
  return err;
}

cl_int CL_API_CALL migrate_mem_objects(cl_command_queue queue, cl_uint count, const cl_mem* mems,
                                       cl_mem_migration_flags flags, cl_uint nwait, const cl_event* wait,
                                       cl_event* event) {
  for (cl_uint i = 0; mems && i < count; ++i)
    if (cl_int err = exec::app_reads(rt(), "clEnqueueMigrateMemObjects", queue, mems[i], 0, SIZE_MAX)) return err;
  return cl().clEnqueueMigrateMemObjects(queue, count, mems, flags, nwait, wait, event);
}

cl_int CL_API_CALL write_buffer(cl_command_queue queue, cl_mem buffer, cl_bool blocking, size_t offset, size_t size,
                                const void* ptr, cl_uint nwait, const cl_event* wait, cl_event* event) {
  if (cl_int err = app_will_write("clEnqueueWriteBuffer", queue, buffer, offset, size)) return err;
  cl_int err = cl().clEnqueueWriteBuffer(queue, buffer, blocking, offset, size, ptr, nwait, wait, event);
  if (err == CL_SUCCESS) app_writes("clEnqueueWriteBuffer", buffer, offset, size);
  return err;
}

cl_int CL_API_CALL write_buffer_rect(cl_command_queue queue, cl_mem buffer, cl_bool blocking,
                                     const size_t* buffer_origin, const size_t* host_origin, const size_t* region,
                                     size_t buffer_row_pitch, size_t buffer_slice_pitch, size_t host_row_pitch,
                                     size_t host_slice_pitch, const void* ptr, cl_uint nwait, const cl_event* wait,
                                     cl_event* event) {
  if (cl_int err = app_may_write_all("clEnqueueWriteBufferRect", queue, buffer)) return err;
  cl_int err =
      cl().clEnqueueWriteBufferRect(queue, buffer, blocking, buffer_origin, host_origin, region, buffer_row_pitch,
                                    buffer_slice_pitch, host_row_pitch, host_slice_pitch, ptr, nwait, wait, event);
  if (err == CL_SUCCESS) app_writes_all("clEnqueueWriteBufferRect", buffer);
  return err;
}

cl_int CL_API_CALL fill_buffer(cl_command_queue queue, cl_mem buffer, const void* pattern, size_t pattern_size,
                               size_t offset, size_t size, cl_uint nwait, const cl_event* wait, cl_event* event) {
  if (cl_int err = app_will_write("clEnqueueFillBuffer", queue, buffer, offset, size)) return err;
  cl_int err = cl().clEnqueueFillBuffer(queue, buffer, pattern, pattern_size, offset, size, nwait, wait, event);
  if (err == CL_SUCCESS) app_writes("clEnqueueFillBuffer", buffer, offset, size);
  return err;
}

cl_int CL_API_CALL copy_buffer(cl_command_queue queue, cl_mem src, cl_mem dst, size_t src_offset, size_t dst_offset,
                               size_t size, cl_uint nwait, const cl_event* wait, cl_event* event) {
  if (cl_int err = exec::app_reads(rt(), "clEnqueueCopyBuffer", queue, src, src_offset, size)) return err;
  if (cl_int err = app_will_write("clEnqueueCopyBuffer", queue, dst, dst_offset, size)) return err;
  cl_int err = cl().clEnqueueCopyBuffer(queue, src, dst, src_offset, dst_offset, size, nwait, wait, event);
  if (err == CL_SUCCESS) app_writes("clEnqueueCopyBuffer", dst, dst_offset, size);
  return err;
}

cl_int CL_API_CALL copy_buffer_rect(cl_command_queue queue, cl_mem src, cl_mem dst, const size_t* src_origin,
                                    const size_t* dst_origin, const size_t* region, size_t src_row_pitch,
                                    size_t src_slice_pitch, size_t dst_row_pitch, size_t dst_slice_pitch, cl_uint nwait,
                                    const cl_event* wait, cl_event* event) {
  if (cl_int err = exec::app_reads(rt(), "clEnqueueCopyBufferRect", queue, src, 0, SIZE_MAX)) return err;
  if (cl_int err = app_may_write_all("clEnqueueCopyBufferRect", queue, dst)) return err;
  cl_int err = cl().clEnqueueCopyBufferRect(queue, src, dst, src_origin, dst_origin, region, src_row_pitch,
                                            src_slice_pitch, dst_row_pitch, dst_slice_pitch, nwait, wait, event);
  if (err == CL_SUCCESS) app_writes_all("clEnqueueCopyBufferRect", dst);
  return err;
}

cl_int CL_API_CALL copy_image_to_buffer(cl_command_queue queue, cl_mem src, cl_mem dst, const size_t* src_origin,
                                        const size_t* region, size_t dst_offset, cl_uint nwait, const cl_event* wait,
                                        cl_event* event) {
  if (cl_int err = exec::app_reads(rt(), "clEnqueueCopyImageToBuffer", queue, src, 0, SIZE_MAX)) return err;
  if (cl_int err = app_may_write_all("clEnqueueCopyImageToBuffer", queue, dst)) return err;
  cl_int err = cl().clEnqueueCopyImageToBuffer(queue, src, dst, src_origin, region, dst_offset, nwait, wait, event);
  if (err == CL_SUCCESS) app_writes_all("clEnqueueCopyImageToBuffer", dst);
  return err;
}

// A write map hands the app the bytes to change on the host: stale from now on. (With
// CL_MEM_USE_HOST_PTR the app's host memory is the buffer, and a map is how it may touch it.)
void* CL_API_CALL map_buffer(cl_command_queue queue, cl_mem buffer, cl_bool blocking, cl_map_flags flags, size_t offset,
                             size_t size, cl_uint nwait, const cl_event* wait, cl_event* event, cl_int* errcode_ret) {
  // Even a write map: the app may change part of the range and leave the rest as it finds it. For
  // one, the whole buffer: its unmap may write anywhere as far as coex knows, and bytes written
  // home then would go into a mapped buffer (undefined behaviour).
  const bool write_map = flags & (CL_MAP_WRITE | CL_MAP_WRITE_INVALIDATE_REGION);
  if (cl_int lacked = exec::app_reads(rt(), "clEnqueueMapBuffer", queue, buffer, write_map ? 0 : offset,
                                      write_map ? SIZE_MAX : size);
      lacked) {
    if (errcode_ret) *errcode_ret = lacked;
    return nullptr;
  }
  void* ptr = cl().clEnqueueMapBuffer(queue, buffer, blocking, flags, offset, size, nwait, wait, event, errcode_ret);
  if (ptr && write_map) app_writes("clEnqueueMapBuffer", buffer, offset, size);
  return ptr;
}

// The unmap is when host writes reach the buffer; the map already marked the range, this marks it
// again so that a split launch that began in between does not claim it current.
cl_int CL_API_CALL unmap(cl_command_queue queue, cl_mem mem, void* ptr, cl_uint nwait, const cl_event* wait,
                         cl_event* event) {
  if (cl_int err = app_may_write_all("clEnqueueUnmapMemObject", queue, mem)) return err;
  cl_int err = cl().clEnqueueUnmapMemObject(queue, mem, ptr, nwait, wait, event);
  if (err == CL_SUCCESS) app_writes_all("clEnqueueUnmapMemObject", mem);
  return err;
}

// A native kernel gets the buffers of mem_list on the host: it may read and write them all.
cl_int CL_API_CALL enqueue_native_kernel(cl_command_queue queue, void(CL_CALLBACK* user_func)(void*), void* args,
                                         size_t cb_args, cl_uint num_mem_objects, const cl_mem* mem_list,
                                         const void** args_mem_loc, cl_uint nwait, const cl_event* wait,
                                         cl_event* event) {
  for (cl_uint i = 0; mem_list && i < num_mem_objects; ++i)
    if (cl_int err = app_may_write_all("clEnqueueNativeKernel", queue, mem_list[i])) return err;
  cl_int err = cl().clEnqueueNativeKernel(queue, user_func, args, cb_args, num_mem_objects, mem_list, args_mem_loc,
                                          nwait, wait, event);
  for (cl_uint i = 0; err == CL_SUCCESS && mem_list && i < num_mem_objects; ++i)
    app_writes_all("clEnqueueNativeKernel", mem_list[i]);
  return err;
}

// The image commands: each reads or writes a buffer where the image is one's alias (record_image),
// anywhere in it as far as coex works out; an image of no buffer is not found, and nothing is done.
cl_int CL_API_CALL read_image(cl_command_queue queue, cl_mem image, cl_bool blocking, const size_t* origin,
                              const size_t* region, size_t row_pitch, size_t slice_pitch, void* ptr, cl_uint nwait,
                              const cl_event* wait, cl_event* event) {
  if (cl_int err = exec::app_reads(rt(), "clEnqueueReadImage", queue, image, 0, SIZE_MAX)) return err;
  return cl().clEnqueueReadImage(queue, image, blocking, origin, region, row_pitch, slice_pitch, ptr, nwait, wait,
                                 event);
}

cl_int CL_API_CALL write_image(cl_command_queue queue, cl_mem image, cl_bool blocking, const size_t* origin,
                               const size_t* region, size_t row_pitch, size_t slice_pitch, const void* ptr,
                               cl_uint nwait, const cl_event* wait, cl_event* event) {
  if (cl_int err = app_may_write_all("clEnqueueWriteImage", queue, image)) return err;
  cl_int err =
      cl().clEnqueueWriteImage(queue, image, blocking, origin, region, row_pitch, slice_pitch, ptr, nwait, wait, event);
  if (err == CL_SUCCESS) app_writes_all("clEnqueueWriteImage", image);
  return err;
}

cl_int CL_API_CALL fill_image(cl_command_queue queue, cl_mem image, const void* color, const size_t* origin,
                              const size_t* region, cl_uint nwait, const cl_event* wait, cl_event* event) {
  if (cl_int err = app_may_write_all("clEnqueueFillImage", queue, image)) return err;
  cl_int err = cl().clEnqueueFillImage(queue, image, color, origin, region, nwait, wait, event);
  if (err == CL_SUCCESS) app_writes_all("clEnqueueFillImage", image);
  return err;
}

cl_int CL_API_CALL copy_image(cl_command_queue queue, cl_mem src, cl_mem dst, const size_t* src_origin,
                              const size_t* dst_origin, const size_t* region, cl_uint nwait, const cl_event* wait,
                              cl_event* event) {
  if (cl_int err = exec::app_reads(rt(), "clEnqueueCopyImage", queue, src, 0, SIZE_MAX)) return err;
  if (cl_int err = app_may_write_all("clEnqueueCopyImage", queue, dst)) return err;
  cl_int err = cl().clEnqueueCopyImage(queue, src, dst, src_origin, dst_origin, region, nwait, wait, event);
  if (err == CL_SUCCESS) app_writes_all("clEnqueueCopyImage", dst);
  return err;
}

// As map_buffer: a write map makes the whole buffer stale wherever else coex keeps it.
void* CL_API_CALL map_image(cl_command_queue queue, cl_mem image, cl_bool blocking, cl_map_flags flags,
                            const size_t* origin, const size_t* region, size_t* row_pitch, size_t* slice_pitch,
                            cl_uint nwait, const cl_event* wait, cl_event* event, cl_int* errcode_ret) {
  if (cl_int lacked = exec::app_reads(rt(), "clEnqueueMapImage", queue, image, 0, SIZE_MAX)) {
    if (errcode_ret) *errcode_ret = lacked;
    return nullptr;
  }
  void* ptr = cl().clEnqueueMapImage(queue, image, blocking, flags, origin, region, row_pitch, slice_pitch, nwait, wait,
                                     event, errcode_ret);
  if (ptr && (flags & (CL_MAP_WRITE | CL_MAP_WRITE_INVALIDATE_REGION))) app_writes_all("clEnqueueMapImage", image);
  return ptr;
}

}  // namespace

void install_buffer_calls(cl_icd_dispatch& table) {
  table.clCreateBuffer = create_buffer;
  table.clCreateBufferWithProperties = create_buffer_with_properties;
  table.clCreateSubBuffer = create_sub_buffer;
  table.clCreateImage = create_image;
  table.clCreateImageWithProperties = create_image_with_properties;
  table.clEnqueueReadImage = read_image;
  table.clEnqueueWriteImage = write_image;
  table.clEnqueueFillImage = fill_image;
  table.clEnqueueCopyImage = copy_image;
  table.clEnqueueMapImage = map_image;
  table.clReleaseMemObject = release_mem;
  table.clRetainMemObject = retain_mem;
  table.clEnqueueReadBuffer = read_buffer;
  table.clEnqueueReadBufferRect = read_buffer_rect;
  table.clEnqueueCopyBufferToImage = copy_buffer_to_image;
  table.clEnqueueMigrateMemObjects = migrate_mem_objects;
  table.clEnqueueNativeKernel = enqueue_native_kernel;
  table.clEnqueueWriteBuffer = write_buffer;
  table.clEnqueueWriteBufferRect = write_buffer_rect;
  table.clEnqueueFillBuffer = fill_buffer;
  table.clEnqueueCopyBuffer = copy_buffer;
  table.clEnqueueCopyBufferRect = copy_buffer_rect;
  table.clEnqueueCopyImageToBuffer = copy_image_to_buffer;
  table.clEnqueueMapBuffer = map_buffer;
  table.clEnqueueUnmapMemObject = unmap;
}

}  // namespace coex::api
