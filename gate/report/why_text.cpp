#include "report/why_text.h"

#include <algorithm>
#include <cmath>

#include "base/quantity.h"
#include "metrics/evidence.h"
#include "report/format.h"
#include "report/outcome.h"

namespace perfgate {
namespace {

double SecondsPer(const std::string& unit) {
  if (unit == "ns") return 1e-9;
  if (unit == "us") return 1e-6;
  if (unit == "ms") return 1e-3;
  return 1;
}

}  // namespace

std::string FormatShiftValue(double value, const std::string& unit) {
  const std::string suffix = "/op";
  if (unit.size() > suffix.size() && unit.compare(unit.size() - suffix.size(), suffix.size(), suffix) == 0) {
    const std::string base = unit.substr(0, unit.size() - suffix.size());
    if (IsTimeUnit(base)) return FormatQuantity(value * SecondsPer(base), "s") + suffix;
  }
  return FormatQuantity(value, unit);
}

std::string FormatAccounted(double seconds, bool per_op) {
  if (!std::isfinite(seconds)) return "n/a";
  return (seconds >= 0 ? "+" : "-") + FormatQuantity(std::fabs(seconds), "s") + (per_op ? "/op" : "/rep");
}

std::string DescribeShift(const KernelShift& shift) {
  std::string text = shift.metric + "." + shift.statistic + " " + FormatPercent(shift.change_pct) + " (" +
                     FormatShiftValue(shift.baseline_median, shift.unit) + " \u2192 " +
                     FormatShiftValue(shift.candidate_median, shift.unit) + ")";
  if (shift.pricing == Pricing::kUnpriced) return text + ", not priced";
  text += ", at least " + FormatAccounted(shift.accounted_low_s, shift.per_op);
  if (shift.share) text += " (" + FormatNumber(100 * *shift.share) + " % of the wall-time change)";
  if (!shift.excluding.empty()) {
    text += " beyond ";
    for (size_t i = 0; i < shift.excluding.size(); ++i) text += (i ? ", " : "") + shift.excluding[i];
  }
  return text;
}

std::string DescribeHost(const Explanation& explanation, bool with_cpu_holders) {
  const std::vector<KernelShift>& cpu_waits = explanation.cpu_waits;
  std::string text;
  for (const HostShift& h : explanation.host) {
    if (!h.moved) continue;
    text += (text.empty() ? "host noise (not a cause): " : "; ") + h.metric + " " +
            FormatQuantity(h.baseline_median, h.unit) + " \u2192 " + FormatQuantity(h.candidate_median, h.unit) + " (" +
            FormatPercent(h.change_pct) + ")";
  }
  for (size_t i = 0; i < cpu_waits.size(); ++i) {
    if (i == 0)
      text += (text.empty() ? "host noise (not a cause): " : "; ") + std::string("waits for a CPU on the busy host: ");
    text +=
        (i ? ", " : "") + cpu_waits[i].metric + " " + FormatAccounted(cpu_waits[i].accounted_s, cpu_waits[i].per_op);
  }
  if (with_cpu_holders && !explanation.cpu_holders.empty()) {
    text += (text.empty() ? "host noise (not a cause): " : "; ") + std::string("CPUs held by other tasks: ") +
            DescribeCpuHolders(explanation.cpu_holders);
  }
  return text;
}

std::vector<Finding> ExplainedScenarios(const std::vector<Finding>& findings) {
  std::vector<Finding> out;
  for (const Finding& f : findings) {
    const ScenarioResult* s = f.scenario;
    if (!f.check || !s->explanation || s->explanation->failing.empty()) continue;
    if (std::none_of(out.begin(), out.end(), [&](const Finding& o) { return o.scenario == s; })) out.push_back(f);
  }
  return out;
}

std::string FormatGrowth(double delta_pp, uint64_t samples, double margin_pp) {
  if (std::abs(delta_pp) < 1e-9) delta_pp = 0;  // shares are sums of doubles: below this is rounding
  std::string text = (delta_pp > 0 ? "+" : "") + FormatNumber(delta_pp) + " pp";
  if (samples == 0) return text;
  return text + " of " + FormatCount(samples) + " samples, \u00b1" + FormatNumber(margin_pp);
}

std::string DescribeUserCode(const UserCodeGrowth& growth) {
  if (growth.counted)
    return "the extra instructions are in user code: " + growth.function + " self " +
           FormatGrowth(growth.self_delta_pp, 0, 0) + " of the instructions (counted)";
  return "the extra cost is on-CPU in user code: " + growth.function + " self " +
         FormatGrowth(growth.self_delta_pp, growth.samples, growth.margin_pp);
}

}  // namespace perfgate
