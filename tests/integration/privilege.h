// Integration tests need root for BPF. Without it they skip, except under
// CI=true, where a skip would hide lost coverage and so fails instead. Also
// what else of the tests' environment changes what they may expect.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

namespace perfgate::testing {

// Built with AddressSanitizer (ci/test.sh's second build): memory numbers
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

}  // namespace perfgate::testing

#define PERFGATE_REQUIRE_ROOT()                                                   \
  do {                                                                            \
    if (geteuid() != 0) {                                                         \
      if (::perfgate::testing::RunningInCi()) FAIL() << "needs root (CI=true)";  \
      GTEST_SKIP() << "needs root to load BPF programs";                          \
    }                                                                             \
  } while (0)
