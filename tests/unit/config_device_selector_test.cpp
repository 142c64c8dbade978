#include <gtest/gtest.h>

#include "config/device_selector.h"
#include "config/fault_spec.h"

namespace coex::config {
namespace {

using Kind = DeviceSelectorTerm::Kind;

std::vector<DeviceSelectorTerm> parse_ok(const std::string& text) {
  std::string error;
  auto terms = parse_device_selector(text, &error);
  EXPECT_TRUE(terms.has_value()) << text << ": " << error;
  return terms.value_or(std::vector<DeviceSelectorTerm>{});
}

std::string parse_error(const std::string& text) {
  std::string error;
  EXPECT_FALSE(parse_device_selector(text, &error).has_value()) << text;
  return error;
}

TEST(DeviceSelector, ParsesEveryKindOfTerm) {
  const auto terms = parse_ok("all, 2 ,type:GPU,platform:Portable Computing,name:RTX 4090,!type:cpu,!3");
  ASSERT_EQ(terms.size(), 7u);
  EXPECT_EQ(terms[0].kind, Kind::All);
  EXPECT_FALSE(terms[0].exclude);
  EXPECT_EQ(terms[1].kind, Kind::Index);
  EXPECT_EQ(terms[1].index, 2);
  EXPECT_EQ(terms[2].kind, Kind::Type);
  EXPECT_EQ(terms[2].text, "gpu");
  EXPECT_EQ(terms[3].kind, Kind::Platform);
  EXPECT_EQ(terms[3].text, "Portable Computing");
  EXPECT_EQ(terms[4].kind, Kind::Name);
  EXPECT_EQ(terms[4].text, "RTX 4090");
  EXPECT_EQ(terms[5].kind, Kind::Type);
  EXPECT_TRUE(terms[5].exclude);
  EXPECT_EQ(terms[6].kind, Kind::Index);
  EXPECT_EQ(terms[6].index, 3);
  EXPECT_TRUE(terms[6].exclude);
}

TEST(DeviceSelector, RejectsBadTermsAndSaysWhich) {
  EXPECT_NE(parse_error("").find("empty"), std::string::npos);
  EXPECT_NE(parse_error("all,").find("term 2"), std::string::npos);
  EXPECT_NE(parse_error("all,,1").find("term 2"), std::string::npos);
  EXPECT_NE(parse_error("!").find("term 1"), std::string::npos);
  EXPECT_NE(parse_error("type:fpga").find("gpu, cpu or accelerator"), std::string::npos);
  EXPECT_NE(parse_error("gpu").find("write type:gpu"), std::string::npos);
  EXPECT_NE(parse_error("name:").find("needs text"), std::string::npos);
  EXPECT_NE(parse_error("platform:  ").find("needs text"), std::string::npos);
  EXPECT_NE(parse_error("vendor:nvidia").find("\"vendor:\""), std::string::npos);
  EXPECT_NE(parse_error("1x").find("device index"), std::string::npos);
  EXPECT_NE(parse_error("-1").find("term 1"), std::string::npos);
  EXPECT_NE(parse_error("12345678").find("device index"), std::string::npos);
  EXPECT_NE(parse_error("0,everything").find("term 2 \"everything\""), std::string::npos);
}

TEST(DeviceSelector, CheckFormFillsTheDetail) {
  std::string detail;
  EXPECT_TRUE(check_device_selector("all", detail));
  EXPECT_FALSE(check_device_selector("type:", detail));
  EXPECT_FALSE(detail.empty());
}

const SelectableDevice kPocl{0, "CPU", "Portable Computing Language", "pthread-AMD EPYC"};
const SelectableDevice kNvidia{1, "GPU", "NVIDIA CUDA", "NVIDIA H100 80GB HBM3"};
const SelectableDevice kQuadro{2, "GPU", "NVIDIA CUDA", "Quadro P400"};

std::vector<int64_t> selected(const std::string& selector) {
  std::vector<int64_t> indices;
  for (const SelectableDevice& d : {kPocl, kNvidia, kQuadro}) {
    if (device_selected(parse_ok(selector), d)) indices.push_back(d.index);
  }
  return indices;
}

TEST(DeviceSelector, Meaning) {
  using V = std::vector<int64_t>;
  EXPECT_EQ(selected("all"), (V{0, 1, 2}));
  EXPECT_EQ(selected("type:gpu"), (V{1, 2}));
  EXPECT_EQ(selected("type:gpu,!name:quadro"), (V{1}));
  EXPECT_EQ(selected("!name:QUADRO"), (V{0, 1}));  // only exclusions: everything else
  EXPECT_EQ(selected("0,2"), (V{0, 2}));
  EXPECT_EQ(selected("platform:nvidia"), (V{1, 2}));
  EXPECT_EQ(selected("platform:portable,name:H100"), (V{0, 1}));
  EXPECT_EQ(selected("all,!1,!type:cpu"), (V{2}));
  EXPECT_EQ(selected("type:accelerator"), (V{}));
}

TEST(FaultSpec, Parses) {
  std::string error;
  auto none = parse_fault_spec("", &error);
  ASSERT_TRUE(none.has_value());
  EXPECT_EQ(none->kind, FaultSpec::Kind::None);
  auto fail = parse_fault_spec("fail:1", &error);
  ASSERT_TRUE(fail.has_value());
  EXPECT_EQ(fail->kind, FaultSpec::Kind::Fail);
  EXPECT_EQ(fail->device, 1);
  auto build = parse_fault_spec(" build : 0 ", &error);
  ASSERT_TRUE(build.has_value());
  EXPECT_EQ(build->kind, FaultSpec::Kind::Build);
  EXPECT_EQ(build->device, 0);
  auto stall = parse_fault_spec("stall:2", &error);
  ASSERT_TRUE(stall.has_value());
  EXPECT_EQ(stall->kind, FaultSpec::Kind::Stall);
  EXPECT_EQ(stall->device, 2);
  EXPECT_EQ(stall->from_sub_launch, 1u);
  auto upload = parse_fault_spec("stall_upload:1@3", &error);
  ASSERT_TRUE(upload.has_value()) << error;
  EXPECT_EQ(upload->kind, FaultSpec::Kind::StallUpload);
  EXPECT_EQ(upload->device, 1);
  EXPECT_EQ(upload->from_sub_launch, 3u);
  auto late = parse_fault_spec("late_start:1", &error);
  ASSERT_TRUE(late.has_value()) << error;
  EXPECT_EQ(late->kind, FaultSpec::Kind::LateStart);
  EXPECT_EQ(late->device, 1);
  auto thrown = parse_fault_spec("throw_late:1@3", &error);
  ASSERT_TRUE(thrown.has_value()) << error;
  EXPECT_EQ(thrown->kind, FaultSpec::Kind::ThrowLate);
  EXPECT_EQ(thrown->device, 1);
  EXPECT_EQ(thrown->from_sub_launch, 3u);
}

TEST(FaultSpec, FromTheNthSubLaunchOn) {
  std::string error;
  auto later = parse_fault_spec("fail:1@5", &error);
  ASSERT_TRUE(later.has_value()) << error;
  EXPECT_EQ(later->device, 1);
  EXPECT_EQ(later->from_sub_launch, 5u);
  EXPECT_FALSE(fault_injected("fail:1@5", FaultSpec::Kind::Fail, 1, 4));
  EXPECT_TRUE(fault_injected("fail:1@5", FaultSpec::Kind::Fail, 1, 5));
  EXPECT_TRUE(fault_injected("fail:1@5", FaultSpec::Kind::Fail, 1, 6));
  EXPECT_FALSE(fault_injected("fail:1@5", FaultSpec::Kind::Fail, 0, 6));
  EXPECT_TRUE(fault_injected("stall: 0 @ 2", FaultSpec::Kind::Stall, 0, 2));
  EXPECT_TRUE(fault_injected("fail:1", FaultSpec::Kind::Fail, 1, 1));
}

TEST(FaultSpec, Rejects) {
  for (const char* bad :
       {"fail", "fail:", "fail:x", "crash:1", "build:-1", "stall:", "stall:x", "1", "fail:1@", "fail:1@0", "fail:1@x",
        "build:1@2", "fail:@2", "stall_upload:", "stall-upload:1", "late_start:", "late-start:1", "throw_late:"}) {
    std::string error;
    EXPECT_FALSE(parse_fault_spec(bad, &error).has_value()) << bad;
    EXPECT_FALSE(error.empty()) << bad;
  }
}

}  // namespace
}  // namespace coex::config
