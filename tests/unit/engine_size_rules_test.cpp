// buffers_bytes (exec/size_rules.h): the bytes a launch's buffer arguments hold, counted as the check
// of the launch's job counts them (bytes_read): each root buffer's ranges once, so that the bound a
// kernel without loops meets before its job is made weighs no more than that check (docs/design.md,
// "Size by time"). The buffers are records in the registry (local_services.h): their handles need
// no driver object behind them. Without an OpenCL device the test is skipped.
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "exec/size_rules.h"
#include "local_services.h"

namespace coex::exec {
namespace {

class BuffersBytesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    if (!services_.start(&why)) GTEST_SKIP() << why;
  }
  void TearDown() override {
    for (cl_mem handle : handles_) services_.registries().buffers.erase(handle);
  }

  // A buffer of `size` bytes; with `parent`, a sub-buffer of it at `origin`.
  cl_mem buffer(size_t size, cl_mem parent = nullptr, size_t origin = 0) {
    cl_mem handle = reinterpret_cast<cl_mem>(uintptr_t{0x1000} * (handles_.size() + 1));
    auto record = std::make_shared<model::BufferRecord>();
    record->handle = handle;
    record->size = size;
    if (parent) {
      record->root = services_.registries().buffers.find(parent);
      record->origin = origin;
    }
    services_.registries().buffers.insert(handle, record);
    handles_.push_back(handle);
    return handle;
  }
  uint64_t bytes(const std::vector<cl_mem>& args, const std::vector<bool>& which = {}) {
    std::vector<model::KernelArgValue> values;
    for (cl_mem arg : args) values.push_back(value_arg(arg));
    return buffers_bytes(services_, values, which);
  }

  LocalServices services_;
  std::vector<cl_mem> handles_;
};

TEST_F(BuffersBytesTest, ABufferPassedTwiceCountsOnce) {
  const cl_mem a = buffer(1000), c = buffer(300);
  EXPECT_EQ(bytes({a, c}), 1300u);
  EXPECT_EQ(bytes({a, a, c}), 1300u);  // vadd(a, a, c)
}

TEST_F(BuffersBytesTest, SubBuffersCountTheirRootsRangesOnce) {
  const cl_mem parent = buffer(1000);
  const cl_mem low = buffer(100, parent, 0), high = buffer(100, parent, 500), over = buffer(200, parent, 50);
  EXPECT_EQ(bytes({low}), 100u);
  EXPECT_EQ(bytes({low, high}), 200u);           // apart in one root
  EXPECT_EQ(bytes({low, over}), 250u);           // overlapping: [0, 250)
  EXPECT_EQ(bytes({parent, low, high}), 1000u);  // inside their parent
}

TEST_F(BuffersBytesTest, OnlyTheArgumentsAskedForAndOnlyBuffersCount) {
  const cl_mem a = buffer(1000), b = buffer(300);
  EXPECT_EQ(bytes({a, b}, {false, true}), 300u);
  EXPECT_EQ(bytes({a, b}, {true, false}), 1000u);
  std::vector<model::KernelArgValue> values{value_arg(a), value_arg(7), value_arg(b)};  // an int among them
  EXPECT_EQ(buffers_bytes(services_, values, {}), 1300u);
  const cl_mem unknown = reinterpret_cast<cl_mem>(uintptr_t{0x7777000});  // no buffer coex tracks
  EXPECT_EQ(bytes({a, unknown}), 1000u);
}

}  // namespace
}  // namespace coex::exec
