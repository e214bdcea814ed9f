// The perfgate subcommands. Each returns the process exit code (DESIGN.md);
// errors arrive as perfgate::Error and main() prints them as one line.
#pragma once

#include <atomic>
#include <optional>
#include <string>
#include <vector>

#include "config/suite.h"
#include "metrics/results.h"
#include "probes/probe.h"

namespace perfgate {

// What a suite may name: the probe catalog (with each probe's parameters)
// and the workload adapter table.
SuiteVocabulary CliVocabulary();

struct RunCommandOptions {
  std::string suite_file;
  std::vector<std::string> scenarios;
  std::string baseline_dir = "baselines";
  std::string out_dir = "perfgate-out";
  std::optional<int> repetitions;
  bool update_baseline = false;
  bool strict = false;
  bool fdr = false;
  bool quiet = false;
  bool require_same_env = false;  // a baseline from another kernel/CPU is an error
  std::vector<std::string> attach_types;  // restrict the loader (testing, debugging)
  // --trace: OUT/trace.perfetto-trace of the scenario with the worst check,
  // with syscalls and off-CPU waits of at least trace_min_us as slices.
  bool trace = false;
  double trace_min_us = 1000;
};

struct OverheadCommandOptions {
  std::string suite_file;
  std::vector<std::string> scenarios;
  int pairs = 10;
  std::string metric = "workload.wall_time";
  std::string json_file;  // also write the numbers here when set
  bool quiet = false;
  std::vector<std::string> attach_types;
};

int RunCommand(const RunCommandOptions& options);
// --trace: after the measured run, one traced repetition of the scenario with
// the worst check, written as OUT/trace.perfetto-trace and summed up in its
// results (records, drops). A failure to trace is said and makes the exit code 3.
void TraceWorstScenario(const Suite& suite, const RunCommandOptions& options,
                        const std::vector<AttachType>& attach_types, const std::atomic<bool>* stop,
                        RunResults& results);
// Slowdown of each scenario under its probes vs without any (interleaved).
int OverheadCommand(const OverheadCommandOptions& options);
int BaselineRecordCommand(const RunCommandOptions& options);
int CompareCommand(const std::string& baseline_file, const std::string& results_file, const std::string& out_dir,
                   bool strict);
int ReportCommand(const std::string& results_file, const std::string& out_dir, bool strict);
int ProbesCommand();
int DoctorCommand(bool fix);

// Parses argv and dispatches; the whole of main().
int PerfgateMain(int argc, char** argv);

}  // namespace perfgate
