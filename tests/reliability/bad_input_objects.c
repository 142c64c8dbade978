/* The bad-input calls on contexts, queues, buffers, programs and kernels (see bad_input.c). */
#include "bad_input.h"

/* ---- contexts and queues ---- */
CALL(create_context_null_devices) {
  cl_int err = CL_SUCCESS;
  cl_context_properties props[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)S.platform, 0};
  cl_context c = clCreateContext(props, 1, NULL, NULL, NULL, &err);
  return err_of(err, c, release_context_any);
}
CALL(create_context_zero_devices) {
  cl_int err = CL_SUCCESS;
  cl_context_properties props[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)S.platform, 0};
  cl_context c = clCreateContext(props, 0, &S.device, NULL, NULL, &err);
  return err_of(err, c, release_context_any);
}
CALL(create_context_unknown_property) {
  cl_int err = CL_SUCCESS;
  cl_context_properties props[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)S.platform, 0x7777, 1, 0};
  cl_context c = clCreateContext(props, 1, &S.device, NULL, NULL, &err);
  return err_of(err, c, release_context_any);
}
CALL(create_context_null_device_in_list) {
  cl_int err = CL_SUCCESS;
  cl_context_properties props[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)S.platform, 0};
  cl_device_id none = NULL;
  cl_context c = clCreateContext(props, 1, &none, NULL, NULL, &err);
  return err_of(err, c, release_context_any);
}
CALL(create_context_user_data_without_callback) {
  cl_int err = CL_SUCCESS;
  cl_context_properties props[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)S.platform, 0};
  cl_context c = clCreateContext(props, 1, &S.device, NULL, &err, &err);
  return err_of(err, c, release_context_any);
}
CALL(create_context_from_type_bad_type) {
  cl_int err = CL_SUCCESS;
  cl_context_properties props[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)S.platform, 0};
  cl_context c = clCreateContextFromType(props, 0, NULL, NULL, &err);
  return err_of(err, c, release_context_any);
}
OBJ_CALL(create_queue_null_context, cl_command_queue, release_queue_any,
         clCreateCommandQueue(NULL, S.device, 0, &err))
OBJ_CALL(create_queue_null_device, cl_command_queue, release_queue_any,
         clCreateCommandQueue(S.ctx, NULL, 0, &err))
OBJ_CALL(create_queue_unknown_properties, cl_command_queue, release_queue_any,
         clCreateCommandQueue(S.ctx, S.device, (cl_command_queue_properties)1 << 20, &err))
CALL(create_queue_with_properties_unknown_key) {
  cl_int err = CL_SUCCESS;
  cl_queue_properties props[] = {0x7777, 1, 0};
  cl_command_queue q = clCreateCommandQueueWithProperties(S.ctx, S.device, props, &err);
  return err_of(err, q, release_queue_any);
}
CALL(get_context_info_unknown_param) { return clGetContextInfo(S.ctx, 0x7777, 0, NULL, NULL); }
CALL(get_context_info_size_too_small) {
  cl_uint count = 0;
  return clGetContextInfo(S.ctx, CL_CONTEXT_NUM_DEVICES, 1, &count, NULL);
}
CALL(get_queue_info_unknown_param) { return clGetCommandQueueInfo(S.q, 0x7777, 0, NULL, NULL); }
CALL(release_context_null) { return clReleaseContext(NULL); }
CALL(release_queue_null) { return clReleaseCommandQueue(NULL); }
CALL(retain_queue_null) { return clRetainCommandQueue(NULL); }
CALL(finish_null_queue) { return clFinish(NULL); }
CALL(flush_null_queue) { return clFlush(NULL); }

/* ---- buffers ---- */
OBJ_CALL(create_buffer_zero_size, cl_mem, release_mem_any, clCreateBuffer(S.ctx, CL_MEM_READ_WRITE, 0, NULL, &err))
OBJ_CALL(create_buffer_over_max_alloc, cl_mem, release_mem_any,
         clCreateBuffer(S.ctx, CL_MEM_READ_WRITE, (size_t)S.max_alloc + 1, NULL, &err))
OBJ_CALL(create_buffer_read_and_write_only, cl_mem, release_mem_any,
         clCreateBuffer(S.ctx, CL_MEM_READ_ONLY | CL_MEM_WRITE_ONLY, 64, NULL, &err))
OBJ_CALL(create_buffer_use_host_ptr_null, cl_mem, release_mem_any,
         clCreateBuffer(S.ctx, CL_MEM_USE_HOST_PTR, 64, NULL, &err))
OBJ_CALL(create_buffer_host_ptr_without_flag, cl_mem, release_mem_any,
         clCreateBuffer(S.ctx, CL_MEM_READ_WRITE, 64, S.host, &err))
OBJ_CALL(create_buffer_use_and_alloc_host_ptr, cl_mem, release_mem_any,
         clCreateBuffer(S.ctx, CL_MEM_USE_HOST_PTR | CL_MEM_ALLOC_HOST_PTR, 64, S.host, &err))
OBJ_CALL(create_buffer_null_context, cl_mem, release_mem_any,
         clCreateBuffer(NULL, CL_MEM_READ_WRITE, 64, NULL, &err))
CALL(create_sub_buffer_beyond_parent) {
  cl_int err = CL_SUCCESS;
  cl_buffer_region r = {0, (size_t)N * 4 + 128};
  cl_mem m = clCreateSubBuffer(S.a, 0, CL_BUFFER_CREATE_TYPE_REGION, &r, &err);
  return err_of(err, m, release_mem_any);
}
CALL(create_sub_buffer_misaligned_origin) {
  cl_int err = CL_SUCCESS;
  cl_buffer_region r = {4, 256};
  cl_mem m = clCreateSubBuffer(S.a, 0, CL_BUFFER_CREATE_TYPE_REGION, &r, &err);
  return err_of(err, m, release_mem_any);
}
CALL(create_sub_buffer_of_sub_buffer) {
  cl_int err = CL_SUCCESS;
  cl_buffer_region r = {0, 64};
  cl_mem m = clCreateSubBuffer(S.sub, 0, CL_BUFFER_CREATE_TYPE_REGION, &r, &err);
  return err_of(err, m, release_mem_any);
}
CALL(create_sub_buffer_unknown_type) {
  cl_int err = CL_SUCCESS;
  cl_buffer_region r = {0, 64};
  cl_mem m = clCreateSubBuffer(S.a, 0, 0x7777, &r, &err);
  return err_of(err, m, release_mem_any);
}
CALL(create_sub_buffer_null_region) {
  cl_int err = CL_SUCCESS;
  cl_mem m = clCreateSubBuffer(S.a, 0, CL_BUFFER_CREATE_TYPE_REGION, NULL, &err);
  return err_of(err, m, release_mem_any);
}
CALL(create_sub_buffer_zero_size) {
  cl_int err = CL_SUCCESS;
  cl_buffer_region r = {0, 0};
  cl_mem m = clCreateSubBuffer(S.a, 0, CL_BUFFER_CREATE_TYPE_REGION, &r, &err);
  return err_of(err, m, release_mem_any);
}
CALL(read_buffer_beyond_end) { return clEnqueueReadBuffer(S.q, S.small, CL_TRUE, 4, sizeof S.host, S.host, 0, NULL, NULL); }
CALL(read_buffer_null_pointer) { return clEnqueueReadBuffer(S.q, S.small, CL_TRUE, 0, 64, NULL, 0, NULL, NULL); }
CALL(read_buffer_null_queue) { return clEnqueueReadBuffer(NULL, S.small, CL_TRUE, 0, 64, S.host, 0, NULL, NULL); }
CALL(read_buffer_null_buffer) { return clEnqueueReadBuffer(S.q, NULL, CL_TRUE, 0, 64, S.host, 0, NULL, NULL); }
CALL(read_buffer_other_context) { return clEnqueueReadBuffer(S.q, S.m2, CL_TRUE, 0, 64, S.host, 0, NULL, NULL); }
CALL(write_buffer_beyond_end) {
  return clEnqueueWriteBuffer(S.q, S.small, CL_TRUE, sizeof S.host - 4, 8, S.host, 0, NULL, NULL);
}
CALL(write_buffer_host_read_only) {
  return clEnqueueWriteBuffer(S.q, S.host_read_only, CL_TRUE, 0, 64, S.host, 0, NULL, NULL);
}
CALL(write_buffer_split_output_beyond_end) {
  return clEnqueueWriteBuffer(S.q, S.c, CL_TRUE, (size_t)N * 4 - 8, 64, S.host, 0, NULL, NULL);
}
CALL(copy_buffer_overlap) { return clEnqueueCopyBuffer(S.q, S.small, S.small, 0, 32, 64, 0, NULL, NULL); }
CALL(copy_buffer_beyond_end) {
  return clEnqueueCopyBuffer(S.q, S.a, S.small, 0, 0, sizeof S.host + 4, 0, NULL, NULL);
}
CALL(fill_buffer_pattern_size_3) {
  int32_t pattern = 7;
  return clEnqueueFillBuffer(S.q, S.small, &pattern, 3, 0, 48, 0, NULL, NULL);
}
CALL(fill_buffer_offset_not_multiple) {
  int32_t pattern = 7;
  return clEnqueueFillBuffer(S.q, S.small, &pattern, 4, 2, 64, 0, NULL, NULL);
}
CALL(fill_buffer_beyond_end) {
  int32_t pattern = 7;
  return clEnqueueFillBuffer(S.q, S.small, &pattern, 4, 0, sizeof S.host + 4, 0, NULL, NULL);
}
CALL(map_buffer_beyond_end) {
  cl_int err = CL_SUCCESS;
  void* p = clEnqueueMapBuffer(S.q, S.small, CL_TRUE, CL_MAP_READ, 0, sizeof S.host + 4, 0, NULL, NULL, &err);
  if (p) clEnqueueUnmapMemObject(S.q, S.small, p, 0, NULL, NULL), clFinish(S.q);
  return err;
}
CALL(map_buffer_read_and_invalidate) {
  cl_int err = CL_SUCCESS;
  void* p = clEnqueueMapBuffer(S.q, S.small, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE_INVALIDATE_REGION, 0, 64, 0, NULL,
                               NULL, &err);
  if (p) clEnqueueUnmapMemObject(S.q, S.small, p, 0, NULL, NULL), clFinish(S.q);
  return err;
}
CALL(unmap_pointer_never_mapped) { return clEnqueueUnmapMemObject(S.q, S.small, S.host, 0, NULL, NULL); }
CALL(read_buffer_rect_beyond_end) {
  size_t origin[3] = {0, 0, 0}, region[3] = {64, 65, 1};
  return clEnqueueReadBufferRect(S.q, S.small, CL_TRUE, origin, origin, region, 64, 0, 64, 0, S.host, 0, NULL, NULL);
}
CALL(write_buffer_rect_pitch_below_row) {
  size_t origin[3] = {0, 0, 0}, region[3] = {64, 2, 1};
  return clEnqueueWriteBufferRect(S.q, S.small, CL_TRUE, origin, origin, region, 32, 0, 64, 0, S.host, 0, NULL, NULL);
}
CALL(release_mem_null) { return clReleaseMemObject(NULL); }
CALL(retain_mem_null) { return clRetainMemObject(NULL); }
CALL(get_mem_info_unknown_param) { return clGetMemObjectInfo(S.a, 0x7777, 0, NULL, NULL); }

/* ---- programs and kernels ---- */
OBJ_CALL(create_program_zero_count, cl_program, release_program_any,
         clCreateProgramWithSource(S.ctx, 0, &kBadInputSource, NULL, &err))
CALL(create_program_null_entry) {
  cl_int err = CL_SUCCESS;
  const char* sources[2] = {kBadInputSource, NULL};
  cl_program p = clCreateProgramWithSource(S.ctx, 2, sources, NULL, &err);
  return err_of(err, p, release_program_any);
}
OBJ_CALL(create_program_null_context, cl_program, release_program_any,
         clCreateProgramWithSource(NULL, 1, &kBadInputSource, NULL, &err))
CALL(create_program_binary_garbage) {
  cl_int err = CL_SUCCESS, status = CL_SUCCESS;
  const unsigned char garbage[16] = "not a binary!!!";
  const unsigned char* binaries[1] = {garbage};
  size_t length = sizeof garbage;
  cl_program p = clCreateProgramWithBinary(S.ctx, 1, &S.device, &length, binaries, &status, &err);
  return err_of(err, p, release_program_any);
}
static cl_int build_fresh(const char* source, const char* options) {
  cl_int err = CL_SUCCESS;
  cl_program p = clCreateProgramWithSource(S.ctx, 1, &source, NULL, &err);
  if (!p) return err;
  err = clBuildProgram(p, 1, &S.device, options, NULL, NULL);
  clReleaseProgram(p);
  return err;
}
CALL(build_unknown_option) { return build_fresh(kBadInputSource, "-fno-such-option-coex"); }
CALL(build_bad_cl_std) { return build_fresh(kBadInputSource, "-cl-std=CL9.9"); }
CALL(build_syntax_error) { return build_fresh("__kernel void broken(__global int* p) { p[0] = ; }\n", ""); }
CALL(build_null_program) { return clBuildProgram(NULL, 1, &S.device, "", NULL, NULL); }
CALL(build_devices_null_with_count) { return clBuildProgram(S.unbuilt, 1, NULL, "", NULL, NULL); }
CALL(build_user_data_without_callback) { return clBuildProgram(S.unbuilt, 1, &S.device, "", NULL, S.host); }
OBJ_CALL(create_kernel_unknown_name, cl_kernel, release_kernel_any, clCreateKernel(S.program, "no_such_kernel", &err))
OBJ_CALL(create_kernel_null_name, cl_kernel, release_kernel_any, clCreateKernel(S.program, NULL, &err))
OBJ_CALL(create_kernel_unbuilt_program, cl_kernel, release_kernel_any, clCreateKernel(S.unbuilt, "add", &err))
OBJ_CALL(create_kernel_null_program, cl_kernel, release_kernel_any, clCreateKernel(NULL, "add", &err))
CALL(create_kernels_in_program_array_too_small) {
  cl_kernel one[1] = {NULL};
  cl_uint n = 0;
  cl_int err = clCreateKernelsInProgram(S.program, 1, one, &n);
  if (err == CL_SUCCESS && one[0]) clReleaseKernel(one[0]);
  return err;
}
CALL(get_program_build_info_unknown_param) {
  return clGetProgramBuildInfo(S.program, S.device, 0x7777, 0, NULL, NULL);
}
CALL(get_kernel_info_unknown_param) { return clGetKernelInfo(S.probe, 0x7777, 0, NULL, NULL); }
CALL(get_kernel_work_group_info_null_kernel) {
  size_t size = 0;
  return clGetKernelWorkGroupInfo(NULL, S.device, CL_KERNEL_WORK_GROUP_SIZE, sizeof size, &size, NULL);
}
CALL(release_program_null) { return clReleaseProgram(NULL); }
CALL(release_kernel_null) { return clReleaseKernel(NULL); }
CALL(set_arg_index_out_of_range) {
  cl_int n = N;
  return clSetKernelArg(S.probe, 4, sizeof n, &n);
}
CALL(set_arg_buffer_wrong_size) { return clSetKernelArg(S.probe, 0, sizeof(cl_int), &S.a); }
CALL(set_arg_scalar_wrong_size) {
  cl_long n = N;
  return clSetKernelArg(S.probe, 3, sizeof n, &n);
}
CALL(set_arg_scalar_null_value) { return clSetKernelArg(S.probe, 3, sizeof(cl_int), NULL); }
CALL(set_arg_local_zero_size) { return clSetKernelArg(S.with_local, 1, 0, NULL); }
CALL(set_arg_local_with_value) {
  cl_int v = 0;
  return clSetKernelArg(S.with_local, 1, sizeof v, &v);
}
CALL(set_arg_null_kernel) {
  cl_int n = N;
  return clSetKernelArg(NULL, 3, sizeof n, &n);
}

const BadCall kObjectCalls[] = {
    ENTRY(create_context_null_devices), ENTRY(create_context_zero_devices), ENTRY(create_context_unknown_property),
    ENTRY(create_context_null_device_in_list), ENTRY(create_context_user_data_without_callback),
    ENTRY(create_context_from_type_bad_type), ENTRY(create_queue_null_context), ENTRY(create_queue_null_device),
    ENTRY(create_queue_unknown_properties), ENTRY(create_queue_with_properties_unknown_key),
    ENTRY(get_context_info_unknown_param), ENTRY(get_context_info_size_too_small), ENTRY(get_queue_info_unknown_param),
    ENTRY(release_context_null), ENTRY(release_queue_null), ENTRY(retain_queue_null), ENTRY(finish_null_queue),
    ENTRY(flush_null_queue),

    ENTRY(create_buffer_zero_size), ENTRY(create_buffer_over_max_alloc), ENTRY(create_buffer_read_and_write_only),
    ENTRY(create_buffer_use_host_ptr_null), ENTRY(create_buffer_host_ptr_without_flag),
    ENTRY(create_buffer_use_and_alloc_host_ptr), ENTRY(create_buffer_null_context),
    ENTRY(create_sub_buffer_beyond_parent), ENTRY(create_sub_buffer_misaligned_origin),
    ENTRY(create_sub_buffer_of_sub_buffer), ENTRY(create_sub_buffer_unknown_type),
    ENTRY(create_sub_buffer_null_region), ENTRY(create_sub_buffer_zero_size), ENTRY(read_buffer_beyond_end),
    ENTRY(read_buffer_null_pointer), ENTRY(read_buffer_null_queue), ENTRY(read_buffer_null_buffer),
    ENTRY(read_buffer_other_context), ENTRY(write_buffer_beyond_end), ENTRY(write_buffer_host_read_only),
    ENTRY(write_buffer_split_output_beyond_end), ENTRY(copy_buffer_overlap), ENTRY(copy_buffer_beyond_end),
    ENTRY(fill_buffer_pattern_size_3), ENTRY(fill_buffer_offset_not_multiple), ENTRY(fill_buffer_beyond_end),
    ENTRY(map_buffer_beyond_end), ENTRY(map_buffer_read_and_invalidate), ENTRY(unmap_pointer_never_mapped),
    ENTRY(read_buffer_rect_beyond_end), ENTRY(write_buffer_rect_pitch_below_row), ENTRY(release_mem_null),
    ENTRY(retain_mem_null), ENTRY(get_mem_info_unknown_param),

    ENTRY(create_program_zero_count), ENTRY(create_program_null_entry),
    ENTRY(create_program_null_context), ENTRY(create_program_binary_garbage), ENTRY(build_unknown_option),
    ENTRY(build_bad_cl_std), ENTRY(build_syntax_error), ENTRY(build_null_program),
    ENTRY(build_devices_null_with_count), ENTRY(build_user_data_without_callback), ENTRY(create_kernel_unknown_name),
    ENTRY(create_kernel_null_name), ENTRY(create_kernel_unbuilt_program), ENTRY(create_kernel_null_program),
    ENTRY(create_kernels_in_program_array_too_small), ENTRY(get_program_build_info_unknown_param),
    ENTRY(get_kernel_info_unknown_param), ENTRY(get_kernel_work_group_info_null_kernel), ENTRY(release_program_null),
    ENTRY(release_kernel_null), ENTRY(set_arg_index_out_of_range), ENTRY(set_arg_buffer_wrong_size),
    ENTRY(set_arg_scalar_wrong_size), ENTRY(set_arg_scalar_null_value), ENTRY(set_arg_local_zero_size),
    ENTRY(set_arg_local_with_value), ENTRY(set_arg_null_kernel),
};
const size_t kObjectCallCount = sizeof kObjectCalls / sizeof kObjectCalls[0];
