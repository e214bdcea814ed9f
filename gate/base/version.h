// perfgate's version and the commit it was built from, for results and reports.
#pragma once

namespace perfgate {

const char* PerfgateVersion();
// The commit of the source tree at configure time; empty outside a git checkout.
const char* PerfgateGitCommit();

}  // namespace perfgate
