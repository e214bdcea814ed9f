// How a suite's workload keys reach the adapters: each adapter declares its
// kind's keys (types, defaults, required), the suite parser checks scenarios
// against that declaration and the adapter reads them through it; "args"
// become the extra arguments (WorkloadSpec::argv) of a tool's command line,
// while "argv" stays the whole command line of command workloads.
#include <gtest/gtest.h>

#include <map>
#include <optional>

#include "adapters/adapter.h"
#include "base/error.h"
#include "config/suite.h"
#include "harness/errors.h"

namespace perfgate {
namespace {

SuiteVocabulary KeysVocabulary() { return {{"runqlat"}, AdapterKinds(), {}, AdapterKeys()}; }

Suite ParseWorkload(const std::string& workload) {
  return ParseSuite(R"({"name": "s", "scenarios": [{"name": "a", "workload": )" + workload + "}]}", "s.json",
                    KeysVocabulary(), {"/suites", "/opt/perfgate"});
}

std::string WorkloadError(const std::string& workload) {
  return testing::ErrorOf([&] { ParseWorkload(workload); }, ExitCode::kBadInput, workload);
}

TEST(WorkloadKeys, ArgsOfAToolWorkloadAreExpandedIntoItsExtraArguments) {
  Suite s = ParseWorkload(R"({"kind": "gbench", "binary": "${perfgate_dir}/pg-micro", "filter": "BM_.*",
                      "args": ["--benchmark_min_time=0.2", "--scratch-dir", "${suite_dir}"]})");
  const WorkloadSpec& w = s.scenarios[0].workload;
  EXPECT_EQ(w.options.at("binary"), "/opt/perfgate/pg-micro");
  EXPECT_EQ(w.argv, (std::vector<std::string>{"--benchmark_min_time=0.2", "--scratch-dir", "/suites"}));
}

TEST(WorkloadKeys, ArgvBelongsToCommandsAndArgsToTools) {
  EXPECT_NE(
      WorkloadError(R"({"kind": "fio", "job": "j.fio", "argv": ["x"]})").find("$.scenarios[0].workload.argv: argv is"),
      std::string::npos);
  EXPECT_NE(WorkloadError(R"({"argv": ["/bin/true"], "args": ["x"]})").find("$.scenarios[0].workload.args"),
            std::string::npos);
  EXPECT_NE(WorkloadError(R"({"kind": "fio", "job": "j.fio", "args": [1]})").find("$.scenarios[0].workload.args[0]"),
            std::string::npos);
}

TEST(WorkloadKeys, CameraKeysAreTypedAndKept) {
  Suite s =
      ParseWorkload(R"({"kind": "camera-startup", "memory_limit_mb": 80, "antagonist": true, "scratch_dir": "/d"})");
  const WorkloadSpec& w = s.scenarios[0].workload;
  EXPECT_EQ(w.options.at("memory_limit_mb"), "80");
  EXPECT_EQ(w.options.at("antagonist"), "true");
  EXPECT_NE(WorkloadError(R"({"kind": "camera-startup", "antagonist": "yes"})").find("expected true or false"),
            std::string::npos);
}

// The memory keys are one declaration shared by the cold-start and camera
// kinds; a bad value is one error naming its JSON path.
TEST(WorkloadKeys, MemoryLimitKeysOfAColdStartAreCheckedWithTheirPath) {
  const std::string app = R"("kind": "cold-start", "argv": ["/bin/true"], )";
  const WorkloadSpec w =
      ParseWorkload("{" + app + R"("memory_limit_mb": 64, "antagonist": true})").scenarios[0].workload;
  EXPECT_EQ(w.options.at("memory_limit_mb"), "64");
  EXPECT_EQ(w.options.at("antagonist"), "true");
  for (const char* kind : {"cold-start", "camera-startup"}) {
    const std::string head = std::string(R"({"kind": ")") + kind + "\", " +
                             (std::string(kind) == "cold-start" ? R"("argv": ["/bin/true"], )" : "");
    const std::string small = WorkloadError(head + R"("memory_limit_mb": 8})");
    EXPECT_NE(small.find("$.scenarios[0].workload.memory_limit_mb"), std::string::npos) << small;
    const std::string alone = WorkloadError(head + R"("antagonist": true})");
    EXPECT_NE(alone.find("$.scenarios[0].workload.antagonist"), std::string::npos) << alone;
    EXPECT_NE(alone.find("needs \"memory_limit_mb\""), std::string::npos) << alone;
    const std::string text = WorkloadError(head + R"("memory_limit_mb": 64, "antagonist": "maybe"})");
    EXPECT_NE(text.find("$.scenarios[0].workload.antagonist"), std::string::npos) << text;
  }
  // A variable, so that `perfgate ab --candidate-set` turns the antagonist on.
  EXPECT_EQ(ParseWorkload("{" + app + R"("memory_limit_mb": 64, "antagonist": "${AB_ANTAGONIST:-false}"})")
                .scenarios[0]
                .workload.options.at("antagonist"),
            "false");
  const std::string after = WorkloadError("{" + app + R"("after_ready": "linger"})");
  EXPECT_NE(after.find("$.scenarios[0].workload.after_ready"), std::string::npos) << after;
}

TEST(WorkloadKeys, DeclaredDefaultsAreFilledIn) {
  EXPECT_EQ(ParseWorkload(R"({"kind": "fio", "job": "j.fio"})").scenarios[0].workload.options,
            (std::map<std::string, std::string>{{"job", "j.fio"}, {"scratch_dir", "/var/tmp"}}));
  EXPECT_EQ(ParseWorkload(R"({"kind": "unixbench"})").scenarios[0].workload.options.at("copies"), "1");
  // The camera is a cold start with its own defaults.
  const auto camera = ParseWorkload(R"({"kind": "camera-startup"})").scenarios[0].workload.options;
  EXPECT_EQ(camera.at("antagonist"), "false");
  EXPECT_EQ(camera.at("ready"), R"({"phase":"first_frame"})");
  EXPECT_EQ(camera.at("after_ready"), R"("wait")");
  EXPECT_EQ(camera.count("memory_limit_mb"), 0u);
  // A value in the suite wins over the default.
  EXPECT_EQ(ParseWorkload(R"({"kind": "fio", "job": "j.fio", "scratch_dir": "/data"})")
                .scenarios[0]
                .workload.options.at("scratch_dir"),
            "/data");
}

TEST(WorkloadKeys, UnknownKeyIsRejectedWithAHintFromTheKindsOwnKeys) {
  EXPECT_NE(
      WorkloadError(R"({"kind": "fio", "job": "j.fio", "scratch_dri": "/d"})")
          .find("$.scenarios[0].workload.scratch_dri: unknown key \"scratch_dri\" (did you mean \"scratch_dir\"?)"),
      std::string::npos);
  // Another kind's key is unknown to this one; the hint does not offer it.
  const std::string gbench = WorkloadError(R"({"kind": "gbench", "binary": "b", "jobs": "x.fio"})");
  EXPECT_NE(gbench.find("$.scenarios[0].workload.jobs: unknown key \"jobs\""), std::string::npos) << gbench;
  EXPECT_EQ(gbench.find("did you mean \"job\""), std::string::npos) << gbench;
  EXPECT_NE(WorkloadError(R"({"argv": ["t"], "filter": "BM_.*"})").find("workload.filter: unknown key \"filter\""),
            std::string::npos);
  EXPECT_NE(WorkloadError(R"({"kind": "fio", "job": "j.fio", "shell": true})").find("unknown key \"shell\""),
            std::string::npos);
}

TEST(WorkloadKeys, RequiredKeysAndTypesComeFromTheDeclaration) {
  EXPECT_NE(WorkloadError(R"({"kind": "gbench", "filter": "x"})")
                .find("s.json: $.scenarios[0].workload: missing required key \"binary\""),
            std::string::npos);
  EXPECT_NE(WorkloadError(R"({"kind": "unixbench", "copies": "2"})")
                .find("$.scenarios[0].workload.copies: expected an integer"),
            std::string::npos);
  EXPECT_NE(WorkloadError(R"({"kind": "unixbench", "copies": 0})").find("out of range [1, 1048576]"),
            std::string::npos);
}

// The parser knows no kind by name: a kind is what the vocabulary declares.
TEST(WorkloadKeys, AKindDeclaredInTheVocabularyNeedsNothingElse) {
  SuiteVocabulary vocabulary{{"runqlat"}, {"command", "toy"}};
  vocabulary.workload_keys["toy"] = {.argv = false,
                                     .args = true,
                                     .shell = false,
                                     .keys = {{"level", WorkloadKeyType::kInteger, "3", false, "how hard"},
                                              {"name", WorkloadKeyType::kString, "", true, "what to call it"}}};
  auto parse = [&](const std::string& workload) {
    return ParseSuite(R"({"name": "s", "scenarios": [{"name": "a", "workload": )" + workload + "}]}", "s.json",
                      vocabulary, {"/suites", "/opt/perfgate"})
        .scenarios[0]
        .workload;
  };
  WorkloadSpec w = parse(R"({"kind": "toy", "name": "${suite_dir}/t", "args": ["-v"]})");
  EXPECT_EQ(w.options, (std::map<std::string, std::string>{{"level", "3"}, {"name", "/suites/t"}}));
  EXPECT_EQ(w.argv, (std::vector<std::string>{"-v"}));
  EXPECT_EQ(parse(R"({"kind": "toy", "name": "t", "level": 7})").options.at("level"), "7");
  try {
    parse(R"({"kind": "toy", "name": "t", "levle": 7})");
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "s.json: $.scenarios[0].workload.levle: unknown key \"levle\" (did you mean \"level\"?)");
  }
  // A kind without a declaration takes a command line.
  EXPECT_EQ(parse(R"({"kind": "command", "argv": ["t"], "shell": true})").shell, true);
}

TEST(WorkloadOptions, AdaptersReadDefaultsAndTypesThroughTheDeclaration) {
  const WorkloadKeys declared{.argv = false,
                              .args = true,
                              .shell = false,
                              .keys = {{"level", WorkloadKeyType::kInteger, "3", false, ""},
                                       {"loud", WorkloadKeyType::kBoolean, "", false, ""},
                                       {"name", WorkloadKeyType::kString, "", true, ""}}};
  WorkloadSpec spec;
  spec.kind = "toy";
  EXPECT_EQ(WorkloadOptions(declared, spec).Integer("level"), 3);
  EXPECT_FALSE(WorkloadOptions(declared, spec).Flag("loud"));
  EXPECT_EQ(WorkloadOptions(declared, spec).Find("name"), std::nullopt);
  try {
    WorkloadOptions(declared, spec).Required("name");
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kBadInput);
    EXPECT_STREQ(e.what(), "toy workload: missing required key \"name\"");
  }
  spec.options = {{"level", "12"}, {"loud", "true"}, {"name", "n"}};
  EXPECT_EQ(WorkloadOptions(declared, spec).Integer("level"), 12);
  EXPECT_TRUE(WorkloadOptions(declared, spec).Flag("loud"));
  EXPECT_EQ(WorkloadOptions(declared, spec).Required("name"), "n");
  spec.options["colour"] = "red";
  try {
    WorkloadOptions(declared, spec);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kBadInput);
    EXPECT_STREQ(e.what(), "toy workload: \"colour\" does not apply to this kind (it takes level, loud, name)");
  }
}

TEST(WorkloadOptions, EveryAdapterDeclaresWhatItsKindTakes) {
  const std::map<std::string, WorkloadKeys> keys = AdapterKeys();
  ASSERT_EQ(keys.size(), AdapterKinds().size());
  EXPECT_TRUE(keys.at("command").argv);
  EXPECT_TRUE(keys.at("command").keys.empty());
  for (const char* tool : {"camera-startup", "fio", "unixbench", "gbench"}) {
    EXPECT_FALSE(keys.at(tool).argv) << tool;
    EXPECT_TRUE(keys.at(tool).args) << tool;
    for (const auto& key : keys.at(tool).keys) EXPECT_FALSE(key.help.empty()) << tool << " " << key.name;
  }
  EXPECT_TRUE(keys.at("fio").Find("job")->required);
  EXPECT_EQ(keys.at("fio").Find("scratch_dir")->default_value, "/var/tmp");
}

}  // namespace
}  // namespace perfgate
