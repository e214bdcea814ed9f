// The why's wording (gate/explain/ computes it, ScenarioResult::explanation
// holds it): one phrase per cause and one line for the host's noise, shared
// by the one-line reports (Markdown, JUnit) and bisect.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "metrics/explanation.h"
#include "metrics/results.h"
#include "report/outcome.h"

namespace perfgate {

// A value of a shift's statistic with its unit; times per operation read as
// "147 µs/op", not "147k ns/op".
std::string FormatShiftValue(double value, const std::string& unit);
// "+9.10 us/op", "+2.00 ms/rep": time a metric accounts for.
std::string FormatAccounted(double seconds, bool per_op);
// "syscalls.count.getppid.per_op +200.0% (16.0 → 48.0 count/op), at least +9.10 us/op (…)", the
// "why" in one phrase for one-line reports (Markdown, JUnit).
std::string DescribeShift(const KernelShift& shift);
// "host noise (not a cause): host.other_cpus 0.950 → 1.02 cpus (+7.4%); waits for a CPU on the busy
// host: sched.offcpu.preempted +170 us/op; CPUs held by other tasks: stress 1.20 s, cc1plus 310 ms",
// or "" when there is none of them. Host metrics that did not clearly move are left out. Comms are
// not escaped.
std::string DescribeHost(const Explanation& explanation, bool with_cpu_holders = true);

// "+6.4 pp of 2,400 samples, ±1.1": a change of a profile's share with the
// candidate's sample count and the interval's half-width; "+6.4 pp"
// without an interval.
std::string FormatGrowth(double delta_pp, uint64_t samples, double margin_pp);
// "the extra cost is on-CPU in user code: NAME self +6.4 pp of 2,400
// samples, ±1.1", NAME not escaped.
std::string DescribeUserCode(const UserCodeGrowth& growth);

// The scenarios whose failing outcome checks the why explains, in the order
// of `findings` (most severe first): each one's first finding.
std::vector<Finding> ExplainedScenarios(const std::vector<Finding>& findings);

}  // namespace perfgate
