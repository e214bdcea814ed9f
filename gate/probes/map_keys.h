// Every key of a BPF hash or stack map, read before anything is deleted
// (deleting while iterating would restart the walk).
#pragma once

#include <bpf/bpf.h>

#include <utility>
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

// Every (key, value) of a BPF hash map; an entry deleted between reading the
// keys and reading its value is left out.
template <class Key, class Value>
std::vector<std::pair<Key, Value>> MapEntries(int map_fd) {
  std::vector<std::pair<Key, Value>> entries;
  for (const Key& key : MapKeys<Key>(map_fd)) {
    Value value{};
    if (bpf_map_lookup_elem(map_fd, &key, &value) == 0) entries.emplace_back(key, value);
  }
  return entries;
}

// Deletes every key of a hash or stack map; a key deleted meanwhile (ENOENT)
// is fine.
template <class Key>
void ClearMap(int map_fd) {
  for (const Key& key : MapKeys<Key>(map_fd)) bpf_map_delete_elem(map_fd, &key);
}

}  // namespace perfgate
