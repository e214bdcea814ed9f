// Every key of a BPF hash map, read before anything is deleted (deleting
// while iterating would restart the walk).
#pragma once

#include <bpf/bpf.h>

#include <vector>

namespace perfgate {

template <class Key>
std::vector<Key> MapKeys(int map_fd) {
  std::vector<Key> keys;
  Key key{};
  const void* previous = nullptr;
  while (bpf_map_get_next_key(map_fd, previous, &key) == 0) {
    keys.push_back(key);
    previous = &keys.back();
  }
  return keys;
}

}  // namespace perfgate
