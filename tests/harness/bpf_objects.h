// The BPF programs, links and maps loaded right now, and the wait for the
// ones a test released to be gone.
#pragma once

#include <bpf/bpf.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <set>
#include <string>
#include <thread>

namespace perfgate::testing {

// The kernel frees a closed program's links, maps and id from a workqueue
// after an RCU grace period, so they stay listed a little after the last fd
// closed. The waits below allow that much; a test that fails waits it out.
inline constexpr std::chrono::milliseconds kBpfReleaseTimeout{5000};

// Polls `outlived` until it returns an empty set or `timeout` passed; returns its last answer.
template <typename Outlived>
auto WaitUntilEmpty(Outlived outlived, std::chrono::milliseconds timeout) -> decltype(outlived()) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    auto left = outlived();
    if (left.empty() || std::chrono::steady_clock::now() >= deadline) return left;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

// Ids of the BPF programs loaded right now (what `bpftool prog` lists).
inline std::set<uint32_t> LoadedProgramIds() {
  std::set<uint32_t> ids;
  uint32_t id = 0;
  while (bpf_prog_get_next_id(id, &id) == 0) ids.insert(id);
  return ids;
}

// Ids of loaded programs whose (15-character) kernel name starts with
// `prefix`: only one probe's, whatever other tests load meanwhile.
inline std::set<uint32_t> ProgramIdsNamed(const std::string& prefix) {
  if (prefix.empty()) return LoadedProgramIds();
  std::set<uint32_t> ids;
  for (uint32_t id : LoadedProgramIds()) {
    int fd = bpf_prog_get_fd_by_id(id);
    if (fd < 0) continue;
    bpf_prog_info info{};
    uint32_t length = sizeof(info);
    if (bpf_obj_get_info_by_fd(fd, &info, &length) == 0 && std::string(info.name).starts_with(prefix)) ids.insert(id);
    close(fd);
  }
  return ids;
}

// Ids of loaded programs named `prefix`... that are not in `before`.
// Programs of `before` may be gone meanwhile: the kernel frees an earlier
// test's programs a little after that test closed them.
inline std::set<uint32_t> NewProgramIdsNow(const std::set<uint32_t>& before, const std::string& prefix = "") {
  std::set<uint32_t> added;
  for (uint32_t id : ProgramIdsNamed(prefix))
    if (!before.count(id)) added.insert(id);
  return added;
}

// The same, once empty: waits up to `timeout` for the kernel to release
// programs whose last reference was just dropped; returns those still loaded.
inline std::set<uint32_t> NewProgramIds(const std::set<uint32_t>& before, const std::string& prefix = "",
                                        std::chrono::milliseconds timeout = kBpfReleaseTimeout) {
  return WaitUntilEmpty([&] { return NewProgramIdsNow(before, prefix); }, timeout);
}

// Those of `ids` still loaded once the kernel released them (or `timeout` passed).
inline std::set<uint32_t> ProgramIdsStillLoaded(const std::set<uint32_t>& ids,
                                                std::chrono::milliseconds timeout = kBpfReleaseTimeout) {
  return WaitUntilEmpty(
      [&] {
        std::set<uint32_t> left;
        for (uint32_t id : LoadedProgramIds())
          if (ids.count(id)) left.insert(id);
        return left;
      },
      timeout);
}

// Ids of every BPF program, link and map loaded right now, each prefixed
// with its kind ("prog 12", "link 3", "map 40").
inline std::set<std::string> LoadedBpfObjects() {
  std::set<std::string> ids;
  unsigned id = 0;
  while (bpf_prog_get_next_id(id, &id) == 0) ids.insert("prog " + std::to_string(id));
  id = 0;
  while (bpf_link_get_next_id(id, &id) == 0) ids.insert("link " + std::to_string(id));
  id = 0;
  while (bpf_map_get_next_id(id, &id) == 0) ids.insert("map " + std::to_string(id));
  return ids;
}

// The objects loaded outside `before`, once none is (within `timeout`).
inline std::set<std::string> NewBpfObjects(const std::set<std::string>& before,
                                           std::chrono::milliseconds timeout = kBpfReleaseTimeout) {
  return WaitUntilEmpty(
      [&] {
        std::set<std::string> added;
        for (const std::string& id : LoadedBpfObjects())
          if (!before.count(id)) added.insert(id);
        return added;
      },
      timeout);
}

}  // namespace perfgate::testing
