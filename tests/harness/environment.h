// What of the tests' environment changes what they may expect: root for BPF,
// CI=true (where a skip or a missing tool would hide lost coverage and so
// fails instead), AddressSanitizer.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

namespace perfgate::testing {

// Built with AddressSanitizer (ci/project/test.sh's second build): memory numbers
// then include its shadow memory and quarantine.
#ifdef __SANITIZE_ADDRESS__
inline constexpr bool kAddressSanitizer = true;
#else
inline constexpr bool kAddressSanitizer = false;
#endif

inline bool RunningInCi() {
  const char* ci = std::getenv("CI");
  return ci != nullptr && std::string(ci) == "true";
}

// External validators: a missing tool skips the sub-check locally, but in CI
// (CI=true) the tool is part of the contract and its absence fails.
inline bool ToolAvailable(const std::string& probe_command) {
  if (std::system((probe_command + " >/dev/null 2>&1").c_str()) == 0) return true;
  EXPECT_FALSE(RunningInCi()) << "missing in CI: " << probe_command;
  return false;
}

}  // namespace perfgate::testing

// Integration tests need root for BPF: without it they skip, except under CI=true.
#define PERFGATE_REQUIRE_ROOT()                                                 \
  do {                                                                          \
    if (geteuid() != 0) {                                                       \
      if (::perfgate::testing::RunningInCi()) FAIL() << "needs root (CI=true)"; \
      GTEST_SKIP() << "needs root to load BPF programs";                        \
    }                                                                           \
  } while (0)

// A precondition of the machine (a memory cgroup, a disk, iproute2, veth)
// that is missing: skipped on a developer machine, a failure under CI=true.
#define PERFGATE_REQUIRE_ENVIRONMENT(ok, why)                                  \
  do {                                                                         \
    if (!(ok)) {                                                               \
      if (::perfgate::testing::RunningInCi()) FAIL() << (why) << " (CI=true)"; \
      GTEST_SKIP() << (why);                                                   \
    }                                                                          \
  } while (0)
