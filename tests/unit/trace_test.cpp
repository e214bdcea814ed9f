// The Perfetto trace without the kernel: the writer's output decoded with
// protobuf (tracks, nesting slices, counters, interned names, clocks), which
// scenario gets traced, the ring buffer's size, the workload's phase lines,
// and the trace summary in results.json and the reports.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "adapters/command.h"
#include "base/error.h"
#include "gate/report/perfetto_trace.pb.h"
#include "harness/perfetto_trace.h"
#include "metrics/results_json.h"
#include "probes/trace_buffer.h"
#include "report/html_reporter.h"
#include "report/markdown_reporter.h"
#include "report/perfetto_writer.h"
#include "run/trace_run.h"

namespace perfgate {
namespace {

namespace pb = perfgate::perfetto;

pg_trace_event Record(uint32_t type, uint32_t arg, uint32_t tgid, uint32_t tid, uint64_t ts, uint64_t value) {
  return pg_trace_event{ts, value, tgid, tid, type, arg};
}

// Decodes, with every structural rule of the harness checked.
testing::DecodedTrace Decode(const std::string& bytes) {
  testing::DecodedTrace d = testing::DecodePerfettoTrace(bytes);
  for (const std::string& problem : d.problems) ADD_FAILURE() << problem;
  return d;
}

uint64_t TrackNamed(const testing::DecodedTrace& d, const std::string& name, uint64_t parent) {
  for (const auto& [uuid, t] : d.tracks) {
    if (t.name() == name && t.parent_uuid() == parent) return uuid;
  }
  return 0;
}

uint64_t ThreadTrack(const testing::DecodedTrace& d, int64_t tid) {
  for (const auto& [uuid, t] : d.tracks) {
    if (t.has_thread() && t.thread().tid() == tid) return uuid;
  }
  return 0;
}

std::vector<std::pair<uint64_t, std::string>> Begins(const testing::DecodedTrace& d, uint64_t track) {
  std::vector<testing::TraceSlice> slices = d.SlicesOn(track);
  std::sort(slices.begin(), slices.end(),
            [](const auto& a, const auto& b) { return a.begin != b.begin ? a.begin < b.begin : a.depth < b.depth; });
  std::vector<std::pair<uint64_t, std::string>> out;
  for (const auto& s : slices) out.emplace_back(s.begin, s.name);
  return out;
}

int MaxDepth(const testing::DecodedTrace& d, uint64_t track) {
  int depth = -1;
  for (const auto& s : d.SlicesOn(track)) depth = std::max(depth, s.depth);
  return depth + 1;
}

TraceCapture SampleCapture() {
  TraceCapture c;
  c.monotonic_ns = 1'000'000'000;
  c.boottime_ns = 1'500'000'000;
  c.processes = {{100, "pg-camera"}, {200, "antagonist <x>"}};
  c.threads = {{100, {100, "pg-camera"}}, {101, {100, "isp"}}, {200, {200, "antagonist <x>"}}};
  c.syscall_names = {{35, "nanosleep"}};
  const uint64_t t0 = 2'000'000'000;
  c.events = {
      // A 5 ms nanosleep with its off-CPU wait inside, on the main thread.
      Record(PG_TRACE_SYSCALL, 35, 100, 100, t0, 5'000'000),
      Record(PG_TRACE_OFFCPU, 0, 100, 100, t0 + 10'000, 4'900'000),
      // A wait that outlasts the syscall it started in: cut to nest.
      Record(PG_TRACE_SYSCALL, 35, 100, 101, t0, 1'000'000),
      Record(PG_TRACE_OFFCPU, 1, 100, 101, t0 + 500'000, 2'000'000),
      Record(PG_TRACE_RECLAIM, 1, 200, 200, t0 + 1'000'000, 3'000'000),
      // 30 pages in the first 10 ms bucket, then 10 two buckets later.
      Record(PG_TRACE_PAGE_ALLOC, 0, 100, 100, t0 + 1'000, 1), Record(PG_TRACE_PAGE_ALLOC, 3, 100, 101, t0 + 2'000, 8),
      Record(PG_TRACE_PAGE_ALLOC, 0, 100, 100, t0 + 3'000, 21),
      Record(PG_TRACE_PAGE_ALLOC, 0, 100, 100, t0 + 20'000'000, 10),
      // tgid unknown in the record: the thread table says 100.
      Record(PG_TRACE_RUNQ_LATENCY, 0, 0, 101, t0 + 7'000'000, 42'000),
      Record(99, 0, 100, 100, t0, 1),  // unknown type: left out
  };
  c.workloads = {
      {100, {{"load_libraries", t0 - 3'000'000, t0 - 1'000'000}, {"first_frame", t0 - 1'000'000, t0 + 9'000'000}}}};
  c.produced = c.events.size();
  return c;
}

TEST(PerfettoWriter, DecodesToProcessThreadAndCounterTracks) {
  PerfettoTraceStats stats;
  const testing::DecodedTrace d = Decode(PerfettoTrace(SampleCapture(), &stats));
  EXPECT_EQ(d.clocks, (std::set<uint32_t>{pb::BUILTIN_CLOCK_MONOTONIC, pb::BUILTIN_CLOCK_BOOTTIME}));

  std::map<int32_t, std::string> processes;
  std::map<int64_t, std::pair<int32_t, std::string>> threads;
  uint64_t camera = 0;
  for (const auto& [uuid, t] : d.tracks) {
    if (t.has_process()) processes[t.process().pid()] = t.process().process_name();
    if (t.has_process() && t.process().pid() == 100) camera = uuid;
    if (t.has_thread()) threads[t.thread().tid()] = {t.thread().pid(), t.thread().thread_name()};
  }
  EXPECT_EQ(processes, (std::map<int32_t, std::string>{{100, "pg-camera"}, {200, "antagonist <x>"}}));
  EXPECT_EQ(threads.at(101), std::make_pair(100, std::string("isp")));
  EXPECT_EQ(threads.at(200).second, "antagonist <x>");

  const uint64_t pages = TrackNamed(d, "page allocations/s", camera);
  const uint64_t runq = TrackNamed(d, "run-queue latency", camera);
  ASSERT_NE(pages, 0u);
  ASSERT_NE(runq, 0u);
  EXPECT_EQ(d.tracks.at(pages).counter().unit(), pb::CounterDescriptor::UNIT_COUNT);
  EXPECT_EQ(d.tracks.at(runq).counter().unit(), pb::CounterDescriptor::UNIT_TIME_NS);
  // 30 pages in 10 ms = 3000/s, back to 0, 10 pages = 1000/s, back to 0.
  const auto& rates = d.counters.at(pages);
  ASSERT_EQ(rates.size(), 4u);
  EXPECT_DOUBLE_EQ(rates[0].second, 3000);
  EXPECT_EQ(rates[0].first, 2'000'000'000u);
  EXPECT_DOUBLE_EQ(rates[1].second, 0);
  EXPECT_DOUBLE_EQ(rates[2].second, 1000);
  EXPECT_DOUBLE_EQ(rates[3].second, 0);
  ASSERT_EQ(d.counters.at(runq).size(), 1u);
  EXPECT_EQ(d.counters.at(runq)[0].second, 42'000);

  EXPECT_EQ(stats.records, 10u);  // every record but the unknown one
  EXPECT_EQ(stats.clipped_slices, 1u);
}

TEST(PerfettoWriter, SlicesNestOnTheirThreadAndPhasesAreTheMainThreads) {
  const testing::DecodedTrace d = Decode(PerfettoTrace(SampleCapture()));
  const uint64_t main_thread = ThreadTrack(d, 100), isp = ThreadTrack(d, 101), other = ThreadTrack(d, 200);
  EXPECT_EQ(Begins(d, main_thread), (std::vector<std::pair<uint64_t, std::string>>{{2'000'000'000, "syscall nanosleep"},
                                                                                   {2'000'010'000, "off-CPU: sleep"}}));
  EXPECT_EQ(MaxDepth(d, main_thread), 2);
  EXPECT_EQ(Begins(d, isp)[1].second, "off-CPU: I/O");
  EXPECT_EQ(Begins(d, other)[0].second, "memcg reclaim");

  const uint64_t phases = TrackNamed(d, "phases", main_thread);
  ASSERT_NE(phases, 0u) << "no phases track under the main thread";
  ASSERT_EQ(d.ThreadOf(phases)->tid(), 100);
  const auto begins = Begins(d, phases);
  ASSERT_EQ(begins.size(), 2u);
  EXPECT_EQ(begins[0].second, "load_libraries");
  EXPECT_EQ(begins[1].second, "first_frame");
}

// perfgate ab --trace: the baseline's traced repetition and the candidate's
// in one trace, each process named after its side, each workload's phases
// under its own main thread, the loss counts of both summed, and block
// requests (whose completion names no process) on lanes of their own.
TEST(PerfettoWriter, BothSidesOfAnAbRunInOneTraceNamedAfterTheirSide) {
  TraceCapture baseline;
  baseline.workloads = {{100, {{"work", 1'000, 9'000}}}};
  baseline.processes = {{100, "pg-smoke"}};
  baseline.threads = {{100, {100, "pg-smoke"}}};
  baseline.events = {Record(PG_TRACE_SYSCALL, 35, 100, 100, 2'000, 1'000),
                     Record(PG_TRACE_BLOCK_IO, 4096, 0, 0, 3'000, 500)};
  baseline.produced = 3;
  baseline.dropped = 1;
  TraceCapture candidate;
  candidate.workloads = {{300, {{"work", 20'000, 39'000}}}};
  candidate.processes = {{300, "pg-smoke"}};
  candidate.threads = {{300, {300, "pg-smoke"}}};
  candidate.events = {Record(PG_TRACE_SYSCALL, 35, 300, 300, 21'000, 3'000)};
  candidate.produced = 1;
  const TraceCapture merged = MergeTraceSides({{"baseline", baseline}, {"candidate", candidate}});
  EXPECT_EQ(merged.produced, 4u);
  EXPECT_EQ(merged.dropped, 1u);
  ASSERT_EQ(merged.workloads.size(), 2u);

  const testing::DecodedTrace d = Decode(PerfettoTrace(merged));
  std::map<int32_t, std::string> processes;
  for (const auto& [uuid, t] : d.tracks) {
    if (t.has_process()) processes[t.process().pid()] = t.process().process_name();
  }
  EXPECT_EQ(processes, (std::map<int32_t, std::string>{{100, "baseline: pg-smoke"}, {300, "candidate: pg-smoke"}}));
  for (uint32_t pid : {100u, 300u}) {
    const uint64_t phases = TrackNamed(d, "phases", ThreadTrack(d, pid));
    ASSERT_NE(phases, 0u) << pid;
    EXPECT_EQ(Begins(d, phases).size(), 1u) << pid;
  }
  int lanes = 0;
  for (const auto& [uuid, t] : d.tracks) {
    if (t.name() != "block I/O") continue;
    ++lanes;
    EXPECT_FALSE(d.ProcessOf(uuid).has_value()) << "a lane of neither side's process";
  }
  EXPECT_EQ(lanes, 1);
}

// What trace_processor would otherwise get wrong: the thread declared last on
// a sequence becomes the thread of that sequence's process-level events.
TEST(PerfettoWriter, EachThreadHasASequenceOfItsOwnAndProcessTracksNone) {
  const testing::DecodedTrace d = Decode(PerfettoTrace(SampleCapture()));
  std::map<uint32_t, std::vector<uint64_t>> threads_by_sequence;
  for (const auto& [uuid, t] : d.tracks) {
    if (t.has_thread()) threads_by_sequence[d.track_sequence.at(uuid)].push_back(uuid);
  }
  EXPECT_EQ(threads_by_sequence.size(), 3u);
  for (const auto& [sequence, threads] : threads_by_sequence) EXPECT_EQ(threads.size(), 1u) << sequence;
  for (const auto& [uuid, t] : d.tracks) {
    if (t.has_process() || t.has_counter()) {
      EXPECT_FALSE(threads_by_sequence.count(d.track_sequence.at(uuid)));
    }
  }
}

TEST(PerfettoWriter, MainThreadKnownOnlyFromItsPhasesIsNamedAfterItsProcess) {
  TraceCapture c;
  c.workloads = {{300, {{"ready", 10, 20}}}};
  c.processes = {{300, "app"}};
  const testing::DecodedTrace d = Decode(PerfettoTrace(c));
  const uint64_t main_thread = ThreadTrack(d, 300);
  ASSERT_NE(main_thread, 0u);
  EXPECT_EQ(d.tracks.at(main_thread).thread().thread_name(), "app");
  EXPECT_EQ(d.SlicesOn(TrackNamed(d, "phases", main_thread)).size(), 1u);
}

// Requests in flight together overlap: each takes the first free lane, and
// every lane is a "block I/O" track of the workload's process.
TEST(PerfettoWriter, BlockRequestsOnLanesOfTheWorkloadsProcess) {
  TraceCapture c;
  c.workloads = {{100, {}}};
  c.processes = {{100, "app"}};
  c.events = {Record(PG_TRACE_BLOCK_IO, 4096, 0, 0, 1'000, 500), Record(PG_TRACE_BLOCK_IO, 65536, 0, 0, 1'200, 100),
              Record(PG_TRACE_BLOCK_IO, 3 << 20, 0, 0, 1'400, 300), Record(PG_TRACE_BLOCK_IO, 100, 0, 0, 1'500, 10)};
  PerfettoTraceStats stats;
  const testing::DecodedTrace d = Decode(PerfettoTrace(c, &stats));
  EXPECT_EQ(stats.records, 4u);
  EXPECT_EQ(stats.clipped_slices, 0u);
  std::map<uint64_t, std::vector<std::pair<uint64_t, std::string>>> lanes;
  for (const auto& [uuid, t] : d.tracks) {
    if (t.name() != "block I/O") continue;
    EXPECT_EQ(d.ProcessOf(uuid), 100);
    EXPECT_EQ(d.ThreadOf(uuid), nullptr);
    lanes[uuid] = Begins(d, uuid);
  }
  // 1000-1500 on the first lane, then 1500-1510 after it; 1200-1300 and
  // 1400-1700 on the second.
  ASSERT_EQ(lanes.size(), 2u);
  EXPECT_EQ(lanes.begin()->second,
            (std::vector<std::pair<uint64_t, std::string>>{{1'000, "block I/O 4 KiB"}, {1'500, "block I/O 100 B"}}));
  EXPECT_EQ(std::next(lanes.begin())->second,
            (std::vector<std::pair<uint64_t, std::string>>{{1'200, "block I/O 64 KiB"}, {1'400, "block I/O 3 MiB"}}));
  for (const auto& s : d.slices) EXPECT_EQ(s.depth, 0) << s.name;
}

TEST(PerfettoWriter, ThreadIdsAboveInt32SurviveAsInt64) {
  TraceCapture c;
  c.events = {Record(PG_TRACE_RECLAIM, 0, 7, 0x80000001u, 100, 50)};
  const testing::DecodedTrace d = Decode(PerfettoTrace(c));
  EXPECT_NE(ThreadTrack(d, int64_t{0x80000001}), 0u);
}

TEST(PerfettoWriter, EmptyCaptureIsAValidTrace) {
  TraceCapture empty;
  const testing::DecodedTrace d = Decode(PerfettoTrace(empty));
  EXPECT_TRUE(d.tracks.empty());
  EXPECT_TRUE(d.slices.empty());
}

// The checker the writer's tests rely on finds each mistake it is there for.
pb::TracePacket Packet(uint32_t sequence, uint32_t flags = 0) {
  pb::TracePacket p;
  p.set_trusted_packet_sequence_id(sequence);
  if (flags != 0) p.set_sequence_flags(flags);
  return p;
}

pb::TracePacket ThreadTrackPacket(uint32_t sequence, uint64_t uuid, int64_t tid) {
  pb::TracePacket p = Packet(sequence);
  p.mutable_track_descriptor()->set_uuid(uuid);
  p.mutable_track_descriptor()->mutable_thread()->set_pid(1);
  p.mutable_track_descriptor()->mutable_thread()->set_tid(tid);
  return p;
}

pb::TracePacket EventPacket(uint32_t sequence, uint64_t ts, uint64_t track, pb::TrackEvent::Type type) {
  pb::TracePacket p = Packet(sequence);
  p.set_timestamp(ts);
  p.mutable_track_event()->set_type(type);
  p.mutable_track_event()->set_track_uuid(track);
  if (type == pb::TrackEvent::TYPE_SLICE_BEGIN) p.mutable_track_event()->set_name("s");
  if (type == pb::TrackEvent::TYPE_COUNTER) p.mutable_track_event()->set_counter_value(1);
  return p;
}

std::vector<std::string> Problems(const std::vector<pb::TracePacket>& packets) {
  pb::Trace trace;
  for (const auto& p : packets) *trace.add_packet() = p;
  return testing::DecodePerfettoTrace(trace.SerializeAsString()).problems;
}

TEST(PerfettoTraceCheck, FindsEachMistake) {
  pb::TracePacket process = Packet(1);
  process.mutable_track_descriptor()->set_uuid(1);
  process.mutable_track_descriptor()->mutable_process()->set_pid(1);
  pb::TracePacket counter = Packet(1);
  counter.mutable_track_descriptor()->set_uuid(2);
  counter.mutable_track_descriptor()->set_parent_uuid(1);
  counter.mutable_track_descriptor()->mutable_counter();
  const auto begin = pb::TrackEvent::TYPE_SLICE_BEGIN, end = pb::TrackEvent::TYPE_SLICE_END;
  const auto value = pb::TrackEvent::TYPE_COUNTER;

  EXPECT_TRUE(Problems({process, counter, ThreadTrackPacket(2, 10, 5), EventPacket(2, 1, 10, begin),
                        EventPacket(2, 2, 10, end), EventPacket(1, 3, 2, value)})
                  .empty());
  EXPECT_FALSE(Problems({EventPacket(1, 1, 10, begin), ThreadTrackPacket(1, 10, 5)}).empty()) << "undeclared";
  EXPECT_FALSE(Problems({ThreadTrackPacket(2, 10, 5), EventPacket(2, 1, 10, end)}).empty()) << "end without begin";
  EXPECT_FALSE(Problems({ThreadTrackPacket(2, 10, 5), EventPacket(2, 1, 10, begin)}).empty()) << "left open";
  EXPECT_FALSE(
      Problems({ThreadTrackPacket(2, 10, 5), EventPacket(2, 5, 10, begin), EventPacket(2, 3, 10, end)}).empty())
      << "ends before it begins";
  EXPECT_FALSE(Problems({ThreadTrackPacket(2, 10, 5), EventPacket(2, 1, 10, value)}).empty())
      << "counter on a slice track";
  EXPECT_FALSE(Problems({process, counter, EventPacket(1, 1, 2, begin), EventPacket(1, 2, 2, end)}).empty())
      << "slice on a counter track";
  EXPECT_FALSE(Problems({ThreadTrackPacket(2, 10, 5), ThreadTrackPacket(2, 11, 6)}).empty())
      << "two threads, one sequence";
  EXPECT_FALSE(Problems({process, counter, ThreadTrackPacket(1, 10, 5), EventPacket(1, 1, 2, value)}).empty())
      << "process counter on a thread's sequence";
  pb::TracePacket interned = EventPacket(2, 1, 10, begin);
  interned.set_sequence_flags(pb::TracePacket::SEQ_NEEDS_INCREMENTAL_STATE);
  interned.mutable_track_event()->set_name_iid(1);
  EXPECT_FALSE(Problems({ThreadTrackPacket(2, 10, 5), Packet(2, pb::TracePacket::SEQ_INCREMENTAL_STATE_CLEARED),
                         interned, EventPacket(2, 2, 10, end)})
                   .empty())
      << "name not interned on its sequence";
}

CheckResult Check(const std::string& name, Verdict verdict, double change_pct, Better better = Better::kLower) {
  CheckResult c;
  c.spec.name = name;
  c.verdict = verdict;
  c.change_pct = change_pct;
  c.better = better;
  return c;
}

ScenarioResult Scenario(const std::string& name, std::vector<CheckResult> checks) {
  ScenarioResult s;
  s.name = name;
  s.repetitions.resize(3);
  s.checks = std::move(checks);
  return s;
}

TEST(TraceTarget, FailedCheckWinsOverLargerChange) {
  RunResults r;
  r.scenarios = {Scenario("a", {Check("x", Verdict::kInconclusive, 40)}),
                 Scenario("b", {Check("y", Verdict::kPass, 1), Check("z", Verdict::kRegression, 12)})};
  auto target = WorstScenario(r);
  ASSERT_TRUE(target);
  EXPECT_EQ(target->scenario, 1u);
  EXPECT_NE(target->reason.find("z: regression"), std::string::npos);
}

TEST(TraceTarget, LargestChangeInTheBadDirection) {
  RunResults r;
  r.scenarios = {Scenario("a", {Check("x", Verdict::kPass, 4)}),
                 Scenario("b", {Check("throughput", Verdict::kPass, -9, Better::kHigher)}),
                 Scenario("c", {Check("y", Verdict::kImprovement, -30)})};
  auto target = WorstScenario(r);
  ASSERT_TRUE(target);
  EXPECT_EQ(target->scenario, 1u);
}

TEST(TraceTarget, ScenariosThatFailedToRunAreNotTraced) {
  RunResults r;
  r.scenarios = {Scenario("a", {})};
  r.scenarios[0].error = "probe could not attach";
  EXPECT_FALSE(WorstScenario(r));
}

TEST(TraceBufferSize, TwentyFivePollIntervalsRoundedToAPowerOfTwo) {
  EXPECT_EQ(TraceBufferBytes(0, 10), 1u << 20);
  // 1M records/s * 40 bytes * 25 * 10 ms = 10 MB -> 16 MiB.
  EXPECT_EQ(TraceBufferBytes(1e6, 10), 16u << 20);
  EXPECT_EQ(TraceBufferBytes(1e12, 10), uint64_t{512} << 20);
}

TEST(TraceRate, SlowSyscallsAreTheSampledShareOfAllCalls) {
  ScenarioResult s;
  Repetition rep;
  rep.metrics["syscalls.count"] = CounterMetric("syscalls.count", "count", 100000, 1.0);
  LogLinearHistogram latency;
  latency.Record(500, 90);        // fast
  latency.Record(5'000'000, 10);  // slow: 10 % of the sampled calls
  rep.metrics["syscalls.latency"] = HistogramMetric("syscalls.latency", "ns", latency, 1.0);
  rep.metrics["mm.page_alloc"] = CounterMetric("mm.page_alloc", "pages", 2000, 1.0);
  s.repetitions.push_back(rep);
  TraceSettings settings;
  EXPECT_NEAR(ExpectedTraceRate(s, settings), 10000 + 2000, 1);
}

TEST(PhaseLines, ParsedWithTheirTimes) {
  WorkloadOutput out = ParseCommandJsonLines(
      "{\"phase\": \"load\", \"begin_ns\": 10, \"end_ns\": 25}\n{\"metric\": \"app.x\", \"value\": 1}\n", "test");
  ASSERT_EQ(out.phases.size(), 1u);
  EXPECT_EQ(out.phases[0].name, "load");
  EXPECT_EQ(out.phases[0].begin_ns, 10u);
  EXPECT_EQ(out.phases[0].end_ns, 25u);
  EXPECT_EQ(out.metrics.size(), 1u);
}

TEST(PhaseLines, BadOnesNameTheLine) {
  for (const char* line :
       {"{\"phase\": 3, \"begin_ns\": 1, \"end_ns\": 2}", "{\"phase\": \"a\", \"begin_ns\": -1, \"end_ns\": 2}",
        "{\"phase\": \"a\", \"begin_ns\": 5, \"end_ns\": 2}", "{\"phase\": \"a\"}"}) {
    try {
      ParseCommandJsonLines(std::string("x\n") + line + "\n", "output of w");
      ADD_FAILURE() << "accepted " << line;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ExitCode::kInfra);
      EXPECT_NE(std::string(e.what()).find("output of w: line 2"), std::string::npos) << e.what();
    }
  }
}

RunResults TracedResults() {
  RunResults r;
  r.suite = "s";
  ScenarioResult s = Scenario("cam<b>", {Check("x", Verdict::kRegression, 20)});
  s.repetitions.clear();
  TraceSummary t;
  t.file = "trace.perfetto-trace";
  t.reason = "x: regression (+20.0 %) <script>";
  t.produced = 1000;
  t.received = 990;
  t.dropped = 10;
  t.buffer_bytes = 1 << 20;
  t.expected_rate = 5000;
  s.trace = t;
  r.scenarios.push_back(s);
  return r;
}

TEST(TraceSummaryJson, RoundTrips) {
  RunResults back = ResultsFromJson(ToJson(TracedResults()), "results.json");
  ASSERT_TRUE(back.scenarios[0].trace);
  const TraceSummary& t = *back.scenarios[0].trace;
  EXPECT_EQ(t.file, "trace.perfetto-trace");
  EXPECT_EQ(t.produced, 1000u);
  EXPECT_EQ(t.received, 990u);
  EXPECT_EQ(t.dropped, 10u);
  EXPECT_EQ(t.buffer_bytes, 1u << 20);
}

TEST(TraceSummaryJson, NegativeCountIsAnErrorNamingThePath) {
  nlohmann::json j = ToJson(TracedResults());
  j["scenarios"][0]["trace"]["dropped"] = -1;
  try {
    ResultsFromJson(j, "results.json");
    FAIL() << "accepted a negative drop count";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kBadInput);
    EXPECT_NE(std::string(e.what()).find("trace.dropped"), std::string::npos) << e.what();
  }
}

TEST(TraceSummaryReports, DropsShownAndEscaped) {
  const RunResults r = TracedResults();
  const std::string md = MarkdownReporter().Render(r);
  EXPECT_NE(md.find("990 records, 10 dropped (1.00 %)"), std::string::npos) << md;
  const std::string html = HtmlReporter().Render(r);
  EXPECT_NE(html.find("990 records, 10 dropped"), std::string::npos);
  EXPECT_EQ(html.find("<script>"), std::string::npos);
}

}  // namespace
}  // namespace perfgate
