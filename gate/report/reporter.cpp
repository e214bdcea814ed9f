#include "report/reporter.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>

#include "base/atomic_file.h"
#include "base/error.h"
#include "report/evidence_files.h"
#include "report/html_reporter.h"
#include "report/json_reporter.h"
#include "report/junit_reporter.h"
#include "report/markdown_reporter.h"

namespace perfgate {
namespace {

// mkdir -p with mode 0755 (std::filesystem would use 0777 & ~umask).
void MakeDirectories(const std::filesystem::path& dir) {
  std::filesystem::path partial;
  for (const auto& part : dir) {
    partial /= part;
    if (::mkdir(partial.c_str(), 0755) == 0) continue;
    int err = errno;
    if (err == EEXIST && std::filesystem::is_directory(partial)) continue;
    throw InfraError("cannot create directory " + partial.string() + ": " +
                     (err == EEXIST ? "a file of that name exists" : std::strerror(err)));
  }
}

}  // namespace

void WriteReports(const RunResults& run, const std::string& out_dir) {
  const std::filesystem::path out(out_dir);
  MakeDirectories(out / "report");

  // The folded files first, so that the reports link and record their names.
  bool has_evidence = std::any_of(run.scenarios.begin(), run.scenarios.end(),
                                  [](const ScenarioResult& s) { return !s.evidence.empty(); });
  std::optional<RunResults> with_files;
  if (has_evidence) {
    with_files = run;
    AssignFoldedFiles(*with_files);
    MakeDirectories(out / kEvidenceDir);
    for (const ScenarioResult& scenario : with_files->scenarios) {
      for (const Evidence& evidence : scenario.evidence) {
        for (const FoldedProfile& profile : evidence.profiles)
          WriteFileAtomic((out / profile.file).string(), FoldedText(profile));
      }
    }
  }
  const RunResults& results = with_files ? *with_files : run;

  struct Output {
    std::filesystem::path path;
    std::unique_ptr<Reporter> reporter;
  };
  Output outputs[] = {
      {"results.json", std::make_unique<JsonReporter>()},
      {"junit.xml", std::make_unique<JUnitReporter>()},
      {"summary.md", std::make_unique<MarkdownReporter>()},
      {std::filesystem::path("report") / "index.html", std::make_unique<HtmlReporter>()},
  };
  // The stylesheet first, so that index.html never links one not yet written.
  WriteFileAtomic((out / "report" / "report.css").string(), HtmlReporter::Stylesheet());
  for (const Output& output : outputs) {
    WriteFileAtomic((out / output.path).string(), output.reporter->Render(results));
  }
}

}  // namespace perfgate
