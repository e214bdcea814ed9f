#include "bisect/bisect.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "adapters/tool_output.h"
#include "base/atomic_file.h"
#include "base/error.h"
#include "base/escape.h"
#include "base/json_text.h"
#include "base/log.h"
#include "base/quantity.h"
#include "bisect/search.h"
#include "bisect/subprocess.h"
#include "config/credentials.h"
#include "config/suite.h"
#include "metrics/metric.h"
#include "pipeline/pipeline.h"
#include "report/why_text.h"

namespace perfgate {

namespace fs = std::filesystem;

std::string ToString(StepVerdict v) {
  switch (v) {
    case StepVerdict::kGood:
      return "good";
    case StepVerdict::kBad:
      return "bad";
    case StepVerdict::kSkipped:
      return "skipped";
  }
  return "skipped";
}

std::string ToString(BisectOutcome o) {
  switch (o) {
    case BisectOutcome::kPlan:
      return "plan";
    case BisectOutcome::kNotReproduced:
      return "could not reproduce";
    case BisectOutcome::kCulprit:
      return "culprit";
    case BisectOutcome::kSuspects:
      return "suspects";
  }
  return "plan";
}

namespace {

std::string Short(const std::string& sha) { return sha.substr(0, 12); }

bool Stopped(const BisectOptions& o) { return o.stop != nullptr && o.stop->load(); }

// The suite as the bisection measures it: only the scenarios and regression
// checks that moved (a smaller family of tests, fewer workloads per step), no
// evidence repetitions (the "why" comes from the probes' metrics), and the
// adaptive maximum capped by --max-repetitions.
struct BisectSuite {
  std::string file;                 // written into the out dir
  std::vector<std::string> checks;  // "scenario/check"
  int first_round_max = 0;          // the most repetitions a scenario's first round takes
};

std::vector<std::string> ScenarioNames(const Suite& suite) {
  std::vector<std::string> names;
  for (const auto& s : suite.scenarios) names.push_back(s.name);
  return names;
}

std::string Joined(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& i : items) out += (out.empty() ? "" : ", ") + i;
  return out;
}

// What ${suite_dir} names in the derived suite: the directory of the suite
// the user gave, not the output directory the derived copy is written to.
std::string SuiteDir(const BisectOptions& o) { return fs::absolute(o.suite_file).parent_path().string(); }

BisectSuite PrepareSuite(const BisectOptions& o) {
  const SuiteVocabulary vocabulary = GateVocabulary();
  Suite suite = LoadSuite(o.suite_file, vocabulary,
                          {.suite_dir = "", .perfgate_dir = PerfgateDir(), .overrides = {{o.dir_var, "."}}});
  nlohmann::json raw = ReadJsonFile(o.suite_file);
  // --instrument: as the suite key at the suite's level, which every
  // scenario of a kind that can run under Valgrind takes.
  if (o.instrument) {
    raw["instrument"] = true;
    InstrumentEveryScenarioThatCan(suite, vocabulary);
  }
  // Scenario index -> indices of its checks kept, and checks added.
  std::map<size_t, std::set<size_t>> kept;
  std::map<size_t, std::vector<nlohmann::json>> added;
  BisectSuite out;
  auto scenario_index = [&](const std::string& name, const std::string& item) {
    for (size_t i = 0; i < suite.scenarios.size(); ++i) {
      if (suite.scenarios[i].name == name) return i;
    }
    throw InputError("--check " + item + ": no scenario \"" + name + "\" in " + o.suite_file +
                     " (scenarios: " + Joined(ScenarioNames(suite)) + ")");
  };
  if (o.checks.empty()) {
    for (size_t i = 0; i < suite.scenarios.size(); ++i) {
      for (size_t c = 0; c < suite.scenarios[i].checks.size(); ++c) {
        const CheckSpec& spec = suite.scenarios[i].checks[c];
        if (spec.type != CheckSpec::Type::kRegression) continue;
        kept[i].insert(c);
        out.checks.push_back(suite.scenarios[i].name + "/" + spec.name);
      }
      // An instrumented scenario's count check, which the gate adds to it
      // (AddInstructionChecks) when the suite has none.
      const auto& checks = suite.scenarios[i].checks;
      if (suite.scenarios[i].instrument &&
          std::none_of(checks.begin(), checks.end(), [](const CheckSpec& c) { return c.metric == kInstrTotal; })) {
        kept[i];
        out.checks.push_back(suite.scenarios[i].name + "/" + kInstructionTotalCheck);
      }
    }
    if (out.checks.empty())
      throw InputError(o.suite_file + ": no regression check to bisect on; name a metric with --check SCENARIO/METRIC");
  }
  for (const std::string& item : o.checks) {
    const size_t slash = item.find('/');
    if (slash == std::string::npos || slash == 0 || slash + 1 == item.size())
      throw InputError("--check " + item + ": expected SCENARIO/CHECK or SCENARIO/METRIC[:STATISTIC]");
    const size_t i = scenario_index(item.substr(0, slash), item);
    const std::string name = item.substr(slash + 1);
    const ScenarioSpec& scenario = suite.scenarios[i];
    const size_t colon = name.find(':');
    const std::string metric = name.substr(0, colon);
    const std::string statistic = colon == std::string::npos ? "" : name.substr(colon + 1);
    // A check of the suite matches by its name, or by its metric and
    // statistic (a check without one has its metric kind's default).
    auto matches = [&](const CheckSpec& spec) {
      if (spec.name == name) return true;
      return spec.metric == metric && (statistic.empty() || spec.statistic.empty() || spec.statistic == statistic);
    };
    bool found = false;
    for (size_t c = 0; c < scenario.checks.size(); ++c) {
      const CheckSpec& spec = scenario.checks[c];
      if (!matches(spec)) continue;
      if (spec.type != CheckSpec::Type::kRegression)
        throw InputError("--check " + item + ": a budget check; bisect follows regression checks");
      found = true;
      if (kept[i].insert(c).second) out.checks.push_back(scenario.name + "/" + spec.name);
    }
    if (found) continue;
    // A metric the suite does not check (a change point of the trend): a regression check of its own.
    // Without --max-regression-pct, the suite parser gives it its metric's default threshold.
    nlohmann::json check = {{"metric", metric}, {"type", "regression"}};
    if (o.max_regression_pct) check["max_regression_pct"] = *o.max_regression_pct;
    if (!statistic.empty()) check["statistic"] = statistic;
    added[i].push_back(check);
    out.checks.push_back(scenario.name + "/" + name);
  }

  nlohmann::json scenarios = nlohmann::json::array();
  for (size_t i = 0; i < suite.scenarios.size(); ++i) {
    if (!kept.count(i) && !added.count(i)) continue;
    nlohmann::json s = raw["scenarios"][i];
    nlohmann::json checks = nlohmann::json::array();
    for (size_t c : kept[i]) checks.push_back(raw["scenarios"][i]["checks"][c]);
    for (const auto& c : added[i]) checks.push_back(c);
    s["checks"] = checks;
    s["evidence"] = "never";
    const ScenarioSpec& spec = suite.scenarios[i];
    if (o.max_repetitions && spec.repetitions_max > *o.max_repetitions) {
      const int cap = *o.max_repetitions;
      s["repetitions"] = {{"min", std::min(spec.repetitions_min, cap)}, {"max", cap}};
    }
    out.first_round_max =
        std::max(out.first_round_max, std::min(spec.repetitions_max, o.max_repetitions.value_or(spec.repetitions_max)));
    scenarios.push_back(s);
  }
  raw["scenarios"] = scenarios;
  raw.erase("evidence");
  fs::create_directories(o.out_dir);
  out.file = (fs::path(o.out_dir) / "bisect-suite.json").string();
  WriteFileAtomic(out.file, raw.dump(2) + "\n");
  // What --check added must parse as the rest of the suite does.
  LoadSuite(out.file, GateVocabulary(),
            {.suite_dir = SuiteDir(o), .perfgate_dir = PerfgateDir(), .overrides = {{o.dir_var, "."}}});
  return out;
}

// Checkouts and builds by commit: WORK/<sha> (the worktree), WORK/<sha>.log
// and WORK/<sha>.status ("ok 0" or "failed N", then the build command), so a
// commit is built once per build command, in this run or an earlier one with
// the same work dir.
class BuildCache {
 public:
  BuildCache(const GitRepo& repo, const BisectOptions& o, std::optional<Credentials> as)
      : repo_(repo), o_(o), as_(std::move(as)) {
    work_ = o.work_dir.empty() ? fs::path(o.out_dir) / "builds" : fs::path(o.work_dir);
    work_ = fs::absolute(work_).lexically_normal();
    fs::create_directories(work_);
  }

  struct Build {
    bool ok = false;
    bool cached = false;
    int status = 0;
    std::string dir;  // the build output directory
    std::string log;
  };

  Build Of(const std::string& sha) {
    Build b;
    const fs::path tree = work_ / sha;
    const fs::path status_file = work_ / (sha + ".status");
    b.log = (work_ / (sha + ".log")).string();
    b.dir = (tree / o_.build_dir).lexically_normal().string();
    if (fs::exists(status_file) && fs::exists(tree)) {
      std::ifstream in(status_file);
      std::string word, command;
      in >> word >> b.status;
      in.ignore(1);
      std::getline(in, command, '\0');
      // Built by another command (an earlier run with the same --work): built again.
      if (command == o_.build_cmd) {
        b.ok = word == "ok";
        b.cached = true;
        return b;
      }
    }
    // A checkout left by an interrupted run is rebuilt from scratch.
    std::error_code ec;
    fs::remove_all(tree, ec);
    fs::remove(b.log, ec);
    repo_.AddWorktree(sha, tree.string());
    if (as_) ChownTree(tree);
    if (!o_.quiet) log::Progress("bisect: building %s\n", Short(sha).c_str());
    b.status = RunLogged({"bash", "-c", o_.build_cmd}, tree.string(), b.log, as_ ? &*as_ : nullptr);
    b.ok = b.status == 0;
    WriteFileAtomic(status_file.string(), (b.ok ? "ok 0" : "failed " + std::to_string(b.status)) + "\n" + o_.build_cmd);
    return b;
  }

 private:
  void ChownTree(const fs::path& tree) const {
    auto own = [&](const fs::path& p) {
      if (lchown(p.c_str(), as_->uid, as_->gid) != 0)
        throw InfraError("could not hand " + p.string() + " to " + as_->user + " for the build");
    };
    own(tree);
    for (const auto& entry : fs::recursive_directory_iterator(tree)) own(entry.path());
  }

  const GitRepo& repo_;
  const BisectOptions& o_;
  std::optional<Credentials> as_;
  fs::path work_;
};

// What a build log says went wrong, in one line: its first line that says
// "error", else its last line.
std::string LogTail(const std::string& log) {
  std::ifstream in(log);
  std::string last;
  for (std::string line; std::getline(in, line);) {
    if (line.find("error") != std::string::npos) return Abbreviate(line, 300);
    if (!line.empty()) last = line;
  }
  return last.empty() ? "no output" : Abbreviate(last, 300);
}

struct StepMeasurement {
  StepVerdict verdict = StepVerdict::kSkipped;
  std::string reason;
  std::vector<BisectCheck> checks;
  std::vector<std::string> why;
  bool infra_error = false;
};

// A candidate judged against the good endpoint: bad when a check regressed
// (confirmed by fresh pairs), good when every check passed or improved;
// anything else (inconclusive at the repetitions allowed, an error) leaves
// the commit undecided.
StepMeasurement Judge(const GateOutcome& outcome) {
  StepMeasurement m;
  bool regression = false, undecided = false;
  std::vector<std::string> regressed, unsure;
  for (const ScenarioResult& s : outcome.results.scenarios) {
    if (!s.error.empty()) {
      m.infra_error = true;
      unsure.push_back(s.name + ": " + s.error);
      continue;
    }
    for (const CheckResult& c : s.checks) {
      BisectCheck b;
      b.scenario = s.name;
      b.check = c.spec.name;
      b.verdict = c.verdict;
      b.unit = c.unit;
      b.good_median = c.baseline_median;
      b.candidate_median = c.candidate_median;
      b.change_pct = c.change_pct;
      b.p_adjusted = c.p_adjusted;
      b.repetitions = static_cast<int>(c.candidate_values.size());
      b.message = c.message;
      m.checks.push_back(b);
      const std::string line = s.name + "/" + c.spec.name + " " + FormatPercent(c.change_pct);
      if (c.verdict == Verdict::kRegression) {
        regression = true;
        regressed.push_back(line);
      } else if (c.verdict == Verdict::kInconclusive || c.verdict == Verdict::kError) {
        undecided = true;
        unsure.push_back(line + " " + ToString(c.verdict) + (c.message.empty() ? "" : ": " + c.message));
      }
    }
    bool failing = false;
    for (const CheckResult& c : s.checks) failing = failing || c.verdict == Verdict::kRegression;
    if (!failing) continue;
    if (!s.explanation) continue;
    for (const KernelShift& shift : s.explanation->causes) m.why.push_back(s.name + ": " + DescribeShift(shift));
    const std::string host = DescribeHost(*s.explanation);
    if (!host.empty()) m.why.push_back(s.name + ": " + host);
  }
  if (regression) {
    m.verdict = StepVerdict::kBad;
    m.reason = "regressed: " + Joined(regressed);
  } else if (undecided || m.infra_error) {
    m.verdict = StepVerdict::kSkipped;
    m.reason = "undecided: " + Joined(unsure);
  } else {
    m.verdict = StepVerdict::kGood;
    std::vector<std::string> lines;
    for (const BisectCheck& c : m.checks)
      lines.push_back(c.scenario + "/" + c.check + " " + FormatPercent(c.change_pct));
    m.reason = "no regression: " + Joined(lines);
  }
  return m;
}

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

struct Validated {
  GitRepo repo;
  BisectResult result;
  BisectSuite suite;
};

Validated Validate(const BisectOptions& o) {
  if (o.build_cmd.empty()) throw InputError("--build: the build command is empty");
  if (fs::path(o.build_dir).is_absolute() || o.build_dir.find("..") != std::string::npos)
    throw InputError("--build-dir " + o.build_dir + ": a path inside the checkout");
  if (o.max_steps < 1) throw InputError("--max-steps: at least 1");
  GitRepo repo = GitRepo::Open(o.repo_dir);
  BisectResult r;
  r.repo = repo.dir();
  r.suite_file = o.suite_file;
  const std::string good = repo.Resolve(o.good, "--good");
  const std::string bad = repo.Resolve(o.bad, "--bad");
  if (good == bad) throw InputError("--good and --bad are the same commit " + Short(good));
  if (!repo.IsAncestor(good, bad))
    throw InputError("--good " + o.good + " is not an ancestor of --bad " + o.bad +
                     " (is the order swapped? good is the older commit)");
  r.good = repo.Describe(good);
  r.bad = repo.Describe(bad);
  for (const std::string& sha : repo.FirstParentRange(good, bad)) r.range.push_back(repo.Describe(sha));
  if (r.range.empty() || r.range.back().sha != bad)
    throw InputError("--bad " + o.bad + " is not on the first-parent line from --good " + o.good);
  r.expected_steps = ExpectedSteps(r.range.size());
  BisectSuite suite = PrepareSuite(o);
  r.checks = suite.checks;
  return {std::move(repo), std::move(r), std::move(suite)};
}

std::optional<Credentials> BuildUser(const BisectOptions& o) {
  if (!o.user.empty()) {
    Credentials c = ResolveUser(o.user, "--user");
    if (c.uid == 0) return std::nullopt;
    if (geteuid() != 0) throw InputError("--user " + o.user + ": taking another identity needs root");
    return c;
  }
  if (geteuid() == 0) return ResolveUser("nobody", "--user (default when root)");
  return std::nullopt;
}

}  // namespace

BisectResult PlanBisect(const BisectOptions& o) {
  Validated v = Validate(o);
  v.result.outcome = BisectOutcome::kPlan;
  v.result.summary = std::to_string(v.result.range.size()) + " commits from " + Short(v.result.good.sha) + " to " +
                     Short(v.result.bad.sha) + ": about " + std::to_string(v.result.expected_steps) +
                     " build-and-compare steps after the endpoints' confirmation";
  return std::move(v.result);
}

BisectResult RunBisect(const BisectOptions& o) {
  Validated v = Validate(o);
  BisectResult& r = v.result;
  const std::optional<Credentials> as = BuildUser(o);
  BuildCache builds(v.repo, o, as);

  // Both endpoints first: a build command that fails on both is a wrong command.
  const BuildCache::Build good = builds.Of(r.good.sha);
  const BuildCache::Build bad = builds.Of(r.bad.sha);
  if (!good.ok && !bad.ok)
    throw InputError("--build: the build command failed on both endpoints (good " + Short(r.good.sha) + ": exit " +
                     std::to_string(good.status) + ", \"" + LogTail(good.log) + "\"); logs " + good.log + ", " +
                     bad.log);
  if (!good.ok)
    throw InfraError("the good endpoint " + Short(r.good.sha) + " does not build (exit " + std::to_string(good.status) +
                     "); log " + good.log);
  if (!bad.ok)
    throw InfraError("the bad endpoint " + Short(r.bad.sha) + " does not build (exit " + std::to_string(bad.status) +
                     "); log " + bad.log);

  fs::create_directories(fs::path(o.out_dir) / "steps");
  auto measure = [&](int number, size_t index, const CommitInfo& commit) {
    BisectStep step;
    step.number = number;
    step.index = index;
    step.commit = commit;
    const auto t0 = std::chrono::steady_clock::now();
    const BuildCache::Build build = builds.Of(commit.sha);
    step.build_cached = build.cached;
    step.build_log = build.log;
    if (!build.ok) {
      step.verdict = StepVerdict::kSkipped;
      step.reason = "the build failed (exit " + std::to_string(build.status) + ": " + LogTail(build.log) + ")";
      step.seconds = Seconds(t0);
      return step;
    }
    char name[32];
    std::snprintf(name, sizeof name, "%02d-", number);
    step.report_dir = "steps/" + std::string(name) + Short(commit.sha);
    GateOptions g;
    g.suite_file = v.suite.file;
    g.suite_dir = SuiteDir(o);
    g.out_dir = (fs::path(o.out_dir) / step.report_dir).string();
    g.quiet = o.quiet;
    g.attach_types = o.attach_types;
    g.stop = o.stop;
    g.instrument = o.instrument;
    if (as) g.run_as = as->user;
    AbVariants variants;
    variants.baseline_set = {{o.dir_var, good.dir}};
    variants.candidate_set = {{o.dir_var, build.dir}};
    variants.baseline_label = "good " + Short(r.good.sha);
    variants.candidate_label = (number == 0 ? "bad " : "commit ") + Short(commit.sha);
    // Pinpoint's way: a step the first round leaves ambiguous is measured
    // again with twice the repetitions, up to --max-repetitions (default
    // twice the suite's maximum); each round is a fresh A/B decided on its own.
    const int most = o.max_repetitions.value_or(2 * v.suite.first_round_max);
    int used = 0;
    StepMeasurement m;
    for (int round = 1;; ++round) {
      const GateOutcome outcome = GateInterleaved(g, variants);
      m = Judge(outcome);
      for (const BisectCheck& c : m.checks) used = std::max(used, c.repetitions);
      step.rounds = round;
      if (m.verdict != StepVerdict::kSkipped || m.infra_error || Stopped(o) || used >= most) break;
      g.repetitions = std::min(most, 2 * used);
      if (!o.quiet)
        log::Progress("bisect: %s is ambiguous after %d repetitions; again with %d\n", Short(commit.sha).c_str(), used,
                      *g.repetitions);
    }
    step.verdict = m.verdict;
    step.reason = m.reason;
    step.checks = std::move(m.checks);
    step.why = std::move(m.why);
    step.seconds = Seconds(t0);
    if (m.infra_error && number == 0) throw InfraError("the endpoints' A/B failed: " + m.reason);
    return step;
  };
  auto say = [&](const BisectStep& s) {
    std::printf("perfgate: bisect %s %s (%zu/%zu) \"%s\": %s — %s\n",
                s.number == 0 ? "endpoints:" : ("step " + std::to_string(s.number) + ":").c_str(),
                Short(s.commit.sha).c_str(), s.index, r.range.size(), OneLine(s.commit.subject).c_str(),
                ToString(s.verdict).c_str(), OneLine(s.reason).c_str());
    std::fflush(stdout);
  };

  r.confirmation = measure(0, r.range.size(), r.bad);
  say(*r.confirmation);
  if (r.confirmation->verdict != StepVerdict::kBad) {
    r.outcome = BisectOutcome::kNotReproduced;
    r.summary = "could not reproduce: the bad commit " + Short(r.bad.sha) + " does not regress against the good " +
                Short(r.good.sha) + " on this host (" + r.confirmation->reason + ")";
    return std::move(r);
  }

  BisectSearch search(r.range.size());
  std::map<size_t, size_t> step_of;  // range index -> r.steps index
  while (!Stopped(o) && static_cast<int>(r.steps.size()) < o.max_steps) {
    const std::optional<size_t> next = search.Next();
    if (!next) break;
    BisectStep step = measure(static_cast<int>(r.steps.size()) + 1, *next + 1, r.range[*next]);
    say(step);
    search.Record(*next, step.verdict == StepVerdict::kGood  ? CommitState::kGood
                         : step.verdict == StepVerdict::kBad ? CommitState::kBad
                                                             : CommitState::kSkipped);
    step_of[*next] = r.steps.size();
    r.steps.push_back(std::move(step));
  }
  if (Stopped(o)) throw InfraError("interrupted after " + std::to_string(r.steps.size()) + " steps");

  for (size_t i : search.Suspects()) r.suspects.push_back(r.range[i]);
  if (r.suspects.size() == 1) {
    r.outcome = BisectOutcome::kCulprit;
    const size_t i = search.Suspects().front();
    const BisectStep& decided = step_of.count(i) ? r.steps[step_of[i]] : *r.confirmation;
    r.why = decided.why;
    r.culprit_report_dir = decided.report_dir;
    r.summary = "first bad commit: " + Short(r.suspects[0].sha) + " \"" + r.suspects[0].subject + "\" by " +
                r.suspects[0].author + " (" + std::to_string(r.steps.size()) + " steps)";
  } else {
    r.outcome = BisectOutcome::kSuspects;
    std::vector<std::string> shas;
    for (const CommitInfo& c : r.suspects) shas.push_back(Short(c.sha));
    const bool out_of_steps = search.Next().has_value();
    r.summary = "the first bad commit is one of " + Joined(shas) + " (" +
                (out_of_steps ? "--max-steps " + std::to_string(o.max_steps) + " reached"
                              : "skipped commits between the last good and the first bad one") +
                ")";
  }
  return std::move(r);
}

}  // namespace perfgate
