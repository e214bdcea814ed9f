// The git repository a bisection walks: commits resolved and described,
// the first-parent range between two of them, worktrees to build them in.
// Every call runs git with the repository named as safe, so a checkout owned
// by the CI user still works when perfgate runs under sudo.
#pragma once

#include <string>
#include <vector>

namespace perfgate {

struct CommitInfo {
  std::string sha;  // full
  std::string subject;
  std::string author;  // "Name <email>"
  std::string date;    // author date, ISO 8601
};

class GitRepo {
 public:
  // InputError naming `dir` when it is not a git work tree or repository.
  static GitRepo Open(const std::string& dir);

  const std::string& dir() const { return dir_; }
  // The full sha of a commit; InputError naming `option` when `rev` names none.
  std::string Resolve(const std::string& rev, const std::string& option) const;
  bool IsAncestor(const std::string& ancestor, const std::string& descendant) const;
  // `git rev-list --first-parent --reverse good..bad`: oldest first, bad last.
  std::vector<std::string> FirstParentRange(const std::string& good, const std::string& bad) const;
  CommitInfo Describe(const std::string& sha) const;
  // A detached worktree of `sha` at `path` (which must not exist); InfraError when git fails.
  void AddWorktree(const std::string& sha, const std::string& path) const;

 private:
  explicit GitRepo(std::string dir) : dir_(std::move(dir)) {}
  std::vector<std::string> Git(std::vector<std::string> args) const;
  std::string dir_;
};

}  // namespace perfgate
