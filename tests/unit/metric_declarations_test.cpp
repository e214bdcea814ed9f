// Every metric is declared once, by what emits it; the why prices what the
// declarations say. (The probes' emissions are checked against their
// declarations with BPF in the integration tests: ProbeMetrics.*.)
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "adapters/camera_startup.h"
#include "adapters/cold_start.h"
#include "adapters/fio.h"
#include "adapters/gbench.h"
#include "adapters/unixbench.h"
#include "explain/explain.h"
#include "harness/files.h"
#include "harness/text.h"
#include "metrics/metric_declaration.h"
#include "pipeline/pipeline.h"
#include "probes/probe.h"

namespace perfgate {
namespace {

std::string Lines(const std::vector<std::string>& lines) {
  std::string text;
  for (const std::string& line : lines) text += line + "\n";
  return text;
}

TEST(MetricDeclarations, EveryDeclarationIsWellFormedAndPricedAsTheWhyCan) {
  const std::vector<std::string> problems = DeclarationProblems(GateMetricVocabulary().declarations());
  EXPECT_TRUE(problems.empty()) << Lines(problems);
}

TEST(MetricDeclarations, EveryProbeDeclaresItsMetricsUnderItsOwnNames) {
  for (const ProbeInfo& info : ProbeCatalog()) {
    EXPECT_FALSE(info.metrics.empty()) << info.name;
    for (const MetricDeclaration& d : info.metrics) {
      EXPECT_NE(d.role, MetricRole::kOutcome) << info.name << ": " << d.name << " is the probe's, not the workload's";
      EXPECT_FALSE(d.help.empty()) << d.name;
    }
  }
}

TEST(MetricDeclarations, AWhyThatCannotPriceADeclarationNamesIt) {
  std::vector<MetricDeclaration> broken = {
      {.name = "sched.waits",
       .kind = MetricKind::kCounter,
       .unit = "count",
       .role = MetricRole::kKernel,
       .price = {.pricing = Pricing::kWaitTime},
       .help = "a count priced as time"},
      {.name = "mm.things",
       .kind = MetricKind::kCounter,
       .unit = "count",
       .role = MetricRole::kKernel,
       .price = {.pricing = Pricing::kEvents},
       .help = "events without a cost"},
      {.name = "mm.inner",
       .kind = MetricKind::kCounter,
       .unit = "count",
       .role = MetricRole::kKernel,
       .price = {.pricing = Pricing::kEvents, .event_s = 1e-6, .within = "mm.outer"},
       .help = "within nothing"},
      {.name = "app.latency",
       .kind = MetricKind::kScalar,
       .unit = "ms",
       .price = {.pricing = Pricing::kEvents, .event_s = 1e-6},
       .help = "a priced outcome"},
  };
  const std::string problems = Lines(DeclarationProblems(broken));
  EXPECT_NE(problems.find("metric sched.waits: wait_time prices a counter of time"), std::string::npos) << problems;
  EXPECT_NE(problems.find("metric mm.things: events priced without a cost per event"), std::string::npos) << problems;
  EXPECT_NE(problems.find("metric mm.inner: within mm.outer, not declared"), std::string::npos) << problems;
  EXPECT_NE(problems.find("metric app.latency: only kernel-side metrics are priced"), std::string::npos) << problems;
}

// A probe whose Collect() emits a metric its definition forgot: what the
// integration test of every real probe would report.
class ForgetfulProbe final : public Probe {
 public:
  const std::string& name() const override { return name_; }
  void Attach(const ProbeOptions&, WorkloadTracker*) override {}
  void Reset() override {}
  void Collect(double duration_s, MetricSet& out) override {
    out["sched.switches"] = CounterMetric("sched.switches", "count", 10, duration_s);
    out["sched.yields"] = CounterMetric("sched.yields", "count", 3, duration_s);
    out["sched.wakeups"] = CounterMetric("sched.wakeups", "ms", 3, duration_s);
  }
  ProbeReport Report() const override { return UnattachedReport(name_, ProbeScope::kSystem); }
  void Detach() override {}

  static std::vector<MetricDeclaration> Declared() {
    return {{.name = "sched.switches", .kind = MetricKind::kCounter, .unit = "count", .role = MetricRole::kKernel},
            {.name = "sched.wakeups", .kind = MetricKind::kCounter, .unit = "count", .role = MetricRole::kKernel}};
  }

 private:
  std::string name_ = "forgetful";
};

TEST(MetricDeclarations, AProbeEmittingAnUndeclaredMetricIsNamed) {
  ForgetfulProbe probe;
  MetricSet emitted;
  probe.Collect(1.0, emitted);
  const std::vector<std::string> problems = UndeclaredMetrics("probe forgetful", ForgetfulProbe::Declared(), emitted);
  ASSERT_EQ(problems.size(), 2u) << Lines(problems);
  EXPECT_EQ(problems[0], "probe forgetful emits sched.wakeups in ms, declared in count");
  EXPECT_EQ(problems[1], "probe forgetful emits sched.yields, which it does not declare");
}

TEST(MetricDeclarations, PlaceholdersMatchAnyNameAndTheMostSpecificWins) {
  EXPECT_TRUE(DeclarationMatches("syscalls.count.<name>", "syscalls.count.getppid"));
  EXPECT_FALSE(DeclarationMatches("syscalls.count.<name>", "syscalls.count"));
  EXPECT_TRUE(DeclarationMatches("fio.<job>.<direction>.clat_<statistic>", "fio.rand.read.read.clat_p99.9"));
  EXPECT_FALSE(DeclarationMatches("block.<disk>.io_latency", "block.io_latency"));
  const MetricVocabulary vocabulary = GateMetricVocabulary();
  ASSERT_NE(vocabulary.Find("gbench.BM_Sort.real_time"), nullptr);
  EXPECT_EQ(vocabulary.Find("gbench.BM_Sort.real_time")->unit, "ns");  // not the counters' "as reported"
  EXPECT_EQ(vocabulary.RoleOf("cpu.instructions"), MetricRole::kKernel);
  EXPECT_EQ(vocabulary.RoleOf("host.other_cpus"), MetricRole::kHost);
  EXPECT_EQ(vocabulary.RoleOf("workload.page_faults"), MetricRole::kKernel);
  EXPECT_EQ(vocabulary.RoleOf("workload.wall_time"), MetricRole::kOutcome);
  EXPECT_EQ(vocabulary.RoleOf("myapp.requests"), MetricRole::kOutcome);  // undeclared: the workload's own
}

TEST(MetricDeclarations, AWithinOrUnlessIsNamedForTheMetricItsPlaceholdersMatched) {
  EXPECT_EQ(FillPlaceholders("syscalls.count.<name>", "syscalls.count.getppid", "syscalls.time.<name>"),
            "syscalls.time.getppid");
  EXPECT_EQ(FillPlaceholders("syscalls.count.<name>", "syscalls.count.getppid", "syscalls.count"), "syscalls.count");
  EXPECT_EQ(FillPlaceholders("fio.<job>.<direction>.clat", "fio.rand.read.clat", "fio.<job>.<direction>.iops"),
            "fio.rand.read.iops");
  // A placeholder the metric's own name lacks is a declaration problem.
  const std::vector<MetricDeclaration> unfilled = {
      {.name = "syscalls.count",
       .kind = MetricKind::kCounter,
       .unit = "count",
       .role = MetricRole::kKernel,
       .price = {.pricing = Pricing::kEvents, .event_s = 1e-6, .unless = "syscalls.time.<name>"},
       .help = "a total"},
      {.name = "syscalls.time.<name>",
       .kind = MetricKind::kCounter,
       .unit = "ns",
       .role = MetricRole::kKernel,
       .price = {.pricing = Pricing::kWaitTime},
       .help = "one syscall's time"},
  };
  const std::string problems = Lines(DeclarationProblems(unfilled));
  EXPECT_NE(problems.find("metric syscalls.count: syscalls.time.<name> has <name>, which its name has not"),
            std::string::npos)
      << problems;
}

TEST(MetricDeclarations, AdaptersDeclareEveryMetricTheyParse) {
  const testing::FixtureDir fio("fio"), gbench("gbench"), camera("camera-startup"), unixbench("unixbench");
  for (const char* file : {"randread.json", "seqwrite-fsync.json", "mixed.json"}) {
    const auto problems = UndeclaredMetrics("fio", FioAdapter().metrics(), ParseFioJson(fio(file), file).metrics);
    EXPECT_TRUE(problems.empty()) << Lines(problems);
  }
  for (const char* file : {"micro.json", "odd-repetitions.json"}) {
    const auto problems =
        UndeclaredMetrics("gbench", GbenchAdapter().metrics(), ParseGbenchJson(gbench(file), file).metrics);
    EXPECT_TRUE(problems.empty()) << Lines(problems);
  }
  for (const char* file : {"partial-1copy.txt", "partial-2copy.txt"}) {
    const auto problems =
        UndeclaredMetrics("unixbench", UnixBenchAdapter().metrics(), ParseUnixBenchText(unixbench(file), file).metrics);
    EXPECT_TRUE(problems.empty()) << Lines(problems);
  }
  WorkloadSpec spec;
  spec.kind = "camera-startup";
  spec.options["binary"] = "/bin/true";
  const auto problems = UndeclaredMetrics("camera-startup", CameraStartupAdapter().metrics(),
                                          CameraStartupAdapter().ParseOutput(camera("cold-start.txt"), spec).metrics);
  EXPECT_TRUE(problems.empty()) << Lines(problems);
}

// A start 10 % slower whose instructions grew 10 % and whose cycles grew
// with them: the cpu probe's counters are kernel-side causes, not outcomes.
TEST(MetricDeclarations, CpuCountersThatGrewAreRankedAsCauses) {
  ScenarioResult s;
  s.name = "start";
  auto side = [](double scale) {
    std::vector<Repetition> reps;
    for (int i = 0; i < 6; ++i) {
      Repetition rep;
      rep.index = i;
      const double jitter = 1 + 0.001 * i;
      rep.metrics["workload.wall_time"] = ScalarMetric("workload.wall_time", 0.100 * scale * jitter, "s");
      rep.metrics["cpu.instructions"] = CounterMetric("cpu.instructions", "count", 1e9 * scale * jitter, 0.1);
      rep.metrics["cpu.cycles"] = CounterMetric("cpu.cycles", "count", 2e9 * scale * jitter, 0.1);
      rep.metrics["cpu.running_fraction"] = ScalarMetric("cpu.running_fraction", 1, "fraction", Better::kNone);
      reps.push_back(rep);
    }
    return reps;
  };
  s.baseline_repetitions = side(1.0);
  s.repetitions = side(1.1);
  const Explanation e = Attribute(s, GateMetricVocabulary());
  std::vector<std::string> causes;
  for (const KernelShift& shift : e.causes) causes.push_back(shift.metric);
  EXPECT_NE(std::find(causes.begin(), causes.end(), "cpu.instructions"), causes.end()) << Lines(causes);
  EXPECT_NE(std::find(causes.begin(), causes.end(), "cpu.cycles"), causes.end()) << Lines(causes);
  EXPECT_EQ(std::find(causes.begin(), causes.end(), "cpu.running_fraction"), causes.end()) << Lines(causes);
}

}  // namespace
}  // namespace perfgate
