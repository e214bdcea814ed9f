#include <gtest/gtest.h>

#include <set>

#include "base/error.h"
#include "config/suite.h"
#include "harness/errors.h"

namespace perfgate {
namespace {

const SuiteVocabulary kVocab{{"runqlat", "syscalls", "kmem", "ufunc"},
                             {"command"},
                             {{"ufunc", {{"functions", "strings"}, {"binary", "string"}, {"stacks", "boolean"}}},
                              {"syscalls", {{"top", "integer"}}}}};
const SuiteVariables kVars{"/suites", "/opt/perfgate"};

Suite Parse(const std::string& text) { return ParseSuite(text, "s.json", kVocab, kVars); }

std::string ErrorOf(const std::string& text) {
  return testing::ErrorOf([&] { Parse(text); }, ExitCode::kBadInput, text);
}

TEST(Suite, ParsesScenarioWithCommentsProbesAndChecks) {
  Suite s = Parse(R"(// a comment
    {"name": "smoke", "scenarios": [{
      "name": "a", /* block comment */
      "workload": {"argv": ["${perfgate_dir}/pg-smoke", "--n", "${PG_TEST_UNSET_VAR:-7}"], "env": {"K": "v"}},
      "warmup": 2, "repetitions": {"min": 5, "max": 12}, "timeout_s": 3.5,
      "probes": ["runqlat", {"name": "kmem", "scope": "system"}],
      "checks": [{"metric": "workload.wall_time", "max_regression_pct": 7},
                 {"metric": "mm.page_alloc", "statistic": "rate", "max": 80000}]}]})");
  ASSERT_EQ(s.scenarios.size(), 1u);
  const auto& sc = s.scenarios[0];
  EXPECT_EQ(sc.workload.argv, (std::vector<std::string>{"/opt/perfgate/pg-smoke", "--n", "7"}));
  EXPECT_EQ(sc.workload.env.at("K"), "v");
  EXPECT_EQ(sc.warmup, 2);
  EXPECT_EQ(sc.repetitions_min, 5);
  EXPECT_EQ(sc.repetitions_max, 12);
  EXPECT_DOUBLE_EQ(sc.timeout_s, 3.5);
  ASSERT_EQ(sc.probes.size(), 2u);
  EXPECT_EQ(sc.probes[1].scope, "system");
  ASSERT_EQ(sc.checks.size(), 2u);
  EXPECT_EQ(sc.checks[0].type, CheckSpec::Type::kRegression);
  EXPECT_DOUBLE_EQ(sc.checks[0].max_regression_pct, 7);
  EXPECT_EQ(sc.checks[1].type, CheckSpec::Type::kBudget);
  EXPECT_EQ(sc.checks[1].name, "mm.page_alloc.rate");
  EXPECT_DOUBLE_EQ(*sc.checks[1].max, 80000);
}

// A check that names no threshold gets its metric's: a near-exact count's
// tight one, everything else's 5 %; a threshold the suite names always wins.
TEST(Suite, InstructionCountsGetATightDefaultThresholdAndOthersFivePercent) {
  Suite s = Parse(R"({"name": "x", "scenarios": [{"name": "a", "workload": {"argv": ["t"]}, "checks": [
      {"metric": "cpu.instructions"}, {"metric": "cpu.instructions.user", "statistic": "per_op"},
      {"metric": "cpu.instructions.kernel"}, {"metric": "instr.total"}, {"metric": "instr.parse_header"},
      {"metric": "cpu.instructions", "name": "loose", "max_regression_pct": 3},
      {"metric": "cpu.cycles"}, {"metric": "cpu.instructions_retired"}, {"metric": "workload.cpu_time"}]}]})");
  const std::vector<CheckSpec>& checks = s.scenarios.at(0).checks;
  ASSERT_EQ(checks.size(), 9u);
  for (size_t i = 0; i < 5; ++i) {
    EXPECT_DOUBLE_EQ(checks[i].max_regression_pct, kInstructionCountThresholdPct) << checks[i].metric;
  }
  EXPECT_DOUBLE_EQ(checks[5].max_regression_pct, 3);
  for (size_t i = 6; i < 9; ++i) EXPECT_DOUBLE_EQ(checks[i].max_regression_pct, 5) << checks[i].metric;
  EXPECT_LT(kInstructionCountThresholdPct, 1.0);
}

TEST(Suite, InstrumentIsSaidPerScenarioOrForTheSuiteOfKindsThatCanRunUnderValgrind) {
  SuiteVocabulary vocab = kVocab;
  vocab.workload_kinds = {"command", "fio"};
  vocab.instrumentable_kinds = {"command"};
  const auto parse = [&](const std::string& text) { return ParseSuite(text, "s.json", vocab, kVars); };
  const std::string scenarios = R"("scenarios": [
      {"name": "a", "workload": {"argv": ["x"]}},
      {"name": "b", "workload": {"argv": ["x"]}, "instrument": false},
      {"name": "c", "workload": {"kind": "fio", "argv": ["x"]}}])";
  // The suite's default reaches the kinds that can, and a scenario may say otherwise.
  Suite whole = parse(R"({"name": "s", "instrument": true, )" + scenarios + "}");
  EXPECT_TRUE(whole.scenarios[0].instrument);
  EXPECT_FALSE(whole.scenarios[1].instrument);
  EXPECT_FALSE(whole.scenarios[2].instrument);
  Suite none = parse(R"({"name": "s", )" + scenarios + "}");
  EXPECT_FALSE(none.scenarios[0].instrument);
  // A scenario asking for it with a kind that cannot is bad input naming the path.
  const std::string error = testing::ErrorOf(
      [&] {
        parse(R"({"name": "s", "scenarios": [{"name": "c", "workload": {"kind": "fio", "argv": ["x"]},
                                               "instrument": true}]})");
      },
      ExitCode::kBadInput, "fio");
  EXPECT_NE(error.find("s.json: $.scenarios[0].instrument: a fio workload cannot run under Valgrind (only command"),
            std::string::npos)
      << error;
  EXPECT_NE(ErrorOf(R"({"name": "s", "instrument": "yes", "scenarios": [{"name": "a", "workload": {"argv": ["x"]}}]})")
                .find("$.instrument"),
            std::string::npos);
}

TEST(Suite, UnknownKeyNamesPathAndSuggestsTheKnownOne) {
  std::string e =
      ErrorOf(R"({"name": "x", "scenarios": [{"name": "a", "workload": {"argv": ["t"]}, "repetitons": 3}]})");
  EXPECT_NE(e.find("s.json: $.scenarios[0].repetitons: unknown key"), std::string::npos) << e;
  EXPECT_NE(e.find("did you mean \"repetitions\""), std::string::npos) << e;
}

TEST(Suite, UnknownProbeSuggestsCatalogName) {
  std::string e =
      ErrorOf(R"({"name": "x", "scenarios": [{"name": "a", "workload": {"argv": ["t"]}, "probes": ["syscals"]}]})");
  EXPECT_NE(e.find("$.scenarios[0].probes[0]: unknown probe \"syscals\" (did you mean \"syscalls\"?)"),
            std::string::npos)
      << e;
}

TEST(Suite, WrongTypesAndRangesNameThePath) {
  EXPECT_NE(ErrorOf(R"({"name": "x", "scenarios": [{"name": "a", "workload": {"argv": ["t"]}, "warmup": "2"}]})")
                .find("$.scenarios[0].warmup: expected an integer"),
            std::string::npos);
  EXPECT_NE(ErrorOf(R"({"name": "x", "scenarios": [{"name": "a", "workload": {"argv": ["t"]}, "repetitions": 1}]})")
                .find("$.scenarios[0].repetitions: value 1 out of range"),
            std::string::npos);
  EXPECT_NE(ErrorOf(R"({"name": "x", "scenarios": [{"name": "a", "workload": {"argv": []}}]})")
                .find("$.scenarios[0].workload.argv"),
            std::string::npos);
  EXPECT_NE(ErrorOf(R"({"name": "x", "scenarios": [{"name": "a", "workload": {"argv": ["t"]},
              "checks": [{"metric": "mm.page_alloc", "type": "budget"}]}]})")
                .find("$.scenarios[0].checks[0]: a budget check needs"),
            std::string::npos);
  EXPECT_NE(ErrorOf(R"({"name": "x", "scenarios": [{"name": "a", "workload": {"argv": ["t"]},
              "checks": [{"metric": "workload.wall_time", "statistic": "p999"}]}]})")
                .find("did you mean \"p99\""),
            std::string::npos);
}

std::string WithProbe(const std::string& probe) {
  return R"({"name": "s", "scenarios": [{"name": "a", "workload": {"argv": ["/bin/true"]}, "probes": [)" + probe +
         "]}]}";
}

TEST(Suite, ProbeParametersAreTypedAndExpanded) {
  Suite s = Parse(WithProbe(
      R"({"name": "ufunc", "functions": ["leveldb::*", "${PG_TEST_UNSET_VAR:-main}"], "binary": "${perfgate_dir}/x",
          "stacks": true}, {"name": "syscalls", "top": 5})"));
  const auto& probes = s.scenarios[0].probes;
  ASSERT_EQ(probes.size(), 2u);
  EXPECT_EQ(probes[0].params["functions"], nlohmann::json({"leveldb::*", "main"}));
  EXPECT_EQ(probes[0].params["binary"], "/opt/perfgate/x");
  EXPECT_EQ(probes[0].params["stacks"], true);
  EXPECT_EQ(probes[1].params["top"], 5);
  EXPECT_TRUE(Parse(WithProbe(R"({"name": "kmem"})")).scenarios[0].probes[0].params.empty());
}

TEST(Suite, BadProbeParametersNameThePath) {
  EXPECT_NE(ErrorOf(WithProbe(R"({"name": "ufunc", "functons": ["a"]})"))
                .find("$.scenarios[0].probes[0].functons: unknown key \"functons\" (did you mean \"functions\"?)"),
            std::string::npos);
  EXPECT_NE(ErrorOf(WithProbe(R"({"name": "ufunc", "functions": ["a", 3]})"))
                .find("$.scenarios[0].probes[0].functions[1]: expected a string"),
            std::string::npos);
  EXPECT_NE(ErrorOf(WithProbe(R"({"name": "syscalls", "top": "five"})"))
                .find("$.scenarios[0].probes[0].top: expected an integer"),
            std::string::npos);
  EXPECT_NE(ErrorOf(WithProbe(R"({"name": "syscalls", "optional": "yes"})"))
                .find("$.scenarios[0].probes[0].optional: expected true or false"),
            std::string::npos);
  EXPECT_NE(ErrorOf(WithProbe(R"({"name": "kmem", "top": 3})")).find("unknown key \"top\""), std::string::npos);
  EXPECT_NE(
      ErrorOf(WithProbe(R"({"scope": "system"})")).find("$.scenarios[0].probes[0]: missing required key \"name\""),
      std::string::npos);
}

TEST(Suite, ScenarioNamesThatEscapeTheBaselineDirAreRefused) {
  EXPECT_NE(ErrorOf(R"({"name": "x", "scenarios": [{"name": "../etc", "workload": {"argv": ["t"]}}]})")
                .find("$.scenarios[0].name"),
            std::string::npos);
  EXPECT_NE(ErrorOf(R"({"name": "a/b", "scenarios": [{"name": "a", "workload": {"argv": ["t"]}}]})").find("$.name"),
            std::string::npos);
}

TEST(Suite, DuplicateScenarioAndTruncatedJsonAreErrors) {
  EXPECT_NE(ErrorOf(R"({"name": "x", "scenarios": [{"name": "a", "workload": {"argv": ["t"]}},
                                                   {"name": "a", "workload": {"argv": ["t"]}}]})")
                .find("duplicate scenario name"),
            std::string::npos);
  EXPECT_NE(ErrorOf(R"({"name": "x", "scenarios": [{"name": )").find("s.json: invalid JSON"), std::string::npos);
}

TEST(Suite, UnsetVariableWithoutDefaultIsAnError) {
  std::string e =
      ErrorOf(R"({"name": "x", "scenarios": [{"name": "a", "workload": {"argv": ["${PG_TEST_SURELY_UNSET}"]}}]})");
  EXPECT_NE(e.find("$.scenarios[0].workload.argv[0]: variable \"PG_TEST_SURELY_UNSET\" is not set"), std::string::npos)
      << e;
}

TEST(ClosestMatch, OnlySuggestsPlausibleTypos) {
  EXPECT_EQ(ClosestMatch("runqlt", {"runqlat", "kmem"}), "runqlat");
  EXPECT_EQ(ClosestMatch("zzzzzz", {"runqlat", "kmem"}), std::nullopt);
}

}  // namespace
}  // namespace perfgate

namespace perfgate {
namespace {

TEST(SplitCommandLine, WordsQuotesAndEscapes) {
  EXPECT_EQ(SplitCommandLine("  ./bench --n 3  ", "--x"), (std::vector<std::string>{"./bench", "--n", "3"}));
  EXPECT_EQ(SplitCommandLine(R"(a 'b c' "d \"e\"" f\ g '')", "--x"),
            (std::vector<std::string>{"a", "b c", "d \"e\"", "f g", ""}));
  EXPECT_EQ(SplitCommandLine(R"('$HOME' \$x)", "--x"), (std::vector<std::string>{"$HOME", "$x"}));
}

TEST(SplitCommandLine, UnclosedQuoteOrNothingNamesTheOption) {
  for (const char* bad : {"a 'b", "a \"b", "   "}) {
    try {
      SplitCommandLine(bad, "--candidate-cmd");
      ADD_FAILURE() << bad;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ExitCode::kBadInput);
      EXPECT_EQ(std::string(e.what()).rfind("--candidate-cmd: ", 0), 0u) << e.what();
    }
  }
}

TEST(Suite, OverridesComeBeforeTheEnvironment) {
  setenv("PG_TEST_SIDE", "from-env", 1);
  SuiteVariables vars = kVars;
  vars.overrides = {{"PG_TEST_SIDE", "override"}};
  const Suite suite = ParseSuite(
      R"({"name": "t", "scenarios": [{"name": "s", "workload": {"kind": "command", "argv": ["x", "${PG_TEST_SIDE}"]},
          "checks": []}]})",
      "s.json", kVocab, vars);
  EXPECT_EQ(suite.scenarios[0].workload.argv[1], "override");
  EXPECT_EQ(
      Parse(
          R"({"name": "t", "scenarios": [{"name": "s", "workload": {"kind": "command", "argv": ["x", "${PG_TEST_SIDE}"]},
          "checks": []}]})")
          .scenarios[0]
          .workload.argv[1],
      "from-env");
  unsetenv("PG_TEST_SIDE");
}

// An ab side may bring its own workload programs: an override of a built-in wins.
TEST(Suite, OverridesComeBeforeTheBuiltIns) {
  SuiteVariables vars = kVars;
  vars.overrides = {{"perfgate_dir", "/candidate/workloads"}};
  const Suite suite = ParseSuite(
      R"({"name": "t", "scenarios": [{"name": "s", "workload": {"kind": "command",
          "argv": ["${perfgate_dir}/pg-smoke", "${suite_dir}"]}, "checks": []}]})",
      "s.json", kVocab, vars);
  EXPECT_EQ(suite.scenarios[0].workload.argv[0], "/candidate/workloads/pg-smoke");
  EXPECT_EQ(suite.scenarios[0].workload.argv[1], kVars.suite_dir);
  EXPECT_EQ(suite.overrides_expanded, (std::set<std::string>{"perfgate_dir"}));
}

// What ab checks before it runs two sides alike: only the overrides that some
// expanded string used, not a name that merely appears in the suite's text.
TEST(Suite, NotesTheOverridesItExpanded) {
  SuiteVariables vars = kVars;
  vars.overrides = {{"BIN", "./new"}, {"FLAG", "-x"}, {"UNUSED", "u"}};
  const Suite suite = ParseSuite(
      R"({"name": "t", "description": "set ${UNUSED} to nothing", "scenarios": [{"name": "s",
          "workload": {"kind": "command", "argv": ["${BIN}/bench"], "env": {"F": "${FLAG:-none}"}}, "checks": []}]})",
      "s.json", kVocab, vars);
  EXPECT_EQ(suite.overrides_expanded, (std::set<std::string>{"BIN", "FLAG"}));
  EXPECT_EQ(suite.scenarios[0].workload.env.at("F"), "-x");
}

}  // namespace
}  // namespace perfgate
