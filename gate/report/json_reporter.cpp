#include "report/json_reporter.h"

#include "metrics/results_json.h"

namespace perfgate {

std::string JsonReporter::Render(const RunResults& results) const {
  // Indented, so that baselines and results diff line by line in review.
  // Replace invalid UTF-8 from workload output instead of throwing.
  return ToJson(results).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace perfgate
