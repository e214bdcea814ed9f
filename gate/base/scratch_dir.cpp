#include "base/scratch_dir.h"

#include <stdlib.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "base/error.h"

namespace perfgate {

ScratchDir::ScratchDir(const std::string& prefix, const std::string& what) {
  std::string pattern = (std::filesystem::temp_directory_path() / (prefix + ".XXXXXX")).string();
  if (mkdtemp(pattern.data()) == nullptr)
    throw InfraError(what + ": cannot make a scratch directory: " + std::strerror(errno));
  path_ = pattern;
}

ScratchDir::~ScratchDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

}  // namespace perfgate
