// The only file compiled with the version and commit defined, so a new
// commit rebuilds this file and not every object that includes a header.
#include "base/version.h"

namespace perfgate {

const char* PerfgateVersion() { return PERFGATE_VERSION; }
const char* PerfgateGitCommit() { return PERFGATE_GIT_COMMIT; }

}  // namespace perfgate
