#include "bisect/git_repo.h"

#include <filesystem>

#include "base/error.h"
#include "bisect/subprocess.h"

namespace perfgate {

namespace fs = std::filesystem;

namespace {

std::string Trimmed(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  return text;
}

std::string TrimmedFirstLine(const std::string& text) { return Trimmed(FirstLine(text)); }

}  // namespace

std::vector<std::string> GitRepo::Git(std::vector<std::string> args) const {
  std::vector<std::string> argv = {"git", "-c", "safe.directory=*", "-C", dir_};
  argv.insert(argv.end(), args.begin(), args.end());
  return argv;
}

GitRepo GitRepo::Open(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw InputError("--repo " + dir + ": no such directory");
  const std::string absolute = fs::absolute(dir).lexically_normal().string();
  GitRepo repo(absolute);
  CapturedCommand r = RunCaptured(repo.Git({"rev-parse", "--git-dir"}));
  if (r.status != 0) throw InputError("--repo " + dir + ": not a git repository");
  return repo;
}

std::string GitRepo::Resolve(const std::string& rev, const std::string& option) const {
  if (rev.empty() || rev[0] == '-') throw InputError(option + " \"" + rev + "\": not a commit of " + dir_);
  CapturedCommand r = RunCaptured(Git({"rev-parse", "--verify", "-q", rev + "^{commit}"}));
  if (r.status != 0) throw InputError(option + " " + rev + ": not a commit of " + dir_);
  return Trimmed(r.out);
}

bool GitRepo::IsAncestor(const std::string& ancestor, const std::string& descendant) const {
  CapturedCommand r = RunCaptured(Git({"merge-base", "--is-ancestor", ancestor, descendant}));
  if (r.status > 1) throw InfraError("git merge-base in " + dir_ + ": " + TrimmedFirstLine(r.err));
  return r.status == 0;
}

std::vector<std::string> GitRepo::FirstParentRange(const std::string& good, const std::string& bad) const {
  CapturedCommand r = RunCaptured(Git({"rev-list", "--first-parent", "--reverse", good + ".." + bad}));
  if (r.status != 0) throw InfraError("git rev-list in " + dir_ + ": " + TrimmedFirstLine(r.err));
  std::vector<std::string> out;
  size_t start = 0;
  while (start < r.out.size()) {
    size_t end = r.out.find('\n', start);
    if (end == std::string::npos) end = r.out.size();
    if (end > start) out.push_back(r.out.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

CommitInfo GitRepo::Describe(const std::string& sha) const {
  CapturedCommand r = RunCaptured(Git({"show", "-s", "--format=%H%x00%s%x00%an <%ae>%x00%aI", sha}));
  if (r.status != 0) throw InfraError("git show " + sha + " in " + dir_ + ": " + TrimmedFirstLine(r.err));
  std::vector<std::string> fields;
  size_t start = 0;
  const std::string text = Trimmed(r.out);
  for (size_t i = 0; i <= text.size(); ++i) {
    if (i == text.size() || text[i] == '\0') {
      fields.push_back(text.substr(start, i - start));
      start = i + 1;
    }
  }
  fields.resize(4);
  return {fields[0], fields[1], fields[2], fields[3]};
}

void GitRepo::AddWorktree(const std::string& sha, const std::string& path) const {
  CapturedCommand r = RunCaptured(Git({"worktree", "add", "--force", "--detach", path, sha}));
  if (r.status != 0) throw InfraError("could not check out " + sha + " into " + path + ": " + TrimmedFirstLine(r.err));
}

}  // namespace perfgate
