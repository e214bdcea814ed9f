// junit.xml in the flat dialect that Jenkins' JUnit plugin,
// dorny/test-reporter, mikepenz/action-junit-report and
// EnricoMi/publish-unit-test-result-action all read:
//
//   <testsuites>                 one run
//     <testsuite>                one per scenario, counts match its testcases
//       <testcase>               one per check; classname perfgate.<suite>.<scenario>
//         <failure type="PerfRegression"|"BudgetExceeded">   check failed
//         <error type="InfrastructureError">                  check or scenario broke
//         <skipped>                                           inconclusive
//
// A scenario that failed to run gets one extra testcase named "run" carrying
// the error. No CDATA: everything is escaped text.
#pragma once

#include "report/reporter.h"

namespace perfgate {

class JUnitReporter : public Reporter {
 public:
  std::string Render(const RunResults& results) const override;
};

}  // namespace perfgate
