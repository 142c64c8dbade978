// Kernel analyses kept on disk across runs, in the kept binaries' folder (setting binary_cache;
// docs/kernel-analysis.md, "Kept analyses"). A program's analysis needs libclang, which the analysis
// process loads first: 70 ms on an idle core, twice that beside the app's own start on two cores,
// then about 20 ms for its first parse. A program's first launch waits for the analysis (auto:
// auto_analysis_wait), so on a small machine every run paid for it, the tenth as the first. A later
// run reads the analysis an earlier one made (under a millisecond) and asks libclang nothing.
//
// The key is the source, the build options and the builds of coex that made the analysis (the GNU
// build IDs of the library and of the `coex` program whose analysis process made it,
// kernel/build_id.h): a changed analyser never reads an older one's analyses.
// Only an analysis that ran to its end is kept (no parse_error: not one cut short by a missing
// libclang, a crashed or stalled analysis process, or the exit), and never one of a source with an
// #include or options with -I (exec/kept_binaries.h: files the key does not see).
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "kernel/kernel_analysis.h"

namespace coex::exec {

// Where analyses are kept: `analyses/<build>` in the folder of kept binaries (kept_binaries_folder),
// where <build> is this library's build ID and, with `analyser` (the `coex` program whose analysis
// process makes them, `analyser_build` its file's build ID), that one's too. Nothing is kept for ""
// (the default), nor where either has no ID. Set once the settings are read.
void keep_analyses_in(const std::string& binaries_folder, bool analyser, const std::string& analyser_build);
// That folder for the library of build ID `library_build` ("" where nothing is kept): the `coex run`
// launcher asks analyses_kept_in of the library it loads into the app.
std::string analyses_folder(const std::string& binaries_folder, const std::string& library_build, bool analyser,
                            const std::string& analyser_build);

// Whether an analysis may be kept under the key set: made in this process where no analyser was
// named, or by the analysis process whose hello gave the analyser's build ID (`served_build`).
bool keyed_analyser_made(bool made_here, const std::string& served_build);

// Whether this build of coex kept some analysis there: then a program's run is likely a later one,
// and the analysis process is started only for an analysis not kept
// (exec/context_and_build_preparation.h, prepare_other_devices), not at clCreateContext.
bool analyses_kept();
// The same of the analyses folder `folder` (analyses_folder).
bool analyses_kept_in(const std::string& folder);

// Whether this process read some analysis from the folder (the missing-libclang notice then says
// that only the other programs go unsplit).
bool analyses_read();

// The most builds' folders `analyses` keeps: beyond them, those written to least recently go (a
// developer's rebuilds each make one).
constexpr size_t kKeptAnalysisBuildsAtMost = 4;
void trim_build_folders(const std::string& analyses_folder, size_t at_most = kKeptAnalysisBuildsAtMost);

// The analysis an earlier run kept for `source` and `options`; nullopt where none is (or nothing is
// kept, or the file does not decode as an analysis of this build).
std::optional<kernel::ProgramInfo> read_kept_analysis(const std::string& source, const std::string& options);

// Keeps `info` for later runs where it may be (see above; and only an analysis made with clang's
// declarations of the builtins, builtins_mode "clang"). Whether it was written.
bool keep_analysis(const std::string& source, const std::string& options, const kernel::ProgramInfo& info);

}  // namespace coex::exec
