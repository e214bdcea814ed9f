// Where the tests find the source tree, their fixtures and the programs they
// run. The build writes the values into one small source file per test
// executable (perfgate_test_paths in tests/CMakeLists.txt), not into every
// file's compile command: a path in a command would differ from one checkout
// to another, so the compiler cache could never share the test executables'
// objects between checkouts. A value a test executable was not given is "".
#pragma once

namespace perfgate::testing::paths {

extern const char* const kSourceDir;
extern const char* const kFixtures;
extern const char* const kPerfgateBin;
extern const char* const kSmokeBin;
extern const char* const kLocksBin;
extern const char* const kReadyBin;
extern const char* const kEvidenceWorkload;
extern const char* const kUfuncTarget;
extern const char* const kUfuncLib;
extern const char* const kCCompiler;
extern const char* const kPostgresState;
extern const char* const kStageLinks;

}  // namespace perfgate::testing::paths

#define PERFGATE_SOURCE_DIR (::perfgate::testing::paths::kSourceDir)
#define PERFGATE_FIXTURES (::perfgate::testing::paths::kFixtures)
#define PERFGATE_BIN (::perfgate::testing::paths::kPerfgateBin)
#define PERFGATE_SMOKE_BIN (::perfgate::testing::paths::kSmokeBin)
#define PERFGATE_LOCKS_BIN (::perfgate::testing::paths::kLocksBin)
#define PERFGATE_READY_BIN (::perfgate::testing::paths::kReadyBin)
#define PERFGATE_EVIDENCE_WORKLOAD (::perfgate::testing::paths::kEvidenceWorkload)
#define PERFGATE_UFUNC_TARGET (::perfgate::testing::paths::kUfuncTarget)
#define PERFGATE_UFUNC_LIB (::perfgate::testing::paths::kUfuncLib)
#define PERFGATE_C_COMPILER (::perfgate::testing::paths::kCCompiler)
#define PERFGATE_TEST_POSTGRES_STATE (::perfgate::testing::paths::kPostgresState)
#define PERFGATE_STAGE_LINKS (::perfgate::testing::paths::kStageLinks)
