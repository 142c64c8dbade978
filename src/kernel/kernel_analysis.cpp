#include "kernel/kernel_analysis.h"

#include <map>
#include <set>
#include <utility>

#include "kernel/clang_session.h"
#include "kernel/footprint_builder.h"
#include "kernel/function_facts.h"
#include "kernel/kernel_analysis_detail.h"
#include "kernel/split_rewrite.h"

namespace coex::kernel {
namespace {

bool is_image_type(CXTypeKind kind) { return kind >= CXType_OCLImage1dRO && kind <= CXType_OCLImage3dRW; }
bool is_write_only_image(CXTypeKind kind) { return kind >= CXType_OCLImage1dWO && kind <= CXType_OCLImage3dWO; }
bool is_read_write_image(CXTypeKind kind) { return kind >= CXType_OCLImage1dRW && kind <= CXType_OCLImage3dRW; }

// OpenCL kernels have their own calling convention (CC_OpenCLKernel), which libclang reports as
// "unexposed"; on the x86 target the parse uses, ordinary functions have the C one.
bool is_kernel_function(CXCursor c) {
  return clang_getCursorKind(c) == CXCursor_FunctionDecl &&
         clang_getFunctionTypeCallingConv(clang_getCursorType(c)) == CXCallingConv_Unexposed;
}

bool is_program_file(CXCursor c) {
  CXSourceLocation loc = clang_getCursorLocation(c);
  if (clang_Location_isInSystemHeader(loc)) return false;
  FilePosition p = expansion_position(loc);
  if (!p.file) return false;
  return take_string(clang_getFileName(p.file)) != ParsedSource::kPreludeFileName;
}

struct ArgVerdict {
  bool svm = false;
  bool image = false;
  bool sampler = false;
  bool pipe = false;
  bool queue = false;
};

ArgInfo describe_argument(CXCursor param, ArgVerdict& verdict) {
  ArgInfo arg;
  arg.name = cursor_spelling(param);
  CXType type = clang_getCursorType(param);
  arg.type_name = type_spelling(type);
  CXType canonical = clang_getCanonicalType(type);
  if (canonical.kind == CXType_Pointer) {
    CXType pointee = clang_getCanonicalType(clang_getPointeeType(canonical));
    std::string space = address_space_of(pointee);
    arg.kind = space == "global"     ? ArgKind::GlobalPointer
               : space == "constant" ? ArgKind::ConstantPointer
               : space == "local"    ? ArgKind::LocalPointer
                                     : ArgKind::Other;
    long long size = clang_Type_getSizeOf(pointee);
    arg.pointee_size = size > 0 ? static_cast<size_t>(size) : 0;
    // Pointers inside the buffer (or a generic/private kernel pointer) mean shared virtual memory:
    // memory that no argument names.
    if (contains_pointer(pointee) || arg.kind == ArgKind::Other) verdict.svm = true;
    if (arg.kind == ArgKind::ConstantPointer) arg.written = false;
    return arg;
  }
  arg.read = true;
  arg.written = false;
  if (is_image_type(canonical.kind)) {
    arg.kind = ArgKind::Image;
    arg.read = !is_write_only_image(canonical.kind);
    arg.written = is_write_only_image(canonical.kind) || is_read_write_image(canonical.kind);
    verdict.image = true;
  } else if (canonical.kind == CXType_OCLSampler) {
    arg.kind = ArgKind::Sampler;
    verdict.sampler = true;
  } else if (canonical.kind == CXType_Pipe) {
    arg.kind = ArgKind::Pipe;
    arg.written = true;
    verdict.pipe = true;
  } else if (canonical.kind == CXType_OCLQueue || canonical.kind == CXType_OCLEvent ||
             canonical.kind == CXType_OCLReserveID || canonical.kind == CXType_Unexposed) {
    arg.kind = ArgKind::Other;
    if (canonical.kind == CXType_OCLQueue) verdict.queue = true;
  } else {
    arg.kind = ArgKind::Scalar;
    long long size = clang_Type_getSizeOf(canonical);
    arg.value_size = size > 0 ? static_cast<size_t>(size) : 0;
    if (contains_pointer(canonical)) verdict.svm = true;
  }
  return arg;
}

// Flags of the kernel and of every function it calls, transitively.
struct CallTreeFlags {
  bool errors = false;
  bool helper_launch_builtins = false;         // a helper it calls reads a launch builtin
  bool called_kernel_launch_builtins = false;  // so does a kernel it calls as a function
  bool global_atomics = false;
  bool device_enqueue = false;
  bool integer_to_pointer = false;
  bool program_scope_variables = false;
  bool recursion = false;
  bool loops = false;
};

bool tree_reads_launch_builtins(ProgramFacts& program, const FunctionFacts& f, std::set<std::string>& seen) {
  if (f.launch_builtins) return true;
  for (CXCursor callee : f.callees)
    if (seen.insert(declaration_key(callee)).second && tree_reads_launch_builtins(program, program.of(callee), seen))
      return true;
  return false;
}

void gather(ProgramFacts& program, const FunctionFacts& f, bool is_root, std::set<std::string>& seen,
            CallTreeFlags& flags) {
  flags.errors |= f.has_errors;
  if (!is_root && is_kernel_function(f.definition)) {
    std::set<std::string> below{declaration_key(f.definition)};
    flags.called_kernel_launch_builtins |= tree_reads_launch_builtins(program, f, below);
  }
  if (!is_root && !is_kernel_function(f.definition)) flags.helper_launch_builtins |= f.launch_builtins;
  flags.global_atomics |= f.global_atomics;
  flags.device_enqueue |= f.device_enqueue;
  flags.integer_to_pointer |= f.integer_to_pointer;
  flags.program_scope_variables |= f.program_scope_variables;
  flags.recursion |= f.recursion;
  flags.loops |= f.loops;
  for (CXCursor callee : f.callees)
    if (seen.insert(declaration_key(callee)).second) gather(program, program.of(callee), false, seen, flags);
}

std::vector<FilePosition> error_positions(CXTranslationUnit unit, std::string& first_error, size_t& count) {
  std::vector<FilePosition> out;
  unsigned n = clang_getNumDiagnostics(unit);
  for (unsigned i = 0; i < n; ++i) {
    CXDiagnostic d = clang_getDiagnostic(unit, i);
    if (clang_getDiagnosticSeverity(d) >= CXDiagnostic_Error) {
      ++count;
      if (first_error.empty()) first_error = take_string(clang_formatDiagnostic(d, CXDiagnostic_DisplaySourceLocation));
      FilePosition p = expansion_position(clang_getDiagnosticLocation(d));
      if (p.file) out.push_back(p);
    }
    clang_disposeDiagnostic(d);
  }
  return out;
}

std::string verdict_reason(const ArgVerdict& args, const CallTreeFlags& flags, bool helpers_rewritten) {
  if (flags.errors || flags.recursion) return "unanalysable";
  if (args.image) return "image_args";
  if (args.sampler) return "sampler_args";
  if (args.pipe) return "pipe_args";
  if (args.svm || flags.integer_to_pointer) return "svm";
  if (args.queue || flags.device_enqueue) return "device_enqueue";
  if (flags.global_atomics) return "global_atomics";
  if (flags.program_scope_variables) return "program_scope_variables";
  // A kernel called as a function cannot take new parameters; a helper can, unless its rewrite failed.
  if (flags.called_kernel_launch_builtins || (flags.helper_launch_builtins && !helpers_rewritten))
    return "group_builtins_in_helper";
  return "";
}

// The helpers (program functions other than kernels) that read a launch builtin, themselves or
// through what they call, keyed by declaration.
std::map<std::string, CXCursor> launch_helpers(ProgramFacts& program, const std::vector<CXCursor>& helpers) {
  std::map<std::string, CXCursor> out;
  for (bool grew = true; grew;) {
    grew = false;
    for (CXCursor h : helpers) {
      const FunctionFacts& f = program.of(h);
      bool uses = f.launch_builtins;
      for (CXCursor callee : f.callees) uses |= out.count(declaration_key(callee)) > 0;
      if (uses) grew |= out.emplace(declaration_key(h), h).second;
    }
  }
  return out;
}

// The calls in a function's own body of those helpers.
std::vector<CXCursor> calls_of(ProgramFacts& program, CXCursor function,
                               const std::map<std::string, CXCursor>& helpers) {
  std::vector<CXCursor> out;
  for (const auto& site : program.of(function).call_sites) {
    CXCursor definition = clang_getCursorDefinition(clang_getCursorReferenced(site.call));
    if (helpers.count(declaration_key(definition))) out.push_back(site.call);
  }
  return out;
}

// The verdict, arguments, edits and footprint of one kernel. helpers_ok: the helpers that read launch
// builtins are rewritten; unsplit_edits_ok turns false when a kernel that stays whole cannot pass
// their values on.
KernelInfo analyze_kernel(const ParsedSource& parsed, SourceTokens& tokens, ProgramFacts& program, CXCursor definition,
                          const std::set<std::string>& called, const std::map<std::string, CXCursor>& rewritten_helpers,
                          bool helpers_ok, bool& unsplit_edits_ok) {
  KernelInfo kernel;
  kernel.name = cursor_spelling(definition);
  const FunctionFacts& facts = program.of(definition);
  CallTreeFlags flags;
  std::set<std::string> seen{declaration_key(definition)};
  gather(program, facts, true, seen, flags);
  ArgVerdict arg_verdict;
  for (size_t i = 0; i < facts.params.size(); ++i) {
    ArgInfo arg = describe_argument(facts.params[i], arg_verdict);
    bool pointer = arg.kind == ArgKind::GlobalPointer || arg.kind == ArgKind::ConstantPointer ||
                   arg.kind == ArgKind::LocalPointer || arg.kind == ArgKind::Other;
    if (pointer && is_pointer_type(clang_getCursorType(facts.params[i])) && !flags.errors) {
      arg.read = facts.param_uses[i].read;
      arg.written = facts.param_uses[i].written && arg.kind != ArgKind::ConstantPointer;
    } else if (pointer && is_pointer_type(clang_getCursorType(facts.params[i]))) {
      // Unanalysable body: only the declared type speaks.
      CXType pointee = clang_getPointeeType(clang_getCanonicalType(clang_getCursorType(facts.params[i])));
      arg.written = arg.kind != ArgKind::ConstantPointer && !clang_isConstQualifiedType(pointee);
    }
    kernel.args.push_back(arg);
  }
  kernel.uses_launch_builtins =
      facts.launch_builtins || flags.helper_launch_builtins || flags.called_kernel_launch_builtins;
  kernel.loops = flags.loops || flags.recursion;
  kernel.not_split_reason = verdict_reason(arg_verdict, flags, helpers_ok);
  std::vector<CXCursor> helper_calls =
      helpers_ok ? calls_of(program, definition, rewritten_helpers) : std::vector<CXCursor>{};
  std::string why_not;
  if (kernel.not_split_reason.empty() && kernel.uses_launch_builtins) {
    if (called.count(declaration_key(definition))) {
      // Another function calls this kernel: new parameters would break that call.
      kernel.not_split_reason = "kernel_called_as_function";
    } else if (!compute_split_edits(parsed, tokens, definition, helper_calls, kernel.split_edits, why_not)) {
      kernel.not_split_reason = "unanalysable";
    }
  }
  if (!kernel.not_split_reason.empty() && !helper_calls.empty() &&
      !compute_unsplit_kernel_edits(parsed, tokens, definition, helper_calls, kernel.unsplit_edits, why_not))
    unsplit_edits_ok = false;
  if (kernel.not_split_reason.empty()) kernel.footprint = build_footprint_model(program, facts, kernel);
  return kernel;
}

}  // namespace

ProgramInfo analyze_program_with(const std::string& source, const std::string& build_options, BuiltinsMode mode) {
  ProgramInfo info;
  info.builtins_mode = mode == BuiltinsMode::ClangHeaders ? "clang" : "fallback";
  info.source_size = source.size();
  info.source_fingerprint = source_fingerprint(source);
  ParsedSource parsed(source, build_options, mode);
  if (!parsed.ok()) {
    info.parse_error = parsed.failure();
    return info;
  }
  SourceTokens tokens(parsed.unit());
  ProgramFacts program(tokens);
  std::string first_error;
  size_t error_count = 0;
  program.set_error_positions(error_positions(parsed.unit(), first_error, error_count));

  std::vector<CXCursor> kernels, helpers;
  std::set<std::string> called;  // functions some function of the program calls
  for (CXCursor c : children_of(clang_getTranslationUnitCursor(parsed.unit()))) {
    if (clang_getCursorKind(c) != CXCursor_FunctionDecl || !clang_isCursorDefinition(c) || !is_program_file(c))
      continue;
    for (CXCursor callee : program.of(c).callees) called.insert(declaration_key(callee));
    (is_kernel_function(c) ? kernels : helpers).push_back(c);
  }
  // Helpers that read launch builtins are rewritten like kernels (split_rewrite.h); when one of
  // their edits cannot be made, the kernels that call them are not split.
  std::map<std::string, CXCursor> rewritten_helpers = launch_helpers(program, helpers);
  std::vector<std::pair<CXCursor, std::vector<CXCursor>>> helper_calls;
  for (const auto& [key, h] : rewritten_helpers) helper_calls.push_back({h, calls_of(program, h, rewritten_helpers)});
  std::string helper_why_not;
  bool helpers_ok = rewritten_helpers.empty() ||
                    compute_helper_edits(parsed, tokens, helper_calls, info.helper_edits, helper_why_not);
  for (;;) {
    info.kernels.clear();
    bool unsplit_edits_ok = true;
    for (CXCursor definition : kernels) {
      info.kernels.push_back(
          analyze_kernel(parsed, tokens, program, definition, called, rewritten_helpers, helpers_ok, unsplit_edits_ok));
    }
    if (unsplit_edits_ok || !helpers_ok) break;
    helpers_ok = false;  // a kernel that stays whole could not pass the values on: rewrite no helper
  }
  if (!helpers_ok) info.helper_edits.clear();
  if (info.kernels.empty() && error_count > 0) info.parse_error = first_error;
  return info;
}

ProgramInfo analyze_program(const std::string& source, const std::string& build_options) {
  ProgramInfo info;
  libclang::run_on_parser_stack([&]() {
    try {
      info = analyze_program_with(source, build_options, detect_builtins_mode());
    } catch (const std::exception& e) {
      info = ProgramInfo();
      info.parse_error = std::string("kernel analysis failed: ") + e.what();
    } catch (...) {
      info = ProgramInfo();
      info.parse_error = "kernel analysis failed";
    }
  });
  return info;
}

const KernelInfo* ProgramInfo::find(const std::string& kernel_name) const {
  for (const auto& k : kernels)
    if (k.name == kernel_name) return &k;
  return nullptr;
}

}  // namespace coex::kernel
