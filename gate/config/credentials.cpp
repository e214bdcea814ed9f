#include "config/credentials.h"

#include <grp.h>
#include <pwd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>

#include "base/error.h"

namespace perfgate {

Credentials ResolveUser(const std::string& name, const std::string& where) {
  passwd entry{}, *found = nullptr;
  std::vector<char> buffer(16384);
  uid_t uid = 0;
  const auto [end, ec] = std::from_chars(name.data(), name.data() + name.size(), uid);
  const bool numeric = !name.empty() && ec == std::errc() && end == name.data() + name.size();
  const int err = numeric ? getpwuid_r(uid, &entry, buffer.data(), buffer.size(), &found)
                          : getpwnam_r(name.c_str(), &entry, buffer.data(), buffer.size(), &found);
  if (err != 0 || found == nullptr) throw InputError(where + ": no user \"" + name + "\" on this machine");
  Credentials c;
  c.user = entry.pw_name;
  c.uid = entry.pw_uid;
  c.gid = entry.pw_gid;
  c.home = entry.pw_dir != nullptr ? entry.pw_dir : "/";
  int count = 64;
  c.groups.resize(static_cast<size_t>(count));
  if (getgrouplist(c.user.c_str(), c.gid, c.groups.data(), &count) < 0) {
    c.groups.resize(static_cast<size_t>(count));
    getgrouplist(c.user.c_str(), c.gid, c.groups.data(), &count);
  }
  c.groups.resize(static_cast<size_t>(std::max(count, 0)));
  return c;
}

bool UserMayRead(const std::string& path, const Credentials* as) {
  if (as == nullptr || as->uid == geteuid()) return access(path.c_str(), R_OK) == 0;
  const pid_t child = fork();
  if (child < 0) return access(path.c_str(), R_OK) == 0;
  if (child == 0) {
    // Async-signal-safe calls only: perfgate may have threads.
    if (setgroups(as->groups.size(), as->groups.data()) != 0 || setresgid(as->gid, as->gid, as->gid) != 0 ||
        setresuid(as->uid, as->uid, as->uid) != 0) {
      _exit(2);
    }
    _exit(access(path.c_str(), R_OK) == 0 ? 0 : 1);
  }
  int status = 0;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  // Without the privilege to take the identity, run_as fails at launch anyway; judge as ourselves.
  if (WIFEXITED(status) && WEXITSTATUS(status) == 2) return access(path.c_str(), R_OK) == 0;
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

}  // namespace perfgate
