// Outlier repetitions: the most extreme of a check's candidate values, and
// what stood out in that repetition (more run-queue wait, a busier host,
// more reclaim), named at the end of the check's message.
#pragma once

#include "compare/check_values.h"

namespace perfgate {

// Appends "; outlier: repetition N (+x % from the median), where …" to the
// message when one of the candidate values (`reps`, in their order) lies
// beyond kOutlierZ robust standard deviations of the median.
void AddOutlierNote(CheckResult& check, const Repetitions& reps);

}  // namespace perfgate
