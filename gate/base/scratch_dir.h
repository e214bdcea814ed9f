// A directory of this process's own under the temporary directory, made
// at construction and removed with all it holds at destruction.
#pragma once

#include <string>

namespace perfgate {

class ScratchDir {
 public:
  // `prefix`: the directory's name before a random suffix ("perfgate-vm");
  // `what`: what it is for, in the InfraError when it cannot be made.
  ScratchDir(const std::string& prefix, const std::string& what);
  ~ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace perfgate
