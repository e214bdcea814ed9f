// Integration tests need root for BPF. Without it they skip, except under
// CI=true, where a skip would hide lost coverage and so fails instead.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

namespace perfgate::testing {

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
