// A Prometheus Pushgateway and a Prometheus server (Debian's packages)
// started on free loopback ports for a test, with their storage in its
// scratch directory, and stopped by their pids when it ends: what the export
// and dashboard tests push to and query.
#pragma once

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "harness/environment.h"
#include "harness/files.h"

namespace perfgate::testing {

inline int FreeTcpPort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  socklen_t len = sizeof addr;
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  close(fd);
  return ntohs(addr.sin_port);
}

// GET http://127.0.0.1:port/path; the whole response, "" when nothing answers.
inline std::string HttpGet(int port, const std::string& path) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::string response;
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) {
    std::string request = "GET " + path + " HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n";
    if (send(fd, request.data(), request.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(request.size())) {
      char buffer[4096];
      for (ssize_t n; (n = recv(fd, buffer, sizeof buffer, 0)) > 0;) response.append(buffer, static_cast<size_t>(n));
    }
  }
  close(fd);
  return response;
}

inline std::string FindBinary(const std::string& name) {
  for (const char* dir : {"/usr/bin", "/usr/local/bin", "/usr/sbin"}) {
    std::string path = std::string(dir) + "/" + name;
    if (access(path.c_str(), X_OK) == 0) return path;
  }
  return "";
}

// Starts `binary` with `args`, its output into `log`; the child's pid.
inline pid_t StartDaemon(const std::string& binary, const std::vector<std::string>& args, const std::string& log) {
  std::vector<char*> argv{const_cast<char*>(binary.c_str())};
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid = fork();
  if (pid == 0) {
    FILE* out = freopen(log.c_str(), "w", stdout);
    (void)out;
    dup2(fileno(stdout), STDERR_FILENO);
    execv(binary.c_str(), argv.data());
    _exit(127);
  }
  return pid;
}

inline void StopDaemon(pid_t& pid) {
  if (pid <= 0) return;
  kill(pid, SIGTERM);
  waitpid(pid, nullptr, 0);
  pid = -1;
}

// Whether GET /-/ready on `port` answers 200 within `seconds`.
inline bool WaitReady(int port, int seconds) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  while (HttpGet(port, "/-/ready").find(" 200 ") == std::string::npos) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return true;
}

// A Pushgateway on a free loopback port with its storage in a scratch
// directory, stopped (by its pid) when the test ends, failed or not.
class PushgatewayTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string binary = FindBinary("prometheus-pushgateway");
    if (binary.empty()) {
      if (RunningInCi()) FAIL() << "prometheus-pushgateway is not installed (CI=true; ci/install-deps.sh installs it)";
      GTEST_SKIP() << "prometheus-pushgateway is not installed";
    }
    port_ = FreeTcpPort();
    std::string log = dir_ / "pushgateway.log";
    pid_ = StartDaemon(binary,
                       {"--web.listen-address=127.0.0.1:" + std::to_string(port_),
                        "--persistence.file=" + (dir_ / "pushgateway.data")},
                       log);
    ASSERT_GT(pid_, 0);
    ASSERT_TRUE(WaitReady(port_, 20)) << "pushgateway did not start:\n" << ReadFile(log);
  }
  void TearDown() override { StopDaemon(pid_); }
  std::string PushUrl() const { return "http://127.0.0.1:" + std::to_string(port_); }

  ScratchDir dir_;
  pid_t pid_ = -1;
  int port_ = 0;
};

// "a b/c" -> "a%20b%2Fc": what a query string needs.
inline std::string PercentEncode(const std::string& text) {
  std::string out;
  for (unsigned char c : text) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      char hex[4];
      std::snprintf(hex, sizeof hex, "%%%02X", c);
      out += hex;
    }
  }
  return out;
}

// Prometheus scraping the test's Pushgateway every second (honor_labels, so
// the pushed job, suite and scenario labels stay), with its database in the
// scratch directory; both stopped when the test ends, failed or not.
class PrometheusTest : public PushgatewayTest {
 protected:
  void SetUp() override {
    PushgatewayTest::SetUp();
    if (HasFatalFailure() || IsSkipped()) return;
    std::string binary = FindBinary("prometheus");
    if (binary.empty()) {
      if (RunningInCi()) FAIL() << "prometheus is not installed (CI=true; ci/install-deps.sh installs it)";
      GTEST_SKIP() << "prometheus is not installed";
    }
    WriteFile(dir_ / "prometheus.yml",
              "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
              "scrape_configs:\n  - job_name: pushgateway\n    honor_labels: true\n"
              "    static_configs:\n      - targets: ['127.0.0.1:" +
                  std::to_string(port_) + "']\n");
    prometheus_port_ = FreeTcpPort();
    std::string log = dir_ / "prometheus.log";
    prometheus_pid_ =
        StartDaemon(binary,
                    {"--config.file=" + (dir_ / "prometheus.yml"), "--storage.tsdb.path=" + (dir_ / "tsdb"),
                     "--web.listen-address=127.0.0.1:" + std::to_string(prometheus_port_)},
                    log);
    ASSERT_GT(prometheus_pid_, 0);
    ASSERT_TRUE(WaitReady(prometheus_port_, 30)) << "prometheus did not start:\n" << ReadFile(log);
  }
  void TearDown() override {
    StopDaemon(prometheus_pid_);
    PushgatewayTest::TearDown();
  }

  // The result vector of an instant query, polled until it is not empty
  // (the next scrape) or `seconds` pass; empty then.
  nlohmann::json Query(const std::string& promql, int seconds) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
    std::string last;
    for (;;) {
      last = HttpGet(prometheus_port_, "/api/v1/query?query=" + PercentEncode(promql));
      size_t body = last.find("\r\n\r\n");
      if (body != std::string::npos) {
        nlohmann::json reply = nlohmann::json::parse(last.substr(body + 4), nullptr, false);
        if (!reply.is_discarded() && reply.value("status", "") == "success" && !reply["data"]["result"].empty()) {
          return reply["data"]["result"];
        }
      }
      if (std::chrono::steady_clock::now() > deadline) {
        ADD_FAILURE() << promql << ": nothing in " << seconds << " s; last answer:\n" << last;
        return nlohmann::json::array();
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(250));
    }
  }

  pid_t prometheus_pid_ = -1;
  int prometheus_port_ = 0;
};

}  // namespace perfgate::testing
