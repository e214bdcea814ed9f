// The cold-start kind without running anything: its suite keys (the
// readiness marker and the eviction lists, each bad value one line with its
// JSON path), the markers fed output as it arrives, the loader's library
// list, and the phase metrics.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "adapters/adapter.h"
#include "adapters/cold_start.h"
#include "adapters/page_cache.h"
#include "adapters/readiness.h"
#include "base/error.h"
#include "config/suite.h"
#include "harness/errors.h"

namespace perfgate {
namespace {

namespace fs = std::filesystem;

SuiteVocabulary Vocabulary() { return {{"runqlat"}, AdapterKinds(), {}, AdapterKeys()}; }

Suite Parse(const std::string& workload, const std::string& scenario_extra = "") {
  return ParseSuite(
      R"({"name": "s", "scenarios": [{"name": "a", )" + scenario_extra + R"("workload": )" + workload + "}]}", "s.json",
      Vocabulary(), {"/suites", "/opt/perfgate"});
}

std::string ErrorOf(const std::string& workload, const std::string& scenario_extra = "") {
  return testing::ErrorOf([&] { Parse(workload, scenario_extra); }, ExitCode::kBadInput, workload);
}

// One line, starting with the file and the JSON path.
void ExpectOneLineAt(const std::string& error, const std::string& path, const std::string& what) {
  EXPECT_EQ(error.find('\n'), std::string::npos) << error;
  EXPECT_EQ(error.rfind("s.json: " + path + ": ", 0), 0u) << error;
  EXPECT_NE(error.find(what), std::string::npos) << error;
}

std::string Workload(const std::string& ready) {
  return R"({"kind": "cold-start", "argv": ["/bin/true"], "ready": )" + ready + "}";
}

TEST(ColdStartSuite, ReadyMarkersAreKeptNormalized) {
  const auto ready = [](const std::string& marker) {
    return nlohmann::json::parse(Parse(Workload(marker)).scenarios[0].workload.options.at("ready"));
  };
  EXPECT_EQ(ready(R"({"stdout": "listening on \\d+"})"), nlohmann::json({{"stdout", "listening on \\d+"}}));
  EXPECT_EQ(ready(R"({"port": 8080})"), nlohmann::json({{"port", 8080}}));
  EXPECT_EQ(ready(R"({"file": "${suite_dir}/ready"})"), nlohmann::json({{"file", "/suites/ready"}}));
  EXPECT_EQ(ready(R"({"exit": true})"), nlohmann::json({{"exit", true}}));
  // Without "ready" the app's exit is its readiness; eviction of the executable and libraries is on.
  const WorkloadSpec w = Parse(R"({"kind": "cold-start", "argv": ["/bin/true"]})").scenarios[0].workload;
  EXPECT_EQ(nlohmann::json::parse(w.options.at("ready")), nlohmann::json({{"exit", true}}));
  EXPECT_EQ(nlohmann::json::parse(w.options.at("evict"))["executable"], true);
  EXPECT_EQ(w.options.at("drop_caches"), "false");
}

TEST(ColdStartSuite, UnknownMarkerKindIsOneLineWithItsPath) {
  ExpectOneLineAt(ErrorOf(Workload(R"({"tcp": 80})")), "$.scenarios[0].workload.ready.tcp", "unknown key");
  ExpectOneLineAt(ErrorOf(Workload(R"({"stdout": "a", "port": 1})")), "$.scenarios[0].workload.ready",
                  "expected one marker");
  ExpectOneLineAt(ErrorOf(Workload(R"("stdout")")), "$.scenarios[0].workload.ready", "expected an object");
  ExpectOneLineAt(ErrorOf(Workload(R"({"exit": false})")), "$.scenarios[0].workload.ready.exit", "expected true");
}

TEST(ColdStartSuite, PortOutOfRangeIsOneLineWithItsPath) {
  ExpectOneLineAt(ErrorOf(Workload(R"({"port": 0})")), "$.scenarios[0].workload.ready.port", "out of range");
  ExpectOneLineAt(ErrorOf(Workload(R"({"port": 65536})")), "$.scenarios[0].workload.ready.port", "out of range");
  ExpectOneLineAt(ErrorOf(Workload(R"({"port": "80"})")), "$.scenarios[0].workload.ready.port", "expected");
}

TEST(ColdStartSuite, PatternThatDoesNotCompileIsOneLineWithItsPath) {
  ExpectOneLineAt(ErrorOf(Workload(R"({"stdout": "ready ("})")), "$.scenarios[0].workload.ready.stdout",
                  "does not compile");
  ExpectOneLineAt(ErrorOf(Workload(R"({"stderr": "[z-a]"})")), "$.scenarios[0].workload.ready.stderr",
                  "does not compile");
}

TEST(ColdStartSuite, EvictionListsMustNameReadableFilesAndDirectories) {
  const auto evict = [](const std::string& lists) {
    return R"({"kind": "cold-start", "argv": ["/bin/true"], "evict": )" + lists + "}";
  };
  ExpectOneLineAt(ErrorOf(evict(R"({"files": ["/no/such/file"]})")), "$.scenarios[0].workload.evict.files[0]",
                  "no such file");
  ExpectOneLineAt(ErrorOf(evict(R"({"files": ["relative/path"]})")), "$.scenarios[0].workload.evict.files[0]",
                  "absolute path");
  ExpectOneLineAt(ErrorOf(evict(R"({"files": ["/etc"]})")), "$.scenarios[0].workload.evict.files[0]", "is a directory");
  ExpectOneLineAt(ErrorOf(evict(R"({"dirs": ["/etc/hostname"]})")), "$.scenarios[0].workload.evict.dirs[0]",
                  "not a directory");
  ExpectOneLineAt(ErrorOf(evict(R"({"dirs": [1]})")), "$.scenarios[0].workload.evict.dirs[0]", "expected a string");
  ExpectOneLineAt(ErrorOf(evict(R"({"libs": true})")), "$.scenarios[0].workload.evict.libs", "unknown key");
  EXPECT_EQ(nlohmann::json::parse(Parse(evict(R"({"files": ["/etc/hostname"], "dirs": ["/etc/default"]})"))
                                      .scenarios[0]
                                      .workload.options.at("evict")),
            nlohmann::json(
                {{"executable", true}, {"libraries", true}, {"files", {"/etc/hostname"}}, {"dirs", {"/etc/default"}}}));
}

TEST(ColdStartSuite, AFileTheWorkloadUserMayNotReadIsRejected) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to take another user's identity";
  // /etc/shadow is root's only (0640 root:shadow); nobody is in no such group.
  ExpectOneLineAt(ErrorOf(R"({"kind": "cold-start", "argv": ["/bin/true"], "evict": {"files": ["/etc/shadow"]}})",
                          R"("run_as": "nobody", )"),
                  "$.scenarios[0].workload.evict.files[0]", "user \"nobody\" may not read it");
  EXPECT_NO_THROW(Parse(R"({"kind": "cold-start", "argv": ["/bin/true"], "evict": {"files": ["/etc/hostname"]}})",
                        R"("run_as": "nobody", )"));
}

// Feeds `text` in pieces of `piece` bytes; returns the number of bytes fed when it fired, or -1.
long FireOffset(ReadinessMarker& marker, OutputStream stream, const std::string& text, size_t piece) {
  for (size_t at = 0; at < text.size(); at += piece) {
    const std::string_view chunk = std::string_view(text).substr(at, piece);
    if (marker.OnOutput(stream, chunk)) return static_cast<long>(at + chunk.size());
  }
  return -1;
}

TEST(ReadinessMarkers, OutputPatternFiresAtTheEndOfTheFirstMatchingLine) {
  const std::string text = "starting\nlistening on port 8080\nmore\n";
  for (size_t piece : {1u, 3u, 7u, 100u}) {
    OutputPatternMarker marker(OutputStream::kStdout, "port \\d+$");
    const long fired = FireOffset(marker, OutputStream::kStdout, text, piece);
    // At the newline of the second line, or at the end of the piece that holds it.
    EXPECT_GE(fired, 32) << piece;
    EXPECT_LT(fired, 32 + static_cast<long>(piece)) << piece;
  }
}

TEST(ReadinessMarkers, OutputPatternWatchesOnlyItsStream) {
  OutputPatternMarker marker(OutputStream::kStderr, "ready");
  EXPECT_FALSE(marker.OnOutput(OutputStream::kStdout, "ready\n"));
  EXPECT_TRUE(marker.OnOutput(OutputStream::kStderr, "ready\r\n"));
}

TEST(ReadinessMarkers, PatternDoesNotMatchAcrossLinesNorBeforeTheLineEnds) {
  OutputPatternMarker marker(OutputStream::kStdout, "^ready$");
  EXPECT_FALSE(marker.OnOutput(OutputStream::kStdout, "not re"));
  EXPECT_FALSE(marker.OnOutput(OutputStream::kStdout, "ady\nrea"));
  EXPECT_FALSE(marker.OnOutput(OutputStream::kStdout, "dy"));
  EXPECT_TRUE(marker.OnOutput(OutputStream::kStdout, "\n"));
}

TEST(ReadinessMarkers, AVeryLongLineIsCheckedInPiecesWithoutBlowingTheStack) {
  // Anchored, so each piece is one deep match attempt (64 KiB deep would overflow the stack).
  OutputPatternMarker marker(OutputStream::kStdout, "^a*c");
  const std::string line(64 << 10, 'a');
  EXPECT_FALSE(marker.OnOutput(OutputStream::kStdout, line));
  EXPECT_TRUE(marker.OnOutput(OutputStream::kStdout, "c\n"));
}

TEST(ReadinessMarkers, PhaseFiresOnTheNamedPhaseLineOnly) {
  PhaseLineMarker marker("first_frame");
  EXPECT_FALSE(marker.OnOutput(OutputStream::kStdout, R"({"phase": "load", "begin_ns": 1, "end_ns": 2})"
                                                      "\n"));
  EXPECT_FALSE(marker.OnOutput(OutputStream::kStdout, "first_frame\n{not json\n"));
  EXPECT_TRUE(marker.OnOutput(OutputStream::kStdout, R"({"phase": "first_frame", "begin_ns": 3, "end_ns": 4})"
                                                     "\n"));
}

TEST(ReadinessMarkers, FileFiresOnlyWhenWrittenAfterTheStart) {
  const std::string path = fs::temp_directory_path() / ("pg-ready-marker-" + std::to_string(getpid()));
  std::ofstream(path) << "old\n";
  const struct timespec old_times[2] = {{1000, 0}, {1000, 0}};
  ASSERT_EQ(utimensat(AT_FDCWD, path.c_str(), old_times, 0), 0);
  FileMarker marker(path);
  marker.Start();
  EXPECT_FALSE(marker.Poll());  // left by an earlier start
  std::ofstream(path) << "new\n";
  EXPECT_TRUE(marker.Poll());
  fs::remove(path);
  EXPECT_FALSE(marker.Poll());
}

TEST(ReadinessMarkers, MadeFromTheNormalizedSuiteValue) {
  EXPECT_TRUE(MakeReadinessMarker({{"exit", true}}, "w")->ready_at_exit());
  EXPECT_EQ(MakeReadinessMarker({{"port", 8080}}, "w")->poll_interval_ms(), 1);
  EXPECT_NE(MakeReadinessMarker({{"stderr", "x"}}, "w")->Describe().find("stderr"), std::string::npos);
  // Specs made in code do not pass the suite parser: the same checks hold.
  EXPECT_NE(testing::ErrorOf(
                [] {
                  MakeReadinessMarker({{"port", 70000}}, "w");
                },
                ExitCode::kBadInput)
                .find("w:"),
            std::string::npos);
  EXPECT_NE(testing::ErrorOf(
                [] {
                  MakeReadinessMarker({{"stdout", "("}}, "w");
                },
                ExitCode::kBadInput)
                .find("does not compile"),
            std::string::npos);
}

TEST(LoaderList, KeepsResolvedPathsInOrderWithoutTheVdso) {
  const std::string text =
      "\tlinux-vdso.so.1 (0x00007ffd5c9e5000)\n"
      "\tlibm.so.6 => /lib/x86_64-linux-gnu/libm.so.6 (0x00007f0e1c0e1000)\n"
      "\tlibmissing.so => not found\n"
      "\tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x00007f0e1bf00000)\n"
      "\t/lib64/ld-linux-x86-64.so.2 (0x00007f0e1c1d0000)\n";
  EXPECT_EQ(ParseLoaderList(text),
            (std::vector<std::string>{"/lib/x86_64-linux-gnu/libm.so.6", "/lib/x86_64-linux-gnu/libc.so.6",
                                      "/lib64/ld-linux-x86-64.so.2"}));
}

TEST(LoaderList, ResolvesTheLibrariesOfARealExecutable) {
  const std::string interp = ElfInterpreter("/bin/ls");
  ASSERT_FALSE(interp.empty());
  const std::vector<std::string> libraries = SharedLibraries("/bin/ls", "");
  bool libc = false;
  for (const auto& l : libraries) libc |= fs::path(l).filename() == "libc.so.6";
  EXPECT_TRUE(libc) << ::testing::PrintToString(libraries);
  EXPECT_EQ(ElfInterpreter("/etc/hostname"), "");
}

TEST(ColdStartFiles, ExecutableThroughPathItsInterpreterAndLibraries) {
  WorkloadSpec spec;
  spec.kind = "cold-start";
  spec.argv = {"ls"};
  const std::vector<std::string> files = ColdStartFiles(spec);
  ASSERT_FALSE(files.empty());
  EXPECT_EQ(fs::path(files[0]).filename(), "ls");
  EXPECT_GT(files.size(), 2u);
  // A script: the shell that runs it is evicted with it.
  spec.argv = {"/usr/bin/ldd"};
  spec.options["evict"] = R"({"executable": true, "libraries": false, "files": [], "dirs": []})";
  const std::vector<std::string> script = ColdStartFiles(spec);
  ASSERT_EQ(script.size(), 2u) << ::testing::PrintToString(script);
  EXPECT_EQ(fs::path(script[1]).filename(), "bash");
}

TEST(ColdStartOutput, PhasesBecomeMetricsAndTraceSpans) {
  WorkloadSpec spec;
  spec.kind = "cold-start";
  spec.argv = {"app"};
  const WorkloadOutput out = FindAdapter("cold-start")
                                 ->ParseOutput(
                                     "hello\n{\"phase\": \"load config\", \"begin_ns\": 1000000, \"end_ns\": 3500000}\n"
                                     "{\"metric\": \"app.requests\", \"value\": 3}\n",
                                     spec);
  ASSERT_EQ(out.phases.size(), 1u);
  EXPECT_EQ(out.phases[0].name, "load config");
  EXPECT_DOUBLE_EQ(out.metrics.at("coldstart.phase.load_config").value, 2.5);
  EXPECT_EQ(out.metrics.at("coldstart.phase.load_config").unit, "ms");
  EXPECT_DOUBLE_EQ(out.metrics.at("app.requests").value, 3);
}

TEST(ColdStartOutput, StartMetricsComeFromTheTreesUsage) {
  WorkloadSpec spec;
  spec.kind = "cold-start";
  spec.argv = {"app"};
  ::rusage usage{};
  usage.ru_majflt = 12;
  usage.ru_inblock = 8;
  MetricSet m;
  FindAdapter("cold-start")->AddStartMetrics(0.25, usage, spec, m);
  EXPECT_DOUBLE_EQ(m.at("coldstart.time_to_ready").value, 250);
  EXPECT_DOUBLE_EQ(m.at("coldstart.major_faults").value, 12);
  EXPECT_DOUBLE_EQ(m.at("coldstart.disk_read_bytes").value, 4096);
}

}  // namespace
}  // namespace perfgate
