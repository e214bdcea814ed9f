#include "probes/proc_threads.h"

#include <dirent.h>

#include <cctype>
#include <fstream>
#include <sstream>
#include <string>

namespace perfgate {
namespace {

// Numeric entries of a /proc directory.
std::vector<uint32_t> NumericEntries(const std::string& path) {
  std::vector<uint32_t> ids;
  if (DIR* dir = opendir(path.c_str())) {
    while (dirent* entry = readdir(dir)) {
      if (std::isdigit(static_cast<unsigned char>(entry->d_name[0])))
        ids.push_back(static_cast<uint32_t>(std::stoul(entry->d_name)));
    }
    closedir(dir);
  }
  return ids;
}

}  // namespace

std::vector<uint32_t> ThreadsOf(pid_t pid) {
  std::vector<uint32_t> tids = NumericEntries("/proc/" + std::to_string(pid) + "/task");
  if (tids.empty()) tids.push_back(static_cast<uint32_t>(pid));
  return tids;
}

std::vector<uint32_t> AllThreads() {
  std::vector<uint32_t> tids;
  for (uint32_t pid : NumericEntries("/proc")) {
    // A process that exited meanwhile has no task directory: skipped.
    for (uint32_t tid : NumericEntries("/proc/" + std::to_string(pid) + "/task")) tids.push_back(tid);
  }
  return tids;
}

std::optional<FaultCounters> ThreadFaultCounters(uint32_t tid) {
  std::string id = std::to_string(tid);
  std::ifstream in("/proc/" + id + "/task/" + id + "/stat");
  std::string line;
  if (!std::getline(in, line)) return std::nullopt;
  // pid (comm) state ppid pgrp session tty_nr tpgid flags minflt cminflt
  // majflt ...: comm may hold spaces and parentheses, so fields count from
  // the last ')'.
  size_t close = line.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::istringstream fields(line.substr(close + 1));
  std::string state;
  long long ppid, pgrp, session, tty, tpgid;  // tpgid is -1 without a terminal
  unsigned long long flags;
  FaultCounters counters;
  uint64_t child_minor;
  if (!(fields >> state >> ppid >> pgrp >> session >> tty >> tpgid >> flags >> counters.minor >> child_minor >>
        counters.major))
    return std::nullopt;
  return counters;
}

}  // namespace perfgate
