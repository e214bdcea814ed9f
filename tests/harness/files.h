// Files the tests read and write: whole files, scratch directories, and the
// recorded tool outputs under tests/fixtures.
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "harness/paths.h"

namespace perfgate::testing {

inline std::string ReadFile(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline void WriteFile(const std::filesystem::path& p, const std::string& text) {
  std::filesystem::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << text;
}

// A fresh directory "<prefix>-XXXXXX" under the system temp dir, left for the caller to remove.
inline std::filesystem::path MakeTempDir(const std::string& prefix) {
  std::string pattern = (std::filesystem::temp_directory_path() / (prefix + "-XXXXXX")).string();
  return mkdtemp(pattern.data());
}

// A fresh scratch directory under the system temp dir, removed by the destructor.
class ScratchDir {
 public:
  explicit ScratchDir(const std::string& prefix = "perfgate-test") : path_(MakeTempDir(prefix)) {}
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::string operator/(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

// One folder of tests/fixtures, read file by file:
//   const FixtureDir Fixture("fio");  ...  Fixture("randread.json")
class FixtureDir {
 public:
  explicit FixtureDir(const std::string& folder) : path_(std::filesystem::path(PERFGATE_FIXTURES) / folder) {}
  std::string operator()(const std::string& name) const { return ReadFile(path_ / name); }

 private:
  std::filesystem::path path_;
};

}  // namespace perfgate::testing
