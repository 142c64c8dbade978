#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <map>

#include "config/settings.h"

namespace coex::config {
namespace {

using Env = std::map<std::string, std::string>;

LoadResult load(const Env& env) {
  return load_settings([&env](const char* name) -> const char* {
    auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  });
}

// A config file in the temporary directory, removed at the end of the test.
class TempFile {
 public:
  explicit TempFile(const std::string& content) {
    static int counter = 0;
    path_ = testing::TempDir() + "coex_config_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter++) +
            ".json";
    std::ofstream(path_) << content;
  }
  ~TempFile() { std::remove(path_.c_str()); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

LoadResult load_file(const std::string& content, Env env = {}) {
  TempFile file(content);
  env["COEX_CONFIG"] = file.path();
  return load(env);
}

std::string joined(const std::vector<std::string>& lines) {
  std::string text;
  for (const auto& line : lines) text += line + "\n";
  return text;
}

void expect_one_line_each(const LoadResult& result) {
  for (const std::string& line : result.errors) {
    EXPECT_EQ(line.rfind("coex: ", 0), 0u) << line;
    EXPECT_EQ(line.find('\n'), std::string::npos) << line;
  }
}

TEST(Settings, DefaultsAreThoseOfTheIssues) {
  const Settings s;
  EXPECT_EQ(s.policy, "auto");  // the default policy
  EXPECT_EQ(s.devices, "all");
  EXPECT_EQ(s.log, "warn");
  EXPECT_EQ(s.report, "");
  EXPECT_EQ(s.trace, "");
  EXPECT_FALSE(s.disable);
  EXPECT_EQ(s.min_split_work_items, 4096);
  EXPECT_TRUE(s.weights.empty());
  EXPECT_EQ(s.static_mode, "equal");
  EXPECT_EQ(s.fault, "");
  EXPECT_EQ(s.cache, "");
  EXPECT_DOUBLE_EQ(s.boyer_beta, 0.07);
  EXPECT_DOUBLE_EQ(s.boyer_delta, 1.5);
  EXPECT_EQ(s.boyer_gamma, 2);
  EXPECT_DOUBLE_EQ(s.plbhec_drift, 0.5);
  EXPECT_DOUBLE_EQ(s.wp_omega, 0.5);
  EXPECT_EQ(s.ess_launches, 10);
  EXPECT_DOUBLE_EQ(s.hguided_k, 2);
  EXPECT_EQ(s.min_chunk_groups, 0);
  EXPECT_DOUBLE_EQ(s.sigmoid_k, 2);
  EXPECT_DOUBLE_EQ(s.sigmoid_irregular_k, 0.5);
  EXPECT_DOUBLE_EQ(s.sigmoid_cv_threshold, 0.25);
  EXPECT_DOUBLE_EQ(s.sigmoid_floor_p, 0.05);
  EXPECT_EQ(s.predict_max_steps, 15);
  EXPECT_DOUBLE_EQ(s.predict_eliminate, 0.1);
  EXPECT_DOUBLE_EQ(s.adaptive_probe_fraction, 0.01);
  EXPECT_DOUBLE_EQ(s.adaptive_growth, 2);
}

TEST(Settings, EnvVarNamesAreCoexAndTheKeyInCapitals) {
  EXPECT_EQ(env_var_name("policy"), "COEX_POLICY");
  EXPECT_EQ(env_var_name("min_split_work_items"), "COEX_MIN_SPLIT_WORK_ITEMS");
  ASSERT_NE(find_setting("disable"), nullptr);
  EXPECT_EQ(find_setting("disable")->env_var, "COEX_DISABLE");
  EXPECT_EQ(find_setting("config"), nullptr);  // COEX_CONFIG names the file; it is not a setting
}

TEST(Settings, NoEnvironmentGivesTheEmbeddedDefault) {
  const LoadResult result = load({});
  EXPECT_TRUE(result.errors.empty()) << joined(result.errors);
  EXPECT_EQ(settings_to_json(result.settings), settings_to_json(Settings{}));
  EXPECT_NE(result.source_description.find("embedded default"), std::string::npos);
}

TEST(Settings, EmptyCoexConfigMeansNoFile) {
  const LoadResult result = load({{"COEX_CONFIG", ""}});
  EXPECT_TRUE(result.errors.empty()) << joined(result.errors);
  EXPECT_NE(result.source_description.find("embedded default"), std::string::npos);
}

TEST(Settings, AFileReplacesTheDefaultAndMissingKeysTakeTheListDefaults) {
  const LoadResult result = load_file(R"({"policy": "boyer", "boyer_beta": 0.1, "weights": [3, 1]})");
  EXPECT_TRUE(result.errors.empty()) << joined(result.errors);
  EXPECT_EQ(result.settings.policy, "boyer");
  EXPECT_DOUBLE_EQ(result.settings.boyer_beta, 0.1);
  EXPECT_EQ(result.settings.weights, (std::vector<double>{3, 1}));
  EXPECT_DOUBLE_EQ(result.settings.boyer_delta, 1.5);
  EXPECT_EQ(result.settings.devices, "all");
  EXPECT_EQ(result.source_description.rfind("config ", 0), 0u);

  const LoadResult empty_object = load_file("{}");
  EXPECT_TRUE(empty_object.errors.empty()) << joined(empty_object.errors);
  EXPECT_EQ(settings_to_json(empty_object.settings), settings_to_json(Settings{}));
}

TEST(Settings, EnvOverridesTheFile) {
  const LoadResult result =
      load_file(R"({"policy": "boyer", "log": "info"})", {{"COEX_POLICY", "wp"}, {"COEX_WP_OMEGA", "0.25"}});
  EXPECT_TRUE(result.errors.empty()) << joined(result.errors);
  EXPECT_EQ(result.settings.policy, "wp");
  EXPECT_DOUBLE_EQ(result.settings.wp_omega, 0.25);
  EXPECT_EQ(result.settings.log, "info");  // not overridden
  EXPECT_NE(result.source_description.find("env COEX_POLICY, COEX_WP_OMEGA"), std::string::npos)
      << result.source_description;
}

TEST(Settings, EnvOverridesTheEmbeddedDefault) {
  const LoadResult result = load({{"COEX_DISABLE", "1"}, {"COEX_REPORT", "/tmp/r.json"}, {"COEX_LOG", "DEBUG"}});
  EXPECT_TRUE(result.errors.empty()) << joined(result.errors);
  EXPECT_TRUE(result.settings.disable);
  EXPECT_EQ(result.settings.report, "/tmp/r.json");
  EXPECT_EQ(result.settings.log, "debug");  // words match in any case, stored as listed
}

TEST(Settings, BadEnumNamesFileKeyValueAndTheAcceptedWords) {
  TempFile file(R"({"policy": "fastest"})");
  const LoadResult result = load({{"COEX_CONFIG", file.path()}});
  ASSERT_EQ(result.errors.size(), 1u) << joined(result.errors);
  EXPECT_EQ(result.errors[0], "coex: config " + file.path() +
                                  ": key \"policy\": \"fastest\" is not one of static, boyer, plbhec, jitp, wp, "
                                  "ess, hguided, adaptive, sigmoid, predict, auto");
  EXPECT_EQ(result.settings.policy, "auto");  // a rejected value leaves the default
}

TEST(Settings, BadEnvValueNamesTheVariable) {
  const LoadResult result = load({{"COEX_LOG", "loud"}});
  ASSERT_EQ(result.errors.size(), 1u);
  EXPECT_EQ(result.errors[0], "coex: env COEX_LOG: \"loud\" is not one of trace, debug, info, warn, error, off");
}

TEST(Settings, UnknownKeyIsAnErrorWithASuggestion) {
  TempFile file(R"({"polcy": "boyer", "zzzzzzzzzz": 1})");
  const LoadResult result = load({{"COEX_CONFIG", file.path()}});
  ASSERT_EQ(result.errors.size(), 2u) << joined(result.errors);
  expect_one_line_each(result);
  const std::string all = joined(result.errors);
  EXPECT_NE(all.find(file.path()), std::string::npos);
  EXPECT_NE(all.find("unknown key \"polcy\"; did you mean \"policy\"?"), std::string::npos) << all;
  EXPECT_NE(all.find("unknown key \"zzzzzzzzzz\" ("), std::string::npos) << all;  // nothing close
}

TEST(Settings, WrongJsonTypes) {
  const LoadResult result =
      load_file(R"({"min_split_work_items": "4096", "disable": 1, "policy": 3, "weights": 2, "report": false})");
  ASSERT_EQ(result.errors.size(), 5u) << joined(result.errors);
  expect_one_line_each(result);
  const std::string all = joined(result.errors);
  EXPECT_NE(all.find("key \"min_split_work_items\": \"4096\" is not an integer >= 0"), std::string::npos) << all;
  EXPECT_NE(all.find("key \"disable\": 1 is not true or false"), std::string::npos) << all;
  EXPECT_NE(all.find("key \"policy\": 3 is not one of static"), std::string::npos) << all;
  EXPECT_NE(all.find("key \"weights\": 2 is not a list of numbers >= 0"), std::string::npos) << all;
  EXPECT_NE(all.find("key \"report\": false is not a string"), std::string::npos) << all;
}

TEST(Settings, OutOfRangeValues) {
  const LoadResult result = load_file(
      R"({"boyer_beta": 1.5, "boyer_gamma": 0, "wp_omega": -0.1, "min_split_work_items": -1,
          "sigmoid_k": 0, "predict_max_steps": 4096.5})");
  ASSERT_EQ(result.errors.size(), 6u) << joined(result.errors);
  const std::string all = joined(result.errors);
  EXPECT_NE(all.find("key \"boyer_beta\": 1.5 is not a number in (0, 1]"), std::string::npos) << all;
  EXPECT_NE(all.find("key \"boyer_gamma\": 0 is not an integer in [1, 1000]"), std::string::npos) << all;
  EXPECT_NE(all.find("key \"wp_omega\": -0.1 is not a number in [0, 1]"), std::string::npos) << all;
  EXPECT_NE(all.find("key \"min_split_work_items\": -1 is not an integer >= 0"), std::string::npos) << all;
  EXPECT_NE(all.find("key \"sigmoid_k\": 0 is not a number > 0"), std::string::npos) << all;
  EXPECT_NE(all.find("key \"predict_max_steps\": 4096.5 is not an integer"), std::string::npos) << all;
}

TEST(Settings, IntegersWrittenAsNumbers) {
  const LoadResult result = load_file(R"({"min_split_work_items": 1e6, "ess_launches": 20.0})");
  EXPECT_TRUE(result.errors.empty()) << joined(result.errors);
  EXPECT_EQ(result.settings.min_split_work_items, 1000000);
  EXPECT_EQ(result.settings.ess_launches, 20);
  EXPECT_EQ(load_file(R"({"min_split_work_items": 1e300})").errors.size(), 1u);
  EXPECT_EQ(load_file(R"({"min_split_work_items": 18446744073709551615})").errors.size(), 1u);
}

TEST(Settings, BadDeviceSelector) {
  const LoadResult from_file = load_file(R"({"devices": "type:fpga"})");
  ASSERT_EQ(from_file.errors.size(), 1u) << joined(from_file.errors);
  EXPECT_NE(from_file.errors[0].find("key \"devices\": \"type:fpga\" is not a device selector"), std::string::npos)
      << from_file.errors[0];
  EXPECT_NE(from_file.errors[0].find("term 1 \"type:fpga\""), std::string::npos) << from_file.errors[0];

  const LoadResult from_env = load({{"COEX_DEVICES", "0,gpu"}});
  ASSERT_EQ(from_env.errors.size(), 1u);
  EXPECT_NE(from_env.errors[0].find("coex: env COEX_DEVICES: \"0,gpu\" is not a device selector"), std::string::npos);
  EXPECT_NE(from_env.errors[0].find("write type:gpu"), std::string::npos) << from_env.errors[0];

  EXPECT_TRUE(load({{"COEX_DEVICES", "type:gpu, !name:Quadro"}}).errors.empty());
}

TEST(Settings, BadFaultSpec) {
  EXPECT_TRUE(load({{"COEX_FAULT", "fail:1"}}).errors.empty());
  EXPECT_TRUE(load({{"COEX_FAULT", ""}}).errors.empty());
  EXPECT_TRUE(load({{"COEX_FAULT", "slow_build:1"}}).errors.empty());
  EXPECT_TRUE(load({{"COEX_FAULT", "hung_upload:1@2"}}).errors.empty());
  EXPECT_FALSE(load({{"COEX_FAULT", "slow_build:1@2"}}).errors.empty());
  EXPECT_TRUE(load({{"COEX_FAULT", "merge_write:1"}}).errors.empty());
  EXPECT_FALSE(load({{"COEX_FAULT", "merge_write:1@2"}}).errors.empty());
  EXPECT_TRUE(load({{"COEX_FAULT", "slow_analysis"}}).errors.empty());
  EXPECT_FALSE(load({{"COEX_FAULT", "slow_analysis:0"}}).errors.empty());  // every program's, not a device's
  EXPECT_TRUE(load({{"COEX_FAULT", "slow_libclang"}}).errors.empty());
  EXPECT_FALSE(load({{"COEX_FAULT", "slow_libclang:1"}}).errors.empty());
  EXPECT_TRUE(load({{"COEX_FAULT", "no_libclang"}}).errors.empty());
  EXPECT_FALSE(load({{"COEX_FAULT", "no_libclang:0"}}).errors.empty());
  const LoadResult result = load({{"COEX_FAULT", "crash:1"}});
  ASSERT_EQ(result.errors.size(), 1u);
  EXPECT_NE(result.errors[0].find("is not empty, fail:<device index>, stall:<device index>, stall_upload:<device "
                                  "index>, late_start:<device index>, throw_late:<device index>, build:<device "
                                  "index>, slow_build:<device index>, hung_upload:<device index>, merge_write:<device "
                                  "index>, slow_analysis, slow_libclang or no_libclang"),
            std::string::npos)
      << result.errors[0];
}

TEST(Settings, UnreadableFile) {
  const std::string missing = testing::TempDir() + "coex_no_such_dir/none.json";
  LoadResult result = load({{"COEX_CONFIG", missing}});
  ASSERT_EQ(result.errors.size(), 1u);
  EXPECT_EQ(result.errors[0], "coex: config " + missing + " (COEX_CONFIG): cannot be read: No such file or directory");

  result = load({{"COEX_CONFIG", testing::TempDir()}});
  ASSERT_EQ(result.errors.size(), 1u);
  EXPECT_NE(result.errors[0].find("is a directory"), std::string::npos) << result.errors[0];
}

TEST(Settings, InvalidJsonSaysWhere) {
  TempFile file("{\n  \"policy\": \"static\",\n  \"log\": warn\n}\n");
  const LoadResult result = load({{"COEX_CONFIG", file.path()}});
  ASSERT_EQ(result.errors.size(), 1u);
  expect_one_line_each(result);
  EXPECT_EQ(result.errors[0].rfind("coex: config " + file.path() + ": not valid JSON: ", 0), 0u) << result.errors[0];
  EXPECT_NE(result.errors[0].find("line 3"), std::string::npos) << result.errors[0];
  EXPECT_EQ(result.errors[0].find("[json.exception"), std::string::npos) << result.errors[0];

  const LoadResult not_an_object = load_file("[1, 2]");
  ASSERT_EQ(not_an_object.errors.size(), 1u);
  EXPECT_NE(not_an_object.errors[0].find("must be a JSON object"), std::string::npos);
  EXPECT_EQ(load_file("").errors.size(), 1u);
}

TEST(Settings, ErrorsFromFileAndEnvAreAllReported) {
  const LoadResult result = load_file(R"({"policy": "nope"})", {{"COEX_LOG", "nope"}, {"COEX_DISABLE", "maybe"}});
  EXPECT_EQ(result.errors.size(), 3u) << joined(result.errors);
  expect_one_line_each(result);
}

TEST(Settings, ControlCharactersStayOnOneLine) {
  const LoadResult result = load_file(R"({"devices": "a\nb"})", {{"COEX_POLICY", "x\ny"}});
  ASSERT_EQ(result.errors.size(), 2u) << joined(result.errors);
  expect_one_line_each(result);
}

TEST(Settings, BoolsFromTheEnvironment) {
  for (const char* yes : {"1", "true", "TRUE", "yes", "on", " 1 "}) {
    const LoadResult r = load({{"COEX_DISABLE", yes}});
    EXPECT_TRUE(r.errors.empty()) << yes;
    EXPECT_TRUE(r.settings.disable) << yes;
  }
  for (const char* no : {"0", "false", "No", "off"}) {
    const LoadResult r = load_file(R"({"disable": true})", {{"COEX_DISABLE", no}});
    EXPECT_TRUE(r.errors.empty()) << no;
    EXPECT_FALSE(r.settings.disable) << no;
  }
  for (const char* bad : {"", "2", "maybe"}) {
    const LoadResult r = load({{"COEX_DISABLE", bad}});
    ASSERT_EQ(r.errors.size(), 1u) << bad;
    EXPECT_NE(r.errors[0].find("is not true or false"), std::string::npos) << r.errors[0];
  }
}

TEST(Settings, NumbersFromTheEnvironment) {
  LoadResult r = load({{"COEX_MIN_SPLIT_WORK_ITEMS", "65536"}, {"COEX_BOYER_BETA", "0.5"}});
  EXPECT_TRUE(r.errors.empty()) << joined(r.errors);
  EXPECT_EQ(r.settings.min_split_work_items, 65536);
  EXPECT_DOUBLE_EQ(r.settings.boyer_beta, 0.5);
  EXPECT_EQ(load({{"COEX_MIN_SPLIT_WORK_ITEMS", "1e6"}}).settings.min_split_work_items, 1000000);
  EXPECT_EQ(load({{"COEX_MIN_SPLIT_WORK_ITEMS", "+7"}}).settings.min_split_work_items, 7);
  for (const char* bad : {"12abc", "-1", "99999999999999999999", "", "1.5"}) {
    EXPECT_EQ(load({{"COEX_MIN_SPLIT_WORK_ITEMS", bad}}).errors.size(), 1u) << bad;
  }
  for (const char* bad : {"nan", "inf", "0", "1.01", "0.5x", "0,5"}) {
    EXPECT_EQ(load({{"COEX_BOYER_BETA", bad}}).errors.size(), 1u) << bad;
  }
  r = load({{"COEX_BOYER_BETA", "2"}});
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0], "coex: env COEX_BOYER_BETA: \"2\" is not a number in (0, 1]");
}

TEST(Settings, ListsFromTheEnvironment) {
  LoadResult r = load({{"COEX_WEIGHTS", "3, 1.5,0"}});
  EXPECT_TRUE(r.errors.empty()) << joined(r.errors);
  EXPECT_EQ(r.settings.weights, (std::vector<double>{3, 1.5, 0}));

  r = load_file(R"({"weights": [1, 2]})", {{"COEX_WEIGHTS", ""}});  // empty: the empty list
  EXPECT_TRUE(r.errors.empty()) << joined(r.errors);
  EXPECT_TRUE(r.settings.weights.empty());

  r = load({{"COEX_WEIGHTS", "3,x"}});
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_NE(r.errors[0].find("\"3,x\" is not a list of numbers >= 0: element 2 (\"x\")"), std::string::npos)
      << r.errors[0];
  EXPECT_EQ(load({{"COEX_WEIGHTS", "3,,1"}}).errors.size(), 1u);
  EXPECT_EQ(load({{"COEX_WEIGHTS", "1,2,"}}).errors.size(), 1u);
  EXPECT_EQ(load({{"COEX_WEIGHTS", "1,-2"}}).errors.size(), 1u);
}

TEST(Settings, ListsFromJson) {
  LoadResult r = load_file(R"({"weights": [3, "a"]})");
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_NE(r.errors[0].find("element 2 is not a number >= 0"), std::string::npos) << r.errors[0];
  r = load_file(R"({"weights": [0.5, 2e0]})");
  EXPECT_TRUE(r.errors.empty()) << joined(r.errors);
  EXPECT_EQ(r.settings.weights, (std::vector<double>{0.5, 2}));
}

TEST(Settings, CombinationsAreChecked) {
  LoadResult r = load({{"COEX_STATIC_MODE", "ratio"}});
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_NE(r.errors[0].find("static_mode \"ratio\" needs weights"), std::string::npos) << r.errors[0];
  EXPECT_NE(r.errors[0].find("COEX_STATIC_MODE"), std::string::npos) << r.errors[0];  // says where from
  r = load({{"COEX_WEIGHTS", "0,0"}});
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_NE(r.errors[0].find("all 0"), std::string::npos) << r.errors[0];
  EXPECT_TRUE(load({{"COEX_STATIC_MODE", "ratio"}, {"COEX_WEIGHTS", "3,1"}}).errors.empty());
}

TEST(Settings, ToJsonHasEveryKey) {
  Settings s;
  s.policy = "sigmoid";
  s.weights = {2, 1};
  const nlohmann::json j = settings_to_json(s);
  EXPECT_EQ(j.size(), setting_infos().size());
  EXPECT_EQ(j.at("policy"), "sigmoid");
  EXPECT_EQ(j.at("weights"), nlohmann::json::array({2.0, 1.0}));
  EXPECT_EQ(j.at("min_split_work_items"), 4096);
  EXPECT_EQ(j.at("disable"), false);
}

TEST(Settings, JsonRoundTrip) {
  Settings s;
  s.policy = "hguided";
  s.boyer_beta = 0.125;
  s.fault = "build:1";
  s.devices = "!0";
  std::vector<std::string> errors;
  Settings back;
  apply_json_text(settings_to_json(s).dump(), "round trip", back, errors);
  EXPECT_TRUE(errors.empty()) << joined(errors);
  EXPECT_EQ(settings_to_json(back), settings_to_json(s));
}

}  // namespace
}  // namespace coex::config
