// The simulator tables of docs/schedulers.md, generated: each follows a fenced line
// `coex simulate --doc-table NAME` there, and a unit test keeps them equal to what the simulator
// prints now (sched_simulator_test, COEX_UPDATE_SCHEDULER_DOC=1 rewrites them).
#pragma once

#include <string>
#include <vector>

namespace coex::sched {

// Every table's name, in the order the page shows them.
std::vector<std::string> doc_table_names();

// The Markdown table NAME (header, separator, rows), from the shipped scenarios in `scenarios_dir`
// (config/scenarios). Empty, with the reason in `error`, for an unknown name or a scenario that does
// not load.
std::string doc_table(const std::string& name, const std::string& scenarios_dir, std::string* error);

// `markdown` with the table after each `coex simulate --doc-table NAME` block replaced by
// doc_table(NAME); the names it found go to `found`.
std::string with_doc_tables(const std::string& markdown, const std::string& scenarios_dir,
                            std::vector<std::string>* found, std::string* error);

}  // namespace coex::sched
