// Suite files: the CLI's LoadSuite reads the file and calls ParseSuite.
#include <cstddef>
#include <cstdint>
#include <string>

#include "adapters/adapter.h"
#include "base/error.h"
#include "config/suite.h"

namespace {

// The CLI fills the vocabulary from the probe catalog; the fuzzer does not
// link the probes, so it names some of them, with a parameter of each type.
perfgate::SuiteVocabulary Vocabulary() {
  perfgate::SuiteVocabulary v;
  v.probes = {"syscalls", "kmem", "offcpu", "runqlat", "ufunc"};
  v.probe_parameters["syscalls"] = {{"top", "integer"}};
  v.probe_parameters["kmem"] = {{"frees", "boolean"}};
  v.probe_parameters["ufunc"] = {{"functions", "strings"}, {"binary", "string"}, {"pid", "integer"}};
  v.workload_kinds = perfgate::AdapterKinds();
  v.workload_keys = perfgate::AdapterKeys();
  return v;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const perfgate::SuiteVocabulary vocabulary = Vocabulary();
  static const perfgate::SuiteVariables variables{.suite_dir = "/suite", .perfgate_dir = "/perfgate"};
  try {
    perfgate::ParseSuite(std::string(reinterpret_cast<const char*>(data), size), "suite.json", vocabulary, variables);
  } catch (const perfgate::Error&) {
    // The documented outcome of bad input; anything else escapes and is a finding.
  }
  return 0;
}
