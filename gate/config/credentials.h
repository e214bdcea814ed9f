// Who a workload runs as (suite `run_as`, --run-as USER): perfgate keeps root
// for the probes, the workload gets an ordinary user's identity — its uid,
// primary and supplementary groups (run/process.h takes them in the child).
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace perfgate {

struct Credentials {
  std::string user;
  uid_t uid = 0;
  gid_t gid = 0;
  std::vector<gid_t> groups;  // supplementary, the primary included
  std::string home;
};

// A user name, or a numeric uid; InputError naming `where` when there is none.
Credentials ResolveUser(const std::string& name, const std::string& where);

// Whether `as` (nullptr: perfgate itself) may open `path` for reading, by
// the kernel's own check: a child takes the user's identity and asks
// access(2), so directory permissions, groups and ACLs all count.
bool UserMayRead(const std::string& path, const Credentials* as);

}  // namespace perfgate
