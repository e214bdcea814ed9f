// Where a suite's repetitions run: this host, or a Linux device reached
// over ssh (--target ssh://USER@HOST[:PORT]). The device runs the same
// perfgate under its own probes; what comes back is the results model, and
// the reports, baselines and history are written on this host.
#pragma once

#include <string>

namespace perfgate {

struct Target {
  std::string user;  // empty: ssh's own (its configuration, else this user)
  std::string host;  // empty: this host
  int port = 0;      // 0: ssh's own
  bool remote() const { return !host.empty(); }
  // "ssh://USER@HOST:PORT" as given, for messages and reports; "" for this host.
  std::string url;
};

// Parses --target: "ssh://[USER@]HOST[:PORT]" (a host name, an IPv4
// address or an [IPv6] one); "" is this host. InputError naming --target
// for anything else. Keys and passwords never appear here: ssh's own
// configuration (an agent, ~/.ssh/config, --ssh-config) holds them.
Target ParseTarget(const std::string& text);

}  // namespace perfgate
