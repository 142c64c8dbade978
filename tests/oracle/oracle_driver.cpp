// The footprint oracle (docs/testing.md): runs corpus kernels (tests/unit/kernels/*.json, "launch") on
// Oclgrind with the access recorder plugin and checks coex's footprints against what every range of
// work-groups really touched (footprint_check.h).
//
//   coex_footprint_oracle PLUGIN.so NAME...   (corpus programs by name: matmul_2d app_jacobi2d ...)
//
// One launch per kernel, whole, as the sidecar says; the plugin attributes each access to its
// work-group, so every chunking is checked from that one record: along every dimension, each single
// group and halves and thirds for (a), and along the dimension coex splits (the last) halves,
// thirds and the whole launch for (b), which is what a static split over two or three devices
// runs. Then (e): the launch's work-groups along that dimension cut as coex cuts them at enqueue
// (at most 64 equal runs), coex's verdict on them from the model against the conflicts of what they
// really loaded and stored (a missed dependency fails; a refusal they do not need is reported as
// OVER-CONSERVATIVE). This needs no rewritten program: the accesses of a group do not depend on how
// the launch is split (kernel_rewrite_opencl_test checks that the rewrite keeps them so).
// Links Oclgrind's OpenCL runtime directly: no ICD, no other platform. Exit status 1 on any
// violation, with one line per violation.
#include <CL/cl.h>
#include <dlfcn.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "footprint_check.h"
#include "kernel/kernel_analysis.h"
#include "kernel_corpus.h"
#include "kernel_launch_spec.h"

namespace {

using namespace coex;
using kernel::testing::CorpusLaunch;
using kernel::testing::CorpusProgram;

using LastRun = const oracle::KernelRun* (*)();

struct Session {
  cl_context context = nullptr;
  cl_command_queue queue = nullptr;
  cl_device_id device = nullptr;
  LastRun last_run = nullptr;

  Session() = default;
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;
  // Released at exit so that the sanitizer stage's leak check sees Oclgrind's objects freed.
  ~Session() {
    if (queue) clReleaseCommandQueue(queue);
    if (context) clReleaseContext(context);
  }
};

// Chunks of the groups along one dimension: each group alone (a sample past 32 groups), for (a)
// only; halves, thirds and the whole launch, for (a) and (b).
struct PlannedChunk {
  oracle::Chunk chunk;
  bool coex_like;  // a share of a static split over two or three devices
};

std::vector<PlannedChunk> chunkings(uint32_t dim, uint64_t groups) {
  std::vector<PlannedChunk> out;
  uint64_t step = groups > 32 ? groups / 16 : 1;
  for (uint64_t g = 0; g < groups; g += step) out.push_back({{dim, g, g + 1}, false});
  if (groups > 32) out.push_back({{dim, groups - 1, groups}, false});
  for (uint64_t parts : {2, 3}) {
    for (uint64_t p = 0; p < parts && parts <= groups; ++p)
      out.push_back({{dim, groups * p / parts, groups * (p + 1) / parts}, true});
  }
  out.push_back({{dim, 0, groups}, true});
  return out;
}

class KernelOracle {
 public:
  KernelOracle(Session& s, const CorpusProgram& program, const kernel::KernelInfo& info, const nlohmann::json& spec)
      : s_(s), program_(program), info_(info), spec_(spec) {}

  // Runs the launch, checks it; the violations, each one line.
  std::vector<std::string> run(cl_program built) {
    std::string error;
    launch_ = kernel::testing::make_launch(spec_.at("launch"), info_, error);
    if (!error.empty()) return {"launch: " + error};
    if (!info_.footprint) return {"not splittable (" + info_.not_split_reason + "): no footprint to check"};
    std::vector<std::string> problems = launch(built);
    if (!problems.empty()) return problems;
    const oracle::KernelRun* run = s_.last_run();
    if (run->kernel != info_.name) return {"the plugin saw no launch of " + info_.name};
    for (const std::string& e : run->errors) problems.push_back("Oclgrind: " + e);
    // Accesses through no argument are to program-scope constants: no footprint covers those.
    if (run->unattributed)
      std::printf("  %s: %zu accesses to program-scope data\n", info_.name.c_str(), run->unattributed);
    check_all(*run, problems);
    return problems;
  }

 private:
  Session& s_;
  const CorpusProgram& program_;
  const kernel::KernelInfo& info_;
  const nlohmann::json& spec_;
  CorpusLaunch launch_;

  std::vector<std::string> launch(cl_program built) {
    cl_int err = CL_SUCCESS;
    cl_kernel k = clCreateKernel(built, info_.name.c_str(), &err);
    if (err != CL_SUCCESS) return {"clCreateKernel: " + std::to_string(err)};
    std::vector<cl_mem> buffers;
    std::vector<std::string> problems;
    for (size_t i = 0; i < info_.args.size() && problems.empty(); ++i) {
      cl_uint index = cl_uint(i);
      if (launch_.values.buffer_sizes[i]) {
        cl_mem m = clCreateBuffer(s_.context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, launch_.values.buffer_sizes[i],
                                  launch_.contents[i].data(), &err);
        if (err == CL_SUCCESS) buffers.push_back(m);
        if (err == CL_SUCCESS) err = clSetKernelArg(k, index, sizeof(cl_mem), &m);
      } else if (launch_.local_bytes[i]) {
        err = clSetKernelArg(k, index, launch_.local_bytes[i], nullptr);
      } else {
        err = clSetKernelArg(k, index, launch_.values.bytes[i].size(), launch_.values.bytes[i].data());
      }
      if (err != CL_SUCCESS) problems.push_back("argument " + info_.args[i].name + ": error " + std::to_string(err));
    }
    const kernel::LaunchGeometry& g = launch_.geometry;
    size_t offset[3], global[3], local[3];
    for (uint32_t d = 0; d < g.work_dim; ++d) {
      offset[d] = size_t(g.global_offset[d]);
      global[d] = size_t(g.global_size[d]);
      local[d] = size_t(g.local_size[d]);
    }
    if (problems.empty()) {
      err = clEnqueueNDRangeKernel(s_.queue, k, g.work_dim, offset, global, local, 0, nullptr, nullptr);
      if (err == CL_SUCCESS) err = clFinish(s_.queue);
      if (err != CL_SUCCESS) problems.push_back("launch: error " + std::to_string(err));
    }
    for (cl_mem m : buffers) clReleaseMemObject(m);
    clReleaseKernel(k);
    return problems;
  }

  void check_all(const oracle::KernelRun& run, std::vector<std::string>& problems) {
    std::vector<std::string> names;
    std::set<size_t> loose;
    const auto& expected_args = spec_.at("args");
    for (size_t i = 0; i < info_.args.size(); ++i) {
      names.push_back(info_.args[i].name);
      if (i < expected_args.size() && expected_args[i].contains("loose")) loose.insert(i);
    }
    std::set<std::pair<size_t, bool>> loose_seen;     // (argument, write) found more than 10% larger
    std::map<std::pair<size_t, bool>, double> worst;  // the largest footprint / touched of (b)'s chunks
    size_t checked = 0;
    kernel::LaunchGeometry g = launch_.geometry;
    for (uint32_t dim = 0; dim < g.work_dim; ++dim) {
      bool split_dim = dim == launch_.geometry.split_dim;
      g.split_dim = dim;
      uint64_t groups = g.global_size[dim] / g.local_size[dim];
      for (const auto& [chunk, coex_like] : chunkings(dim, groups)) {
        bool tightness = split_dim && coex_like;
        kernel::Footprint fp = info_.footprint->evaluate(g, launch_.values, chunk.g0, chunk.g1);
        oracle::ChunkCheck c =
            oracle::check_chunk(fp, oracle::touched_by(run, chunk, info_.args.size()), names, tightness, loose);
        ++checked;
        for (const std::string& v : c.violations) problems.push_back(chunk.to_string() + ": " + v);
        for (const oracle::ArgRatio& r : c.ratios) {
          if (!tightness) continue;
          if (r.too_large()) loose_seen.insert({r.arg, r.write});
          double ratio = r.touched ? double(r.footprint) / double(r.touched) : r.footprint ? 1e9 : 1.0;
          double& w = worst[{r.arg, r.write}];
          w = std::max(w, ratio);
        }
      }
    }
    // (d), for the arguments the whole launch's footprint calls injective.
    g.split_dim = launch_.geometry.split_dim;
    uint64_t all = g.global_size[g.split_dim] / g.local_size[g.split_dim];
    kernel::Footprint whole = info_.footprint->evaluate(g, launch_.values, 0, all);
    std::vector<coherence::IntervalSet> twice = oracle::stored_by_several_groups(run, info_.args.size());
    for (size_t i = 0; i < whole.args.size() && i < twice.size(); ++i)
      if (whole.args[i].writes_injective && !twice[i].empty())
        problems.push_back(names[i] + ": called injective, yet several work-groups stored " + twice[i].to_string());
    check_pieces(run, g, names, problems);
    for (size_t i : loose) {
      bool any = loose_seen.count({i, false}) || loose_seen.count({i, true});
      if (!any) problems.push_back(names[i] + ": marked loose, yet every exact footprint was within 10%");
    }
    std::string ratios;
    for (const auto& [key, ratio] : worst) {
      char text[64];
      std::snprintf(text, sizeof text, " %s %s %.3f", names[key.first].c_str(), key.second ? "write" : "read", ratio);
      ratios += text;
    }
    std::printf("  %s: %zu chunks checked; exact footprint / bytes touched, worst:%s\n", info_.name.c_str(), checked,
                ratios.empty() ? " (no exact footprint)" : ratios.c_str());
  }

  // (e): coex's verdict on the launch's pieces (piece_rule.h) against what those pieces really did.
  void check_pieces(const oracle::KernelRun& run, const kernel::LaunchGeometry& g,
                    const std::vector<std::string>& names, std::vector<std::string>& problems) {
    std::vector<bool> written;
    for (const kernel::ArgInfo& arg : info_.args) written.push_back(arg.written);
    oracle::PieceVerdict verdict = oracle::piece_verdict(*info_.footprint, g, launch_.values, written);
    std::string expected = spec_.value("chunks", std::string());
    oracle::DependencyCheck d = oracle::check_dependencies(run, g.split_dim, verdict, names, expected);
    for (const std::string& v : d.violations) problems.push_back("pieces: " + v);
    std::printf("  %s: %zu pieces; coex: %s; accesses: %s\n", info_.name.c_str(), verdict.pieces.size(),
                oracle::describe(d.modelled, verdict.pieces, names).c_str(),
                oracle::describe(d.actual, verdict.pieces, names).c_str());
    if (!d.over_conservative.empty())
      std::printf("  OVER-CONSERVATIVE %s: coex refuses the split (%s), yet the pieces' accesses do not conflict\n",
                  info_.name.c_str(), d.over_conservative.c_str());
  }
};

bool open_session(Session& s, const std::string& plugin) {
  setenv("OCLGRIND_PLUGINS", plugin.c_str(), 1);
  void* handle = dlopen(plugin.c_str(), RTLD_NOW | RTLD_GLOBAL);
  if (!handle) {
    std::fprintf(stderr, "oracle: cannot load %s: %s\n", plugin.c_str(), dlerror());
    return false;
  }
  s.last_run = reinterpret_cast<LastRun>(dlsym(handle, "coex_oracle_last_run"));
  cl_platform_id platform = nullptr;
  cl_int err = clGetPlatformIDs(1, &platform, nullptr);
  if (err == CL_SUCCESS) err = clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &s.device, nullptr);
  if (err == CL_SUCCESS) s.context = clCreateContext(nullptr, 1, &s.device, nullptr, nullptr, &err);
  if (err == CL_SUCCESS) s.queue = clCreateCommandQueue(s.context, s.device, 0, &err);
  if (err != CL_SUCCESS || !s.last_run) {
    std::fprintf(stderr, "oracle: no Oclgrind device (error %d)\n", err);
    return false;
  }
  return true;
}

// The violations of one corpus program: every kernel with a launch.
std::vector<std::string> check_program(Session& s, const CorpusProgram& program) {
  std::vector<std::string> problems;
  kernel::ProgramInfo info = kernel::analyze_program(program.source, program.build_options);
  const char* text = program.source.c_str();
  cl_int err = CL_SUCCESS;
  cl_program built = clCreateProgramWithSource(s.context, 1, &text, nullptr, &err);
  // Unoptimised, the loads and stores are those of the source, which is what a footprint is about:
  // an optimiser may narrow a vector load to the components used, and LLVM's rotate intrinsic
  // (llvm.fshl), which it makes of (v << s) | (v >> (32 - s)), is unknown to Oclgrind 21.10.
  std::string options = program.build_options + " -cl-opt-disable";
  if (err == CL_SUCCESS) err = clBuildProgram(built, 1, &s.device, options.c_str(), nullptr, nullptr);
  if (err != CL_SUCCESS) {
    size_t size = 0;
    clGetProgramBuildInfo(built, s.device, CL_PROGRAM_BUILD_LOG, 0, nullptr, &size);
    std::string log(size, '\0');
    clGetProgramBuildInfo(built, s.device, CL_PROGRAM_BUILD_LOG, size, log.data(), nullptr);
    clReleaseProgram(built);
    return {"build failed (" + std::to_string(err) + "): " + log};
  }
  for (const auto& expected : program.expected.at("kernels")) {
    if (!expected.contains("launch")) continue;
    std::string name = expected.at("name").get<std::string>();
    const kernel::KernelInfo* k = info.find(name);
    if (!k) {
      problems.push_back(name + ": not found by the analysis");
      continue;
    }
    for (const std::string& p : KernelOracle(s, program, *k, expected).run(built)) problems.push_back(name + ": " + p);
  }
  clReleaseProgram(built);
  return problems;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s PLUGIN.so CORPUS_NAME...\n", argv[0]);
    return 2;
  }
  Session session;
  if (!open_session(session, argv[1])) return 2;
  std::set<std::string> wanted(argv + 2, argv + argc);
  size_t failures = 0, programs = 0;
  for (const CorpusProgram& program : kernel::testing::load_corpus()) {
    if (!wanted.count(program.name)) continue;
    ++programs;
    std::printf("%s\n", program.name.c_str());
    if (program.expected.contains("oracle_skip")) {
      std::printf("  skipped: %s\n", program.expected.at("oracle_skip").get<std::string>().c_str());
      continue;
    }
    for (const std::string& p : check_program(session, program)) {
      std::printf("  VIOLATION %s\n", p.c_str());
      ++failures;
    }
  }
  if (programs != wanted.size()) {
    std::fprintf(stderr, "oracle: %zu of %zu programs found in the corpus\n", programs, wanted.size());
    return 2;
  }
  return failures ? 1 : 0;
}
