#include "probes/stack_map.h"

#include <bpf/bpf.h>

#include <algorithm>

#include "probes/map_keys.h"

namespace perfgate {

std::vector<uint64_t> ReadStack(int stacks_fd, int32_t id) {
  if (id < 0) return {};
  std::vector<uint64_t> ips(PG_STACK_DEPTH);
  uint32_t key = static_cast<uint32_t>(id);
  if (bpf_map_lookup_elem(stacks_fd, &key, ips.data()) != 0) return {};
  // A stack shorter than PG_STACK_DEPTH ends with zeros.
  ips.erase(std::find(ips.begin(), ips.end(), 0), ips.end());
  return ips;
}

void ClearStacks(int stacks_fd) { ClearMap<uint32_t>(stacks_fd); }

}  // namespace perfgate
