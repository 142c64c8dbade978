#include "sched/sim_doc_tables.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>

#include "config/settings.h"
#include "sched/sim_scenario.h"
#include "sched/simulator.h"

namespace coex::sched {
namespace {

using json = nlohmann::json;
using Lines = std::vector<json>;

// A number as the simulator's JSON lines hold it, the way jq prints it: integral values without a
// fraction, others in their shortest exact form.
std::string num(const json& v) {
  if (v.is_null()) return "null";
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_integer() || v.is_number_unsigned()) return v.dump();
  const double d = v.get<double>();
  if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 1e15) return std::to_string(int64_t(d));
  return json(d).dump();
}

std::string or_text(const json& line, const char* key, const char* otherwise) {
  return line.contains(key) && !line[key].is_null() ? num(line[key]) : otherwise;
}

std::string joined(const json& line, const char* key) {
  std::string out;
  if (line.contains(key))
    for (const auto& item : line[key]) out += (out.empty() ? "" : ",") + item.get<std::string>();
  return out;
}

std::string row(const std::vector<std::string>& cells) {
  std::string out = "|";
  for (const auto& c : cells) out += " " + c + " |";
  return out + "\n";
}

std::string header(const std::vector<std::string>& titles) {
  return row(titles) + row(std::vector<std::string>(titles.size(), "---"));
}

// Runs a shipped scenario, changed by `edit`; its launch and summary lines.
Lines simulate(const std::string& dir, const std::string& file, const std::function<void(Scenario&)>& edit = nullptr) {
  Scenario s;
  std::string error;
  if (!load_scenario(dir + "/" + file + ".json", &s, &error)) throw std::runtime_error(error);
  if (edit) edit(s);
  std::ostringstream out, err;
  if (run_simulation(s, out, err) != 0) throw std::runtime_error(file + ": " + err.str());
  Lines lines;
  std::istringstream in(out.str());
  for (std::string text; std::getline(in, text);) lines.push_back(json::parse(text));
  return lines;
}

Lines launches_only(const Lines& lines) {
  Lines out;
  for (const auto& l : lines)
    if (!l.value("summary", false)) out.push_back(l);
  return out;
}

// One row per launch: the launch, then `cells(line)` of each policy's line for it, in the order the
// scenario lists the policies.
std::string by_launch(const Lines& lines, const std::function<std::vector<std::string>(const json&)>& cells) {
  std::map<int, std::vector<std::string>> rows;
  for (const auto& l : launches_only(lines)) {
    auto& r = rows[l["launch"].get<int>()];
    if (r.empty()) r.push_back(num(l["launch"]));
    for (auto& c : cells(l)) r.push_back(c);
  }
  std::string out;
  for (const auto& [launch, cells_of_launch] : rows) out += row(cells_of_launch);
  return out;
}

double mean(const Lines& lines, const char* key) {
  double sum = 0;
  for (const auto& l : lines) sum += l[key].get<double>();
  return sum / double(lines.size());
}

std::string thousandths(double v) { return num(json(std::round(v * 1000) / 1000)); }

// The testbed's devices as the device machine has them: all of one kind (one name), each chunk's time
// x (1 + 0.1|z|), and at each launch three in ten of them change pace part-way through (x0.6, x0.75
// or x1.3 from 20 to 80 ms in), drawn from `seed`: single-threaded PoCL devices whose threads come to
// share a core, or stop sharing one. Drawn from mt19937's own numbers, the same with every library.
void pace_moves_mid_launch(Scenario& s, uint32_t seed) {
  std::mt19937 draws(seed);
  auto unit = [&draws] { return static_cast<double>(draws()) / 4294967296.0; };
  constexpr double kFactors[] = {0.6, 0.75, 1.3};
  for (auto& device : s.devices) {
    device.profile.name = "cpu-minimal";
    device.noise = 0.1;
    device.changes.clear();
    for (int launch = 0; launch < s.launches; ++launch) {
      device.changes.push_back({launch, 0.0, 1.0});
      if (unit() < 0.3) {
        const double at = (0.2 + 0.6 * unit()) * 0.1;
        device.changes.push_back({launch, at, kFactors[std::min<size_t>(2, static_cast<size_t>(unit() * 3))]});
      }
    }
  }
  s.seed = seed;
  s.home = 0;
}

// The launches of auto and of hguided over a testbed scenario whose paces move (pace_moves_mid_launch).
Lines auto_and_hguided_as_paces_move(const std::string& dir, const char* file, int launches, uint32_t seed) {
  return launches_only(simulate(dir, file, [&](Scenario& s) {
    s.policies = {"auto", "hguided"};
    s.launches = launches;
    pace_moves_mid_launch(s, seed);
  }));
}

using Table = std::function<std::string(const std::string& dir)>;

const std::vector<std::pair<std::string, Table>>& tables() {
  static const std::vector<std::pair<std::string, Table>> list = {
      {"pace-moves-mid-launch",
       [](const std::string& dir) {
         constexpr uint32_t kSeeds = 30;
         std::string out = header({"scenario", "plain wp (launches 1 and 2)", "auto / hguided, mean", "worst"});
         for (const char* file :
              {"testbed-nbody-n4", "testbed-matmul-n4", "testbed-binomial-n8", "testbed-binomial-n15"}) {
           size_t plain_wp = 0;
           double sum = 0, worst = 0;
           for (uint32_t seed = 1; seed <= kSeeds; ++seed) {
             std::map<std::string, double> makespans;
             for (const auto& l : auto_and_hguided_as_paces_move(dir, file, 3, seed)) {
               makespans[l["policy"].get<std::string>()] += l["makespan"].get<double>();
               plain_wp += l.value("planned_by", "") == "auto:wp";
             }
             const double ratio = makespans["auto"] / makespans["hguided"];
             sum += ratio;
             worst = std::max(worst, ratio);
           }
           out += row({file, std::to_string(plain_wp) + " of " + std::to_string(2 * kSeeds), thousandths(sum / kSeeds),
                       thousandths(worst)});
         }
         return out;
       }},
      {"pace-moves-mid-launch-twenty",
       [](const std::string& dir) {
         constexpr uint32_t kSeeds = 30;
         std::string out = header({"scenario", "auto / hguided, 20 launches, mean", "worst", "launches 10 to 14, mean",
                                   "sigmoid after launch 0"});
         for (const char* file : {"testbed-matmul-n4", "testbed-binomial-n8", "testbed-binomial-n15"}) {
           size_t remeasures = 0;
           double sum = 0, worst = 0, trial = 0;
           for (uint32_t seed = 1; seed <= kSeeds; ++seed) {
             std::map<std::string, std::vector<double>> makespans;
             for (const auto& l : auto_and_hguided_as_paces_move(dir, file, 20, seed)) {
               makespans[l["policy"].get<std::string>()].push_back(l["makespan"].get<double>());
               remeasures += l["launch"].get<int>() > 0 && l.value("planned_by", "") == "auto:sigmoid";
             }
             const auto& a = makespans["auto"];
             const auto& h = makespans["hguided"];
             double sum_a = 0, sum_h = 0;
             for (size_t i = 0; i < a.size() && i < h.size(); ++i) {
               sum_a += a[i];
               sum_h += h[i];
               if (i >= 10 && i < 15) trial += a[i] / h[i] / 5;
             }
             sum += sum_a / sum_h;
             worst = std::max(worst, sum_a / sum_h);
           }
           out += row({file, thousandths(sum / kSeeds), thousandths(worst), thousandths(trial / kSeeds),
                       std::to_string(remeasures)});
         }
         return out;
       }},
      {"wp-against-sigmoid",
       [](const std::string& dir) {
         Lines lines = simulate(dir, "sigmoid-irregular", [](Scenario& s) {
           s.policies = {"wp", "sigmoid"};
           s.launches = 10;
           s.summary = false;
         });
         return header({"launch", "wp", "sigmoid"}) +
                by_launch(lines, [](const json& l) { return std::vector<std::string>{num(l["efficiency"])}; });
       }},
      {"boyer-lambda",
       [](const std::string& dir) {
         std::string out = header({"scenario", "groups in the final split", "slower device's part", "makespan (s)",
                                   "efficiency", "load balance"});
         for (const char* file : {"boyer-lambda", "boyer-lambda-ignored"})
           for (const auto& l : launches_only(simulate(dir, file))) {
             const auto& chunks = l["chunk_list"];
             uint64_t rest = 0, cpu = 0;
             bool cpu_seen = false;
             for (size_t i = chunks.size() - 2; i < chunks.size(); ++i) {
               const uint64_t groups = chunks[i]["end"].get<uint64_t>() - chunks[i]["begin"].get<uint64_t>();
               rest += groups;
               if (chunks[i]["device"] == "cpu" && !cpu_seen) cpu = groups, cpu_seen = true;
             }
             const double part = std::round(double(cpu) / double(rest) * 1000) / 10;
             out += row({num(l["scenario"]), std::to_string(rest), num(json(part)) + "%", num(l["makespan"]),
                         num(l["efficiency"]), num(l["load_balance"])});
           }
         return out;
       }},
      {"boyer-lambda-chunks",
       [](const std::string& dir) {
         std::string out = header({"device", "groups", "size", "start (s)", "finish (s)"});
         for (const auto& l : launches_only(simulate(dir, "boyer-lambda")))
           for (const auto& c : l["chunk_list"])
             out += row({num(c["device"]), "[" + num(c["begin"]) + ", " + num(c["end"]) + ")",
                         std::to_string(c["end"].get<uint64_t>() - c["begin"].get<uint64_t>()), num(c["start"]),
                         num(c["finish"])});
         return out;
       }},
      {"boyer-slowdown",
       [](const std::string& dir) {
         Lines lines = simulate(dir, "boyer-slowdown");
         return header({"launch", "static (tuned ratio)", "boyer", "wp", "sigmoid", "plbhec", "auto"}) +
                by_launch(lines, [](const json& l) { return std::vector<std::string>{num(l["efficiency"])}; });
       }},
      {"boyer-stall",
       [](const std::string& dir) {
         std::string out = header(
             {"policy", "launch", "makespan (s)", "unfinished groups", "abandoned chunks", "excluded", "CPU share"});
         for (const auto& l : launches_only(simulate(dir, "boyer-stall")))
           out += row({num(l["policy"]), num(l["launch"]), or_text(l, "makespan", "stalled"),
                       or_text(l, "unfinished_groups", "0"), or_text(l, "abandoned_chunks", "0"), joined(l, "excluded"),
                       num(l["share"]["cpu"])});
         return out;
       }},
      {"strack-linear",
       [](const std::string& dir) {
         Lines lines = simulate(dir, "strack-linear");
         std::vector<std::string> titles = {"launch"};
         for (const auto& l : launches_only(lines))
           if (l["launch"] == 0) {
             titles.push_back(num(l["policy"]) + " host share");
             titles.push_back(num(l["policy"]) + " efficiency");
           }
         return header(titles) + by_launch(lines, [](const json& l) {
                  return std::vector<std::string>{num(l["share"]["host"]), num(l["efficiency"])};
                });
       }},
      {"sigmoid-packages",
       [](const std::string& dir) {
         std::string out = header({"scenario", "policy", "packages, launch 0", "balance, launch 0",
                                   "packages, launches 1–4", "balance, launches 1–4", "efficiency, launches 1–4"});
         for (const char* file : {"sigmoid-regular", "sigmoid-irregular"}) {
           std::map<std::string, Lines> by_policy;  // sorted by name, as the page lists them
           for (const auto& l : launches_only(simulate(dir, file))) by_policy[l["policy"]].push_back(l);
           for (const auto& [policy, g] : by_policy) {
             const Lines later(g.begin() + 1, g.end());
             out += row({num(g[0]["scenario"]), policy, num(g[0]["chunks"]), num(g[0]["load_balance"]),
                         num(json(mean(later, "chunks"))), thousandths(mean(later, "load_balance")),
                         thousandths(mean(later, "efficiency"))});
           }
         }
         return out;
       }},
      {"hguided-min-chunk",
       [](const std::string& dir) {
         std::string out = header({"min_chunk_groups", "packages (mean of 5 launches)", "balance", "efficiency"});
         for (const char* m : {"8", "32", "128"})
           for (const auto& l : simulate(dir, "sigmoid-irregular", [m](Scenario& s) {
                  s.policies = {"hguided"};
                  std::string error;
                  if (!config::set_policy_param(s.params, "min_chunk_groups", nlohmann::json(std::stoi(m)), error))
                    throw std::runtime_error(error);
                }))
             if (l.value("summary", false))
               out += row({m, num(l["mean_chunks"]), num(l["mean_load_balance"]), num(l["mean_efficiency"])});
         return out;
       }},
      {"dollinger",
       [](const std::string& dir) {
         std::string out = header(
             {"scenario", "policy", "launch", "makespan (s)", "efficiency", "CPU share", "eliminated", "excluded"});
         for (const char* file : {"dollinger-elimination", "dollinger-overhead"})
           for (const auto& l : launches_only(simulate(dir, file)))
             out += row({num(l["scenario"]), num(l["policy"]), num(l["launch"]), num(l["makespan"]),
                         num(l["efficiency"]), num(l["share"]["cpu"]), joined(l, "eliminated"), joined(l, "excluded")});
         return out;
       }},
      {"history-second-run",
       [](const std::string& dir) {
         std::string out = header({"policy", "run", "launch", "planned by", "CPU share", "efficiency"});
         for (const auto& l : launches_only(simulate(dir, "history-second-run")))
           out += row({num(l["policy"]), or_text(l, "run", "0"), num(l["launch"]), num(l.value("planned_by", l["policy"])),
                       num(l["share"]["cpu"]), num(l["efficiency"])});
         return out;
       }},
  };
  return list;
}

}  // namespace

std::vector<std::string> doc_table_names() {
  std::vector<std::string> names;
  for (const auto& [name, table] : tables()) names.push_back(name);
  return names;
}

std::string doc_table(const std::string& name, const std::string& scenarios_dir, std::string* error) {
  for (const auto& [table_name, table] : tables()) {
    if (table_name != name) continue;
    try {
      return table(scenarios_dir);
    } catch (const std::exception& e) {
      if (error) *error = "table " + name + ": " + e.what();
      return "";
    }
  }
  if (error) *error = "no table named \"" + name + "\"";
  return "";
}

std::string with_doc_tables(const std::string& markdown, const std::string& scenarios_dir,
                            std::vector<std::string>* found, std::string* error) {
  static const std::string kCommand = "coex simulate --doc-table ";
  std::istringstream in(markdown);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  std::string out;
  for (size_t i = 0; i < lines.size(); ++i) {
    out += lines[i] + "\n";
    if (lines[i].rfind(kCommand, 0) != 0) continue;
    const std::string name = lines[i].substr(kCommand.size());
    if (found) found->push_back(name);
    // The closing fence and the blank line, then the table: its lines start with '|'.
    size_t j = i + 1;
    while (j < lines.size() && lines[j].rfind("|", 0) != 0) out += lines[j++] + "\n";
    std::string table = doc_table(name, scenarios_dir, error);
    if (table.empty()) return "";
    out += table;
    while (j < lines.size() && lines[j].rfind("|", 0) == 0) ++j;
    i = j - 1;
  }
  return out;
}

}  // namespace coex::sched
