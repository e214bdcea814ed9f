// The error a call is expected to throw.
#pragma once

#include <gtest/gtest.h>

#include <exception>
#include <string>

#include "base/error.h"

namespace perfgate::testing {

// The message of the perfgate::Error that `call` throws, after checking its
// exit code; fails the test when it throws nothing or something else.
// `input`, when given, names what should have been rejected.
template <typename Call>
std::string ErrorOf(Call&& call, ExitCode code, const std::string& input = "") {
  try {
    call();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), code) << e.what();
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "not a perfgate::Error: " << e.what();
    return "";
  }
  ADD_FAILURE() << "no error" << (input.empty() ? "" : " for " + input);
  return "";
}

}  // namespace perfgate::testing
