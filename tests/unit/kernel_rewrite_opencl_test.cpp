// The rewrite on a real OpenCL driver: a launch run whole and the same launch run as sub-launches
// of the rewritten program (global offset and size per range of work-groups, DESIGN.md decision 3)
// must leave identical buffers. The driver is loaded with dlopen, so the test links coex_kernel
// only; without an OpenCL platform (or with one that cannot build) it is skipped.
#include <CL/cl.h>
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <iostream>
#include <numeric>

#include "kernel/kernel_analysis.h"
#include "kernel_corpus.h"

namespace coex::kernel {
namespace {

struct OpenCL {
  void* library = nullptr;
#define COEX_CL_FUNCTION(name) decltype(&::name) name = nullptr;
  COEX_CL_FUNCTION(clGetPlatformIDs)
  COEX_CL_FUNCTION(clGetDeviceIDs)
  COEX_CL_FUNCTION(clGetDeviceInfo)
  COEX_CL_FUNCTION(clCreateContext)
  COEX_CL_FUNCTION(clCreateCommandQueue)
  COEX_CL_FUNCTION(clCreateProgramWithSource)
  COEX_CL_FUNCTION(clBuildProgram)
  COEX_CL_FUNCTION(clGetProgramBuildInfo)
  COEX_CL_FUNCTION(clCreateKernel)
  COEX_CL_FUNCTION(clCreateBuffer)
  COEX_CL_FUNCTION(clSetKernelArg)
  COEX_CL_FUNCTION(clEnqueueNDRangeKernel)
  COEX_CL_FUNCTION(clEnqueueReadBuffer)
  COEX_CL_FUNCTION(clFinish)
  COEX_CL_FUNCTION(clReleaseMemObject)
  COEX_CL_FUNCTION(clReleaseKernel)
  COEX_CL_FUNCTION(clReleaseProgram)
  COEX_CL_FUNCTION(clReleaseCommandQueue)
  COEX_CL_FUNCTION(clReleaseContext)
#undef COEX_CL_FUNCTION
  cl_context context = nullptr;
  cl_device_id device = nullptr;
  cl_command_queue queue = nullptr;
  std::string name;

  bool open(cl_uint platform_index) {
    library = dlopen("libOpenCL.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!library) return false;
#define COEX_CL_LOAD(name) name = reinterpret_cast<decltype(name)>(dlsym(library, #name)); if (!name) return false;
    COEX_CL_LOAD(clGetPlatformIDs) COEX_CL_LOAD(clGetDeviceIDs) COEX_CL_LOAD(clGetDeviceInfo) COEX_CL_LOAD(clCreateContext)
    COEX_CL_LOAD(clCreateCommandQueue) COEX_CL_LOAD(clCreateProgramWithSource) COEX_CL_LOAD(clBuildProgram)
    COEX_CL_LOAD(clGetProgramBuildInfo) COEX_CL_LOAD(clCreateKernel) COEX_CL_LOAD(clCreateBuffer)
    COEX_CL_LOAD(clSetKernelArg) COEX_CL_LOAD(clEnqueueNDRangeKernel) COEX_CL_LOAD(clEnqueueReadBuffer)
    COEX_CL_LOAD(clFinish) COEX_CL_LOAD(clReleaseMemObject) COEX_CL_LOAD(clReleaseKernel)
    COEX_CL_LOAD(clReleaseProgram) COEX_CL_LOAD(clReleaseCommandQueue) COEX_CL_LOAD(clReleaseContext)
#undef COEX_CL_LOAD
    cl_platform_id platforms[16];
    cl_uint count = 0;
    if (clGetPlatformIDs(16, platforms, &count) != CL_SUCCESS || platform_index >= count) return false;
    cl_platform_id platform = platforms[platform_index];
    if (clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, &count) != CL_SUCCESS || count == 0) return false;
    cl_int err = CL_SUCCESS;
    context = clCreateContext(nullptr, 1, &device, nullptr, nullptr, &err);
    if (err != CL_SUCCESS) return false;
    queue = clCreateCommandQueue(context, device, 0, &err);
    char text[256] = {};
    clGetDeviceInfo(device, CL_DEVICE_NAME, sizeof text - 1, text, nullptr);
    name = text;
    return err == CL_SUCCESS;
  }

  ~OpenCL() {
    if (queue) clReleaseCommandQueue(queue);
    if (context) clReleaseContext(context);
    // The library stays loaded: drivers do not like to be unloaded.
  }

  cl_kernel build(const std::string& source, const std::string& name) {
    const char* text = source.c_str();
    cl_int err = CL_SUCCESS;
    cl_program program = clCreateProgramWithSource(context, 1, &text, nullptr, &err);
    EXPECT_EQ(err, CL_SUCCESS);
    err = clBuildProgram(program, 1, &device, "", nullptr, nullptr);
    if (err != CL_SUCCESS) {
      std::string log(1 << 16, '\0');
      clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, log.size(), log.data(), nullptr);
      ADD_FAILURE() << "build failed: " << log.c_str() << "\n" << source;
      clReleaseProgram(program);
      return nullptr;
    }
    cl_kernel kernel = clCreateKernel(program, name.c_str(), &err);
    clReleaseProgram(program);  // the kernel keeps it alive
    EXPECT_EQ(err, CL_SUCCESS);
    return kernel;
  }
};

// One context per platform (the GPU machine has NVIDIA's and PoCL's); the current one is what the
// argument setters below use.
std::vector<OpenCL*>& platforms() {
  static std::vector<OpenCL*> all = [] {
    std::vector<OpenCL*> out;
    for (cl_uint i = 0; i < 16; ++i) {
      auto* c = new OpenCL;
      if (!c->open(i)) {
        delete c;  // past the last platform
        break;
      }
      out.push_back(c);
    }
    return out;
  }();
  return all;
}
OpenCL* g_current = nullptr;
OpenCL& opencl() { return *g_current; }

// A libclang linked into this process would put its libLLVM in the global scope, where PoCL's own
// LLVM binds to it and crashes; coex loads libclang with dlopen(RTLD_LOCAL) instead, which only
// helps when nothing linked it. Checked before the analysis loads its own copy.
bool llvm_linked_into_process() {
  for (const char* name : {"libclang-14.so.1", "libclang-15.so.1", "libclang-16.so.1", "libclang.so.1", "libLLVM-14.so.1",
                           "libLLVM-15.so.1", "libLLVM-16.so.1"})
    if (void* h = dlopen(name, RTLD_NOW | RTLD_NOLOAD)) {
      dlclose(h);
      return true;
    }
  return false;
}
const bool kLinkedLlvm = llvm_linked_into_process();

struct Launch {
  cl_uint work_dim;
  size_t offset[3];
  size_t global[3];
  size_t local[3];
};

// Sets the kernel's own arguments; buffers are created fresh from the same initial bytes for both
// runs and read back afterwards.
struct Buffer {
  std::vector<unsigned char> initial;
  cl_mem mem = nullptr;
};
using ArgSetter = std::function<void(cl_kernel, std::vector<Buffer>&)>;

std::vector<std::vector<unsigned char>> run(OpenCL& cl, cl_kernel kernel, std::vector<Buffer> buffers,
                                            const ArgSetter& set_args, const std::vector<Launch>& launches,
                                            const std::function<void(cl_kernel, const Launch&)>& extra) {
  for (auto& b : buffers) {
    cl_int err = CL_SUCCESS;
    b.mem = cl.clCreateBuffer(cl.context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, b.initial.size(), b.initial.data(), &err);
    EXPECT_EQ(err, CL_SUCCESS);
  }
  set_args(kernel, buffers);
  for (const Launch& l : launches) {
    if (extra) extra(kernel, l);
    EXPECT_EQ(cl.clEnqueueNDRangeKernel(cl.queue, kernel, l.work_dim, l.offset, l.global, l.local, 0, nullptr, nullptr),
              CL_SUCCESS);
  }
  std::vector<std::vector<unsigned char>> out;
  for (auto& b : buffers) {
    out.emplace_back(b.initial.size());
    EXPECT_EQ(cl.clEnqueueReadBuffer(cl.queue, b.mem, CL_TRUE, 0, b.initial.size(), out.back().data(), 0, nullptr, nullptr),
              CL_SUCCESS);
    cl.clReleaseMemObject(b.mem);
  }
  return out;
}

// The launch split into sub-launches of work-groups [cuts[i], cuts[i+1]) along dim.
std::vector<Launch> split(const Launch& whole, cl_uint dim, const std::vector<size_t>& cuts) {
  std::vector<Launch> parts;
  for (size_t i = 0; i + 1 < cuts.size(); ++i) {
    Launch part = whole;
    part.offset[dim] = whole.offset[dim] + cuts[i] * whole.local[dim];
    part.global[dim] = (cuts[i + 1] - cuts[i]) * whole.local[dim];
    parts.push_back(part);
  }
  return parts;
}

template <typename T>
Buffer buffer_of(const std::vector<T>& values) {
  Buffer b;
  b.initial.resize(values.size() * sizeof(T));
  std::memcpy(b.initial.data(), values.data(), b.initial.size());
  return b;
}

void split_equals_whole_on(OpenCL& cl, const std::string& corpus_name, const std::string& kernel_name,
                           const std::vector<Buffer>& buffers, const ArgSetter& set_args, const Launch& whole, cl_uint dim,
                           const std::vector<size_t>& cuts) {
  std::string source = testing::read_text(testing::corpus_dir() / (corpus_name + ".cl"));
  ProgramInfo info = analyze_program(source, "");
  const KernelInfo* k = info.find(kernel_name);
  ASSERT_NE(k, nullptr);
  ASSERT_TRUE(k->uses_launch_builtins && k->not_split_reason.empty());
  cl_kernel original = cl.build(source, kernel_name);
  cl_kernel rewritten = cl.build(rewrite_for_split(source, info), kernel_name);
  ASSERT_TRUE(original && rewritten);
  auto expected = run(cl, original, buffers, set_args, {whole}, nullptr);
  cl_uint first_extra = static_cast<cl_uint>(k->args.size());
  size_t groups = whole.global[dim] / whole.local[dim];
  auto extra = [&](cl_kernel kernel, const Launch& part) {
    cl_uint split_dim = dim;
    cl_ulong base = (part.offset[dim] - whole.offset[dim]) / whole.local[dim];
    cl_ulong num_groups = groups, global_size = whole.global[dim], global_offset = whole.offset[dim];
    EXPECT_EQ(cl.clSetKernelArg(kernel, first_extra + 0, sizeof split_dim, &split_dim), CL_SUCCESS);
    EXPECT_EQ(cl.clSetKernelArg(kernel, first_extra + 1, sizeof base, &base), CL_SUCCESS);
    EXPECT_EQ(cl.clSetKernelArg(kernel, first_extra + 2, sizeof num_groups, &num_groups), CL_SUCCESS);
    EXPECT_EQ(cl.clSetKernelArg(kernel, first_extra + 3, sizeof global_size, &global_size), CL_SUCCESS);
    EXPECT_EQ(cl.clSetKernelArg(kernel, first_extra + 4, sizeof global_offset, &global_offset), CL_SUCCESS);
  };
  auto got = run(cl, rewritten, buffers, set_args, split(whole, dim, cuts), extra);
  EXPECT_EQ(got, expected);
  // And the plain program split the same way is wrong, or the test proves nothing.
  auto naive = run(cl, original, buffers, set_args, split(whole, dim, cuts), nullptr);
  EXPECT_NE(naive, expected);
  cl.clReleaseKernel(original);
  cl.clReleaseKernel(rewritten);
}

void expect_split_equals_whole(const std::string& corpus_name, const std::string& kernel_name, std::vector<Buffer> buffers,
                               const ArgSetter& set_args, const Launch& whole, cl_uint dim, const std::vector<size_t>& cuts) {
  if (kLinkedLlvm) GTEST_SKIP() << "libclang/libLLVM is linked into this test: PoCL's LLVM would crash on it";
  if (platforms().empty()) GTEST_SKIP() << "no OpenCL platform";
  for (OpenCL* cl : platforms()) {
    g_current = cl;
    SCOPED_TRACE("on " + cl->name);
    std::cout << "[ device   ] " << cl->name << "\n";
    split_equals_whole_on(*cl, corpus_name, kernel_name, buffers, set_args, whole, dim, cuts);
  }
}

TEST(KernelRewriteOnOpenCL, ReductionIndexedByGroup) {
  std::vector<float> in(64);
  std::iota(in.begin(), in.end(), 1.0f);
  std::vector<float> partial(8, -1.0f);
  auto set_args = [](cl_kernel k, std::vector<Buffer>& b) {
    cl_uint n = 64;
    opencl().clSetKernelArg(k, 0, sizeof(cl_mem), &b[0].mem);
    opencl().clSetKernelArg(k, 1, sizeof(cl_mem), &b[1].mem);
    opencl().clSetKernelArg(k, 2, 8 * sizeof(float), nullptr);
    opencl().clSetKernelArg(k, 3, sizeof n, &n);
  };
  Launch whole{1, {0, 0, 0}, {64, 1, 1}, {8, 1, 1}};
  expect_split_equals_whole("reduction", "reduce_sum", {buffer_of(in), buffer_of(partial)}, set_args, whole, 0, {0, 3, 8});
}

TEST(KernelRewriteOnOpenCL, GridStrideLoopWithGlobalOffset) {
  std::vector<float> data(100);
  std::iota(data.begin(), data.end(), 0.0f);
  auto set_args = [](cl_kernel k, std::vector<Buffer>& b) {
    float factor = 3.0f;
    cl_ulong n = 100;
    opencl().clSetKernelArg(k, 0, sizeof(cl_mem), &b[0].mem);
    opencl().clSetKernelArg(k, 1, sizeof factor, &factor);
    opencl().clSetKernelArg(k, 2, sizeof n, &n);
  };
  Launch whole{1, {16, 0, 0}, {32, 1, 1}, {8, 1, 1}};
  expect_split_equals_whole("grid_stride", "scale_all", {buffer_of(data)}, set_args, whole, 0, {0, 1, 4});
}

TEST(KernelRewriteOnOpenCL, TwoDimensionalSplitAlongEitherDimension) {
  std::vector<int> data(16 * 4);
  std::iota(data.begin(), data.end(), 1);
  std::vector<int> sums(4 * 2, -1);
  auto set_args = [](cl_kernel k, std::vector<Buffer>& b) {
    opencl().clSetKernelArg(k, 0, sizeof(cl_mem), &b[0].mem);
    opencl().clSetKernelArg(k, 1, sizeof(cl_mem), &b[1].mem);
  };
  Launch whole{2, {0, 0, 0}, {16, 2, 1}, {4, 1, 1}};
  expect_split_equals_whole("two_kernels", "group_sums", {buffer_of(data), buffer_of(sums)}, set_args, whole, 1, {0, 1, 2});
  expect_split_equals_whole("two_kernels", "group_sums", {buffer_of(data), buffer_of(sums)}, set_args, whole, 0, {0, 3, 4});
}

// Helpers that read the launch builtins take the original values from their callers; the program
// also holds a kernel that is never split but calls one of them, so it must still build.
TEST(KernelRewriteOnOpenCL, HelpersWithGroupBuiltins) {
  std::vector<int> blocks(64, -1);
  auto set_block_args = [](cl_kernel k, std::vector<Buffer>& b) {
    cl_int block_size = 16;
    opencl().clSetKernelArg(k, 0, sizeof(cl_mem), &b[0].mem);
    opencl().clSetKernelArg(k, 1, sizeof block_size, &block_size);
  };
  Launch line{1, {0, 0, 0}, {64, 1, 1}, {16, 1, 1}};
  expect_split_equals_whole("helper_group_id", "per_block", {buffer_of(blocks)}, set_block_args, line, 0, {0, 1, 4});
  std::vector<cl_ulong> counts(64, 0);
  auto set_out = [](cl_kernel k, std::vector<Buffer>& b) { opencl().clSetKernelArg(k, 0, sizeof(cl_mem), &b[0].mem); };
  expect_split_equals_whole("helper_group_id", "count_groups", {buffer_of(counts)}, set_out, line, 0, {0, 2, 4});
  std::vector<int> grid(16 * 8, -1);
  Launch plane{2, {0, 0, 0}, {16, 8, 1}, {4, 4, 1}};
  expect_split_equals_whole("helper_group_id", "tiles", {buffer_of(grid)}, set_out, plane, 1, {0, 1, 2});
  expect_split_equals_whole("helper_group_id", "tiles", {buffer_of(grid)}, set_out, plane, 0, {0, 1, 4});
}

}  // namespace
}  // namespace coex::kernel
