// The reports of a bisection: bisect.json (the whole result), bisect.md (for
// a job summary or an issue comment) and bisect.html (+ report.css, the
// gate's stylesheet). Every string from git, the suite or the workloads is
// escaped for its format.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "bisect/bisect.h"

namespace perfgate {

nlohmann::json BisectJson(const BisectResult& result);
std::string BisectMarkdown(const BisectResult& result);
std::string BisectHtml(const BisectResult& result);
// Writes the three into out_dir (atomically) with report.css beside the HTML.
void WriteBisectReports(const BisectResult& result, const std::string& out_dir);

}  // namespace perfgate
