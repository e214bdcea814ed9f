// results.json: the results model itself (metrics/results_json.h), the input
// of `perfgate report`, `merge`, `history add` and `export`.
#pragma once

#include "report/reporter.h"

namespace perfgate {

class JsonReporter : public Reporter {
 public:
  std::string Render(const RunResults& results) const override;
};

}  // namespace perfgate
