// The files generated from or checked against the settings list: config/default.json (embedded),
// config/examples/*.json, docs/settings.md and the table of docs/schedulers.md, "Parameters".
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "config/settings.h"

namespace coex::config {
namespace {

namespace fs = std::filesystem;

const fs::path kRepo = COEX_SOURCE_DIR;

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(ConfigFiles, DefaultJsonHoldsEveryKeyWithTheListDefault) {
  const nlohmann::json file = nlohmann::json::parse(read_text(kRepo / "config/default.json"));
  ASSERT_TRUE(file.is_object());
  std::set<std::string> listed;
  for (const SettingInfo& info : setting_infos()) {
    listed.insert(info.name);
    ASSERT_TRUE(file.contains(info.name)) << "config/default.json lacks \"" << info.name << "\"";
    // Numbers compare by value: 2 and 2.0 are the same default.
    if (info.default_value.is_number()) {
      EXPECT_DOUBLE_EQ(file[info.name].get<double>(), info.default_value.get<double>()) << info.name;
    } else {
      EXPECT_EQ(file[info.name], info.default_value) << info.name;
    }
  }
  for (const auto& [key, value] : file.items()) {
    EXPECT_TRUE(listed.count(key)) << "config/default.json has \"" << key << "\", which is not a setting";
  }
}

TEST(ConfigFiles, EmbeddedDefaultIsDefaultJsonAndLoadsCleanly) {
  EXPECT_EQ(nlohmann::json::parse(kEmbeddedDefaultConfig),
            nlohmann::json::parse(read_text(kRepo / "config/default.json")))
      << "the build embeds an older config/default.json: re-run cmake";
  Settings settings;
  settings.policy = "boyer";  // the default file must set it back
  std::vector<std::string> errors;
  apply_json_text(kEmbeddedDefaultConfig, "embedded", settings, errors);
  EXPECT_TRUE(errors.empty());
  EXPECT_EQ(settings_to_json(settings), settings_to_json(Settings{}));
}

TEST(ConfigFiles, EveryExampleIsDocumentedAndLoadsWithoutErrors) {
  std::set<std::string> documented;
  for (const ExampleConfig& example : example_configs()) documented.insert(example.file);
  std::set<std::string> on_disk;
  for (const auto& entry : fs::directory_iterator(kRepo / "config/examples")) {
    on_disk.insert("config/examples/" + entry.path().filename().string());
  }
  EXPECT_EQ(on_disk, documented) << "config/examples/ and example_configs() (settings_doc.cpp) differ";
  EXPECT_GE(on_disk.size(), 3u);

  for (const std::string& file : on_disk) {
    const std::string path = (kRepo / file).string();
    const LoadResult result = load_settings([&path](const char* name) -> const char* {
      return std::string(name) == "COEX_CONFIG" ? path.c_str() : nullptr;
    });
    for (const std::string& error : result.errors) ADD_FAILURE() << error;
    // A plain example that changes nothing would teach nothing.
    EXPECT_NE(settings_to_json(result.settings), settings_to_json(Settings{})) << file;
  }
}

TEST(ConfigFiles, MarkdownDocumentsEverySetting) {
  const std::string md = settings_markdown();
  for (const SettingInfo& info : setting_infos()) {
    EXPECT_NE(md.find("\n### " + std::string(info.name) + "\n"), std::string::npos) << info.name;
    EXPECT_NE(md.find("`" + info.env_var + "`"), std::string::npos) << info.env_var;
    std::string accepted;  // as Markdown shows it: "<" escaped, so that "<index>" is no HTML tag
    for (char c : info.accepted) accepted += c == '<' ? std::string("&lt;") : std::string(1, c);
    EXPECT_NE(md.find("accepts " + accepted + "\n"), std::string::npos) << accepted;
  }
  // The sample error lines are produced by the loader itself.
  EXPECT_NE(md.find("coex: config /home/me/coex.json: key \"policy\": \"fastest\" is not one of"), std::string::npos);
  EXPECT_NE(md.find("coex: env COEX_MIN_SPLIT_WORK_ITEMS: \"-1\" is not an integer >= 0"), std::string::npos);
}

// docs/settings.md is settings_markdown()'s output. COEX_UPDATE_SETTINGS_DOC=1 rewrites it.
TEST(ConfigFiles, SettingsDocIsUpToDate) {
  const fs::path doc = kRepo / "docs/settings.md";
  const std::string expected = settings_markdown();
  if (const char* update = std::getenv("COEX_UPDATE_SETTINGS_DOC"); update && std::string(update) == "1") {
    std::ofstream(doc, std::ios::binary) << expected;
  }
  EXPECT_TRUE(read_text(doc) == expected)
      << "docs/settings.md is stale: run this test with COEX_UPDATE_SETTINGS_DOC=1 to regenerate it";
}

// The table of docs/schedulers.md, "Parameters", is policy_params_markdown()'s output, from its first
// line (a comment that says so) to its last; the rest of the page is written by hand.
// COEX_UPDATE_SETTINGS_DOC=1 rewrites the table.
TEST(ConfigFiles, SchedulersDocParametersTableIsUpToDate) {
  const fs::path doc = kRepo / "docs/schedulers.md";
  const std::string table = policy_params_markdown();
  const std::string first_line = table.substr(0, table.find('\n') + 1);
  const std::string page = read_text(doc);
  const size_t begin = page.find(first_line);
  const size_t end_marker = page.find(kPolicyParamsTableEnd, begin == std::string::npos ? 0 : begin);
  ASSERT_NE(begin, std::string::npos) << "docs/schedulers.md lacks the line " << first_line;
  ASSERT_NE(end_marker, std::string::npos) << "docs/schedulers.md lacks the line " << kPolicyParamsTableEnd;
  const size_t end = end_marker + std::string(kPolicyParamsTableEnd).size() + 1;  // and its newline
  if (const char* update = std::getenv("COEX_UPDATE_SETTINGS_DOC"); update && std::string(update) == "1") {
    std::ofstream(doc, std::ios::binary) << page.substr(0, begin) + table + page.substr(std::min(end, page.size()));
  }
  EXPECT_TRUE(read_text(doc).substr(begin, table.size()) == table)
      << "the table of docs/schedulers.md, \"Parameters\", is stale: run this test with COEX_UPDATE_SETTINGS_DOC=1 "
         "or paste the output of coex settings-doc --policy-params";
}

TEST(ConfigFiles, EveryPolicyParameterIsInTheTable) {
  const std::string table = policy_params_markdown();
  size_t params = 0;
  for (const SettingInfo& info : setting_infos()) {
    const bool listed = table.find("[`" + std::string(info.name) + "`]") != std::string::npos;
    EXPECT_EQ(listed, info.policy_param) << info.name;
    params += info.policy_param ? 1 : 0;
  }
  EXPECT_GE(params, 30u);
}

}  // namespace
}  // namespace coex::config
