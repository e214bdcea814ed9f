// The tcp probe against a TCP client/server pair the test builds: two network
// namespaces joined by a veth pair, the server in one, the client in the
// other, both forked by the tracked workload. Loss comes from a tc BPF
// classifier on the client's egress (the kernels of the project machines
// have no netem), delay from a tbf rate limit on the same link. Each test
// runs with every attach type this kernel supports.
#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sched.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "drop_one_in_n.skel.h"
#include "harness/cli.h"
#include "harness/environment.h"
#include "harness/probe.h"
#include "probes/probe.h"
#include "probes/tracker.h"

namespace perfgate {
namespace {

namespace fs = std::filesystem;

constexpr const char* kServerAddress = "192.168.147.1";
constexpr const char* kClientAddress = "192.168.147.2";
constexpr uint16_t kPort = 5201;
constexpr uint16_t kClosedPort = 5202;
constexpr size_t kKiB = 1024;

std::string IpCommand() {
  for (const char* path : {"/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip", "/bin/ip"})
    if (access(path, X_OK) == 0) return path;
  return "";
}

std::string TcCommand() {
  for (const char* path : {"/usr/sbin/tc", "/sbin/tc", "/usr/bin/tc", "/bin/tc"})
    if (access(path, X_OK) == 0) return path;
  return "";
}

// Runs a shell command; its output goes to `output`.
bool Shell(const std::string& command, std::string* output = nullptr) {
  auto log = fs::temp_directory_path() / ("perfgate-tcp-" + std::to_string(getpid()) + ".log");
  int status = std::system((command + " >" + log.string() + " 2>&1").c_str());
  if (output) *output = perfgate::testing::ReadFile(log);
  std::error_code ec;
  fs::remove(log, ec);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

// A shell command running `lines` as one batch of `ip` (ip -batch), in
// network namespace `ns` unless it is empty.
std::string Batch(const std::string& ip, const std::string& ns, const std::vector<std::string>& lines) {
  std::string command = "printf '%s\\n'";
  for (const std::string& line : lines) command += " '" + line + "'";
  return command + " | " + ip + (ns.empty() ? "" : " -n " + ns) + " -batch -";
}

// Two network namespaces joined by a veth pair, removed with everything in
// them by the destructor (also when a test fails half-way). Names carry the
// test process's id and a counter, so parallel runs do not collide.
class VethPair {
 public:
  static std::unique_ptr<VethPair> Create(std::string& why) {
    static std::atomic<int> counter{0};
    const std::string ip = IpCommand();
    if (ip.empty() || TcCommand().empty()) {
      why = "ip and tc from iproute2 are not installed";
      return nullptr;
    }
    std::string tag = std::to_string(getpid()) + "-" + std::to_string(counter++);
    auto pair = std::unique_ptr<VethPair>(new VethPair(ip, "pgtcp-" + tag + "-server", "pgtcp-" + tag + "-client"));
    const std::string& s = pair->server_ns_;
    const std::string& c = pair->client_ns_;
    // Three ip processes, each running a batch: in the root namespace, then
    // in each end's (a batch line cannot name a namespace). Under a VM's
    // emulated CPU every process started costs tens of milliseconds.
    const std::string setup =
        Batch(ip, "", {"netns add " + s, "netns add " + c,
                       "link add " + std::string(kClientDevice) + " netns " + c + " type veth peer name " +
                           kServerDevice + " netns " + s}) +
        " && " +
        Batch(ip, s,
              {"addr add " + std::string(kServerAddress) + "/24 dev " + kServerDevice,
               "link set " + std::string(kServerDevice) + " up", "link set lo up"}) +
        " && " +
        Batch(ip, c,
              {"addr add " + std::string(kClientAddress) + "/24 dev " + kClientDevice,
               "link set " + std::string(kClientDevice) + " up", "link set lo up"});
    std::string output;
    if (!Shell("(" + setup + ")", &output)) {
      why = setup + ": " + output;
      return nullptr;
    }
    return pair;
  }

  ~VethPair() {
    // Deleting a namespace destroys its end of the veth pair, the other
    // end, and the qdiscs and filters on them.
    Shell(Batch(ip_, "", {"netns del " + server_ns_, "netns del " + client_ns_}));
  }

  std::string ServerNamespace() const { return "/var/run/netns/" + server_ns_; }
  std::string ClientNamespace() const { return "/var/run/netns/" + client_ns_; }

  // `tc ARGS` in the client's namespace, e.g. "qdisc add dev D root tbf ...";
  // the device is the client's end of the link.
  bool ClientTc(const std::string& args, std::string& why) const {
    std::string command = TcCommand() + " -n " + client_ns_ + " " + args;
    std::string output;
    if (Shell(command, &output)) return true;
    why = command + ": " + output;
    return false;
  }

  // Drops one in `n` packets of at least 200 bytes leaving the client (its
  // data, not its handshake): a tc BPF classifier on clsact egress.
  bool DropOneInNOnClientEgress(uint64_t n, std::string& why) {
    // setns() changes the calling thread only: a thread of its own keeps
    // this one's namespace intact.
    std::thread attach([&] {
      int ns = open(ClientNamespace().c_str(), O_RDONLY | O_CLOEXEC);
      if (ns < 0 || setns(ns, CLONE_NEWNET) != 0) {
        why = "enter " + ClientNamespace() + ": " + strerror(errno);
        if (ns >= 0) close(ns);
        return;
      }
      close(ns);
      unsigned ifindex = if_nametoindex(kClientDevice);
      if (ifindex == 0) {
        why = std::string("no device ") + kClientDevice + " in the client namespace";
        return;
      }
      drop_.reset(drop_one_in_n_bpf__open());
      if (!drop_) {
        why = "open drop_one_in_n";
        return;
      }
      drop_->rodata->n = n;
      if (int err = drop_one_in_n_bpf__load(drop_.get()); err != 0) {
        why = "load drop_one_in_n: " + std::string(strerror(-err));
        return;
      }
      LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = static_cast<int>(ifindex), .attach_point = BPF_TC_EGRESS);
      LIBBPF_OPTS(bpf_tc_opts, opts, .prog_fd = bpf_program__fd(drop_->progs.drop_one_in_n));
      if (int err = bpf_tc_hook_create(&hook); err != 0 && err != -EEXIST) {
        why = "create clsact on " + std::string(kClientDevice) + ": " + strerror(-err);
        return;
      }
      if (int err = bpf_tc_attach(&hook, &opts); err != 0)
        why = "attach the classifier: " + std::string(strerror(-err));
    });
    attach.join();
    return why.empty();
  }

  // Packets the classifier dropped so far.
  uint64_t Dropped() const { return drop_ ? drop_->bss->dropped : 0; }

  VethPair(const VethPair&) = delete;
  VethPair& operator=(const VethPair&) = delete;

 private:
  static constexpr const char* kServerDevice = "pgtcp-s";
  static constexpr const char* kClientDevice = "pgtcp-c";

  VethPair(std::string ip, std::string server_ns, std::string client_ns)
      : ip_(std::move(ip)), server_ns_(std::move(server_ns)), client_ns_(std::move(client_ns)) {}

  // The classifier stays attached through the tc filter; the skeleton keeps
  // its counters readable.
  struct DropDeleter {
    void operator()(drop_one_in_n_bpf* skel) const { drop_one_in_n_bpf__destroy(skel); }
  };

  std::string ip_;
  std::string server_ns_;
  std::string client_ns_;
  std::unique_ptr<drop_one_in_n_bpf, DropDeleter> drop_;
};

// --- the workload ----------------------------------------------------------
// Runs in a forked child, which exits with a distinct status at the first
// failure (and says why on stderr).

[[noreturn]] void Fail(int status, const char* what) {
  std::fprintf(stderr, "tcp workload: %s: %s\n", what, strerror(errno));
  _exit(status);
}

void EnterNamespace(const std::string& path) {
  int ns = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (ns < 0 || setns(ns, CLONE_NEWNET) != 0) Fail(30, "enter network namespace");
  close(ns);
}

sockaddr_in Address(const char* ip, uint16_t port) {
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  inet_pton(AF_INET, ip, &address.sin_addr);
  return address;
}

// A stuck peer must not hang the test: every blocking call gives up after 30 s.
void SetTimeouts(int fd) {
  timeval timeout{30, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof(timeout));
}

// Accepts `connections` connections one after the other, reads each to EOF
// and answers with one byte once it has read `bytes`.
[[noreturn]] void Serve(int listener, int connections, size_t bytes) {
  std::vector<char> buffer(64 * kKiB);
  for (int i = 0; i < connections; ++i) {
    int fd = accept(listener, nullptr, nullptr);
    if (fd < 0) Fail(40, "accept");
    SetTimeouts(fd);
    size_t received = 0;
    for (;;) {
      ssize_t n = read(fd, buffer.data(), buffer.size());
      if (n < 0) Fail(41, "server read");
      if (n == 0) break;
      received += static_cast<size_t>(n);
    }
    if (received != bytes) Fail(42, "server received a short transfer");
    if (write(fd, "k", 1) != 1) Fail(43, "server write");
    close(fd);
  }
  _exit(0);
}

// The client: `connections` connections in turn, each sending `bytes`,
// half-closing, and waiting for the server's byte before closing.
void Send(const sockaddr_in& server, int connections, size_t bytes) {
  std::vector<char> buffer(64 * kKiB, 'p');
  for (int i = 0; i < connections; ++i) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) Fail(50, "socket");
    SetTimeouts(fd);
    if (connect(fd, reinterpret_cast<const sockaddr*>(&server), sizeof(server)) != 0) Fail(51, "connect");
    for (size_t sent = 0; sent < bytes;) {
      ssize_t n = write(fd, buffer.data(), std::min(buffer.size(), bytes - sent));
      if (n <= 0) Fail(52, "client write");
      sent += static_cast<size_t>(n);
    }
    if (shutdown(fd, SHUT_WR) != 0) Fail(53, "shutdown");
    char answer = 0;
    if (read(fd, &answer, 1) != 1) Fail(54, "client read");
    close(fd);
  }
}

// The workload: listens in the server namespace, forks the server there,
// then moves to the client namespace and sends.
void ClientServer(const VethPair& link, int connections, size_t bytes) {
  alarm(120);
  EnterNamespace(link.ServerNamespace());
  int listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address = Address(kServerAddress, kPort);
  int one = 1;
  setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  if (listener < 0 || bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0 ||
      listen(listener, 16) != 0)
    Fail(31, "listen");
  pid_t server = fork();
  if (server < 0) Fail(32, "fork");
  if (server == 0) Serve(listener, connections, bytes);
  close(listener);
  EnterNamespace(link.ClientNamespace());
  Send(address, connections, bytes);
  int status = 0;
  if (waitpid(server, &status, 0) != server || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::fprintf(stderr, "tcp workload: server exited with status %d\n", status);
    _exit(33);
  }
}

// A connect to a port nobody listens on: the server's kernel answers the
// SYN with a RST, which the client's socket receives.
void ConnectToClosedPort(const VethPair& link) {
  alarm(60);
  EnterNamespace(link.ClientNamespace());
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address = Address(kServerAddress, kClosedPort);
  if (connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0 || errno != ECONNREFUSED)
    Fail(60, "connect to a closed port was not refused");
  close(fd);
}

// Listens in the server namespace and sends `bytes` on one accepted
// connection, then closes it.
void ServeDownload(const VethPair& link, size_t bytes) {
  alarm(60);
  EnterNamespace(link.ServerNamespace());
  int listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address = Address(kServerAddress, kPort);
  int one = 1;
  setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  if (listener < 0 || bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0 ||
      listen(listener, 16) != 0)
    Fail(70, "listen");
  int fd = accept(listener, nullptr, nullptr);
  if (fd < 0) Fail(71, "accept");
  SetTimeouts(fd);
  std::vector<char> buffer(64 * kKiB, 'd');
  for (size_t sent = 0; sent < bytes;) {
    ssize_t n = write(fd, buffer.data(), std::min(buffer.size(), bytes - sent));
    if (n <= 0) Fail(72, "server write");
    sent += static_cast<size_t>(n);
  }
  close(fd);
  close(listener);
}

// Connects to the server (retrying while it is not listening yet) and reads
// to EOF.
[[noreturn]] void Download(const VethPair& link) {
  alarm(60);
  EnterNamespace(link.ClientNamespace());
  sockaddr_in address = Address(kServerAddress, kPort);
  int fd = -1;
  for (int attempt = 0; fd < 0 && attempt < 500; ++attempt) {
    fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) {
      close(fd);
      fd = -1;
      usleep(10 * 1000);
    }
  }
  if (fd < 0) Fail(80, "connect");
  SetTimeouts(fd);
  std::vector<char> buffer(64 * kKiB);
  for (;;) {
    ssize_t n = read(fd, buffer.data(), buffer.size());
    if (n < 0) Fail(81, "client read");
    if (n == 0) break;
  }
  _exit(0);
}

// Both ends in the workload: the server sends, the client closes without
// reading, which aborts the connection with a RST (RFC 2525, 2.17).
void CloseWithUnreadData(const VethPair& link) {
  alarm(60);
  EnterNamespace(link.ServerNamespace());
  int listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address = Address(kServerAddress, kPort);
  int one = 1;
  setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  if (listener < 0 || bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0 ||
      listen(listener, 16) != 0)
    Fail(90, "listen");
  EnterNamespace(link.ClientNamespace());
  int client = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (connect(client, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) Fail(91, "connect");
  int server = accept(listener, nullptr, nullptr);
  if (server < 0) Fail(92, "accept");
  SetTimeouts(client);
  SetTimeouts(server);
  if (write(server, "unread", 6) != 6) Fail(93, "server write");
  char byte = 0;
  // The data has arrived once the client can peek at it.
  if (recv(client, &byte, 1, MSG_PEEK) != 1) Fail(94, "client peek");
  close(client);
  // The server's socket learns of the abort: its read fails.
  if (read(server, &byte, 1) >= 0 || errno != ECONNRESET) Fail(95, "server did not see the reset");
  close(server);
  close(listener);
}

// --- the tests -------------------------------------------------------------

constexpr int kConnections = 4;
constexpr size_t kBytes = 256 * kKiB;

class TcpProbe : public ProbeRun {
 protected:
  void SetUp() override { WithoutFunctionVariants({"inet_sock_set_state", "tcp_retransmit_skb", "tcp_send_reset"}); }
  // The link, or why not (the test is skipped, or fails under CI=true).
  bool Prepare(std::string& why) {
    link_ = VethPair::Create(why);
    return link_ != nullptr;
  }
  std::function<void()> Transfer(int connections, size_t bytes) const {
    const VethPair* link = link_.get();
    return [link, connections, bytes] { ClientServer(*link, connections, bytes); };
  }

  std::unique_ptr<VethPair> link_;
};

#define PERFGATE_TCP_TEST_PREAMBLE() \
  PERFGATE_REQUIRE_ROOT();           \
  SkipUnlessKernelSupports();        \
  if (IsSkipped()) return;           \
  std::string why;                   \
  PERFGATE_REQUIRE_ENVIRONMENT(Prepare(why), why)

TEST_P(TcpProbe, RecordsRttAndConnectLatencyOfAClientServerPairAcrossNamespaces) {
  PERFGATE_TCP_TEST_PREAMBLE();
  MetricSet metrics = Measure("tcp", ProbeScope::kWorkload, Transfer(kConnections, kBytes));
  const Metric& connect = metrics.at("tcp.connect_latency");
  // One SYN_SENT -> ESTABLISHED per connect(); the server's sockets are
  // passive and have none.
  EXPECT_EQ(connect.hist.count(), static_cast<uint64_t>(kConnections));
  EXPECT_EQ(connect.unit, "ns");
  EXPECT_GT(connect.hist.Quantile(0.5), 0);
  const Metric& rtt = metrics.at("tcp.rtt");
  // The client receives ACKs for its data, each connection some. How many
  // depends on how the receiver's reads and the stack coalesce them: 28 to
  // 33 for the four on a quiet host, 15 once beside a CPU burner.
  EXPECT_GE(rtt.hist.count(), static_cast<uint64_t>(kConnections));
  EXPECT_EQ(rtt.unit, "ns");
  EXPECT_GT(rtt.hist.Quantile(0.5), 0);
  // Clean closes only.
  EXPECT_EQ(metrics.at("tcp.resets").value, 0);
  EXPECT_EQ(metrics.at("tcp.retransmits").unit, "count");
  std::printf("[ tcp      ] connect p50 %.0f ns, rtt p50 %.0f ns over %llu samples, retransmits %.0f\n",
              connect.hist.Quantile(0.5), rtt.hist.Quantile(0.5), static_cast<unsigned long long>(rtt.hist.count()),
              metrics.at("tcp.retransmits").value);
}

TEST_P(TcpProbe, CountsRetransmitsWhenOneEgressPacketInNIsDropped) {
  PERFGATE_TCP_TEST_PREAMBLE();
  ASSERT_TRUE(link_->DropOneInNOnClientEgress(10, why)) << why;
  MetricSet metrics = Measure("tcp", ProbeScope::kWorkload, Transfer(2, 1024 * kKiB));
  uint64_t dropped = link_->Dropped();
  EXPECT_GT(dropped, 0u);
  // Every dropped data segment is sent again (fast retransmit, a loss
  // probe or the retransmission timer), and each resend is traced.
  EXPECT_GT(metrics.at("tcp.retransmits").value, 0) << dropped << " packets dropped";
  EXPECT_EQ(metrics.at("tcp.connect_latency").hist.count(), 2u);
  std::printf("[ tcp      ] %llu packets dropped, %.0f retransmits\n", static_cast<unsigned long long>(dropped),
              metrics.at("tcp.retransmits").value);
}

// With tbf at rate R on the client's egress, data leaves the client's end of
// the link no faster than R, and a segment queued behind another waits at
// least that one's transmission time: 1500 bytes (one full-size frame) at
// 4 Mbit/s is 3 ms. Without a limit the veth pair's RTT is tens of
// microseconds. The limited transfer (2 x 128 KiB, about 0.5 s at 4 Mbit/s)
// keeps the queue non-empty for the whole send after the first 4 KiB of
// burst, so most RTT samples carry at least one frame of queueing.
TEST_P(TcpProbe, RttP50GrowsUnderATbfRateLimit) {
  PERFGATE_TCP_TEST_PREAMBLE();
  constexpr double kRateBitsPerSecond = 4e6;
  constexpr double kFrameNs = 1500 * 8 / kRateBitsPerSecond * 1e9;  // 3 ms
  MetricSet free_metrics = Measure("tcp", ProbeScope::kWorkload, Transfer(kConnections, kBytes));
  double free_p50 = free_metrics.at("tcp.rtt").hist.Quantile(0.5);
  ASSERT_GT(free_p50, 0);
  ASSERT_TRUE(link_->ClientTc("qdisc add dev pgtcp-c root tbf rate 4mbit burst 4kb latency 100ms", why)) << why;
  MetricSet limited = Measure("tcp", ProbeScope::kWorkload, Transfer(2, 128 * kKiB));
  double limited_p50 = limited.at("tcp.rtt").hist.Quantile(0.5);
  std::printf("[ tcp      ] rtt p50 %.0f ns free, %.0f ns under tbf 4mbit (x%.1f)\n", free_p50, limited_p50,
              limited_p50 / free_p50);
  // At least a frame's time more than without the limit, half a frame as
  // the margin: the bound above is a lower one. (Not a multiple of the free
  // RTT: under an emulated CPU, arm64 in QEMU, that is milliseconds too.)
  EXPECT_GE(limited_p50, free_p50 + 0.5 * kFrameNs);
  // And an upper one: tbf queues at most `latency` (100 ms) worth of data
  // at its rate plus the burst, and drops the rest, so no segment waits
  // longer; twice that is the margin.
  EXPECT_LE(limited_p50, 2 * (100e6 + 4096 * 8 / kRateBitsPerSecond * 1e9));
}

TEST_P(TcpProbe, CountsTheResetThatRefusesAConnect) {
  PERFGATE_TCP_TEST_PREAMBLE();
  const VethPair* link = link_.get();
  MetricSet metrics = Measure("tcp", ProbeScope::kWorkload, [link] { ConnectToClosedPort(*link); });
  // The RST is received by the workload's connecting socket; the one the
  // server's kernel sends has no socket and belongs to nobody.
  EXPECT_EQ(metrics.at("tcp.resets.received").value, 1);
  EXPECT_EQ(metrics.at("tcp.resets.sent").value, 0);
  EXPECT_EQ(metrics.at("tcp.resets").value, 1);
  EXPECT_EQ(metrics.at("tcp.connect_latency").hist.count(), 0u);
}

TEST_P(TcpProbe, CountsTheResetOfAConnectionClosedWithUnreadDataOnBothEnds) {
  PERFGATE_TCP_TEST_PREAMBLE();
  const VethPair* link = link_.get();
  MetricSet metrics = Measure("tcp", ProbeScope::kWorkload, [link] { CloseWithUnreadData(*link); });
  // Sent by the connecting socket, received by the accepted one: both are
  // the workload's.
  EXPECT_EQ(metrics.at("tcp.resets.sent").value, 1);
  EXPECT_EQ(metrics.at("tcp.resets.received").value, 1);
  EXPECT_EQ(metrics.at("tcp.connect_latency").hist.count(), 1u);
}

// The workload only serves: its accepted socket is created in softirq, from
// the listener it started, and what it sends gives RTT samples. The client
// is another process, whose connect is not the workload's.
TEST_P(TcpProbe, AttributesSocketsAcceptedFromTheWorkloadsListener) {
  PERFGATE_TCP_TEST_PREAMBLE();
  pid_t client = fork();
  ASSERT_GE(client, 0);
  if (client == 0) Download(*link_);
  const VethPair* link = link_.get();
  MetricSet metrics = Measure("tcp", ProbeScope::kWorkload, [link] { ServeDownload(*link, 1024 * kKiB); });
  int status = 0;
  ASSERT_EQ(waitpid(client, &status, 0), client);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  EXPECT_GT(metrics.at("tcp.rtt").hist.count(), 4u);
  EXPECT_EQ(metrics.at("tcp.connect_latency").hist.count(), 0u);
  EXPECT_EQ(metrics.at("tcp.resets").value, 0);
}

// Another process's connections over the same link, running while the
// tracked workload sleeps, count in system scope only. Their packets are
// processed in softirq on top of whatever task runs, the tracked one
// included: attribution is by socket, not by the current task.
class UntrackedTraffic {
 public:
  explicit UntrackedTraffic(const VethPair& link) {
    pid_ = fork();
    if (pid_ == 0) {
      setpgid(0, 0);
      ClientServer(link, 1000000, 16 * kKiB);
      _exit(0);
    }
    setpgid(pid_, pid_);
  }
  ~UntrackedTraffic() {
    kill(-pid_, SIGKILL);
    while (waitpid(-pid_, nullptr, 0) > 0) {
    }
  }
  // Still running: it did not fail before the measurement ended.
  bool Running() const { return waitpid(pid_, nullptr, WNOHANG) == 0; }

  // The measured work: at least 300 ms, and until the traffic opened 20
  // more connections (at most 10 s): a slow machine (an emulated one, a
  // busy host) may open fewer than that in 300 ms.
  std::function<void()> Await20Connections() const {
    pid_t pid = pid_;
    return [pid] {
      const long start = ActiveOpens(pid);
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
      usleep(300 * 1000);
      while (ActiveOpens(pid) < start + 20 && std::chrono::steady_clock::now() < deadline) usleep(20 * 1000);
    };
  }

 private:
  // TCP connections opened in the namespace of `pid` (its client, once it
  // entered the client's): ActiveOpens of /proc/PID/net/snmp; 0 when unread.
  static long ActiveOpens(pid_t pid) {
    std::istringstream snmp(testing::ReadFile("/proc/" + std::to_string(pid) + "/net/snmp"));
    std::string header, values;
    while (std::getline(snmp, header) && std::getline(snmp, values)) {
      if (header.rfind("Tcp:", 0) != 0) continue;
      std::istringstream names(header), numbers(values);
      std::string name, number;
      while (names >> name && numbers >> number) {
        if (name == "ActiveOpens") return std::atol(number.c_str());
      }
    }
    return 0;
  }

  pid_t pid_ = -1;
};

TEST_P(TcpProbe, IgnoresConnectionsOfUntrackedProcessesInWorkloadScope) {
  PERFGATE_TCP_TEST_PREAMBLE();
  UntrackedTraffic traffic(*link_);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  MetricSet metrics = Measure("tcp", ProbeScope::kWorkload, traffic.Await20Connections());
  EXPECT_TRUE(traffic.Running());
  EXPECT_EQ(metrics.at("tcp.connect_latency").hist.count(), 0u);
  EXPECT_EQ(metrics.at("tcp.rtt").hist.count(), 0u);
  EXPECT_EQ(metrics.at("tcp.resets").value, 0);
}

TEST_P(TcpProbe, SystemScopeCountsConnectionsOfUntrackedProcesses) {
  PERFGATE_TCP_TEST_PREAMBLE();
  UntrackedTraffic traffic(*link_);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  MetricSet metrics = Measure("tcp", ProbeScope::kSystem, traffic.Await20Connections());
  EXPECT_TRUE(traffic.Running());
  EXPECT_GT(metrics.at("tcp.connect_latency").hist.count(), 10u);
  EXPECT_GT(metrics.at("tcp.rtt").hist.count(), 10u);
}

INSTANTIATE_TEST_SUITE_P(AttachTypes, TcpProbe, ::testing::ValuesIn(TestedAttachTypes()), AttachTypeName);
INSTANTIATE_TEST_SUITE_P(FunctionAttachTypes, TcpProbe, ::testing::ValuesIn(TestedFunctionAttachTypes()),
                         AttachTypeName);

// --- lifetime, cost and suites ---------------------------------------------

TEST(TcpProbeLifetime, DetachUnloadsEveryProgramOfTheProbe) {
  PERFGATE_REQUIRE_ROOT();
  std::set<uint32_t> before = LoadedProgramIds();
  {
    WorkloadTracker tracker;
    tracker.Attach({});
    auto probe = CreateProbe("tcp");
    ASSERT_NE(probe, nullptr);
    probe->Attach({}, &tracker);
    EXPECT_EQ(probe->Report().hooks.size(), 5u);
    probe->Detach();
    probe->Detach();              // twice is fine
    probe->Attach({}, &tracker);  // the destructor must clean this one up
  }
  EXPECT_EQ(NewProgramIds(before), std::set<uint32_t>{});
}

TEST(TcpProbeCost, ReportsRunTimeStatsOfItsPrograms) {
  PERFGATE_REQUIRE_ROOT();
  std::string why;
  auto link = VethPair::Create(why);
  PERFGATE_REQUIRE_ENVIRONMENT(link != nullptr, why);
  BpfStatsEnabler stats;
  if (!stats.enabled()) GTEST_SKIP() << stats.reason();
  auto probe = AttachedInSystemScope("tcp");
  HeldChild child([&link] { ClientServer(*link, 2, 64 * kKiB); });
  ASSERT_TRUE(child.RunToCompletion());
  ProbeReport report = probe->Report();
  EXPECT_EQ(report.scope, "system");
  EXPECT_GT(report.run_count, 0u);
  EXPECT_GT(report.run_time_ns, 0u);
}

// The probe takes no parameter: any is rejected with the JSON path of the
// probe's entry and the key, in one line.
TEST(TcpProbeCli, UnknownParameterIsABadInputNamingTheProbeEntryAndParameter) {
  perfgate::testing::ScratchDir dir;
  std::string suite = dir / "suite.json";
  perfgate::testing::WriteFile(
      suite, R"({"name": "t", "scenarios": [{"name": "s", "workload": {"kind": "command", "argv": ["/bin/true"]},
                  "warmup": 0, "repetitions": 2, "timeout_s": 30,
                  "probes": [{"name": "tcp", "rtt_only": true}], "checks": []}]})");
  perfgate::testing::CliRun run = perfgate::testing::RunCli({"run", suite, "--out", dir / "out"});
  EXPECT_EQ(run.exit_code, 2) << run.output;
  EXPECT_NE(run.output.find("$.scenarios[0].probes[0].rtt_only: unknown key"), std::string::npos) << run.output;
  EXPECT_EQ(std::count(run.output.begin(), run.output.end(), '\n'), 1) << run.output;
}

TEST(TcpProbeCli, ProbesCommandListsTheTcpProbeAndItsHooks) {
  PERFGATE_REQUIRE_ROOT();
  perfgate::testing::CliRun run = perfgate::testing::RunCli({"probes"});
  EXPECT_EQ(run.exit_code, 0) << run.output;
  for (const char* text : {"tcp.retransmits", "tcp.rtt", "tcp.connect_latency", "inet_sock_set_state", "tcp_probe"})
    EXPECT_NE(run.output.find(text), std::string::npos) << text << " missing from:\n" << run.output;
}

}  // namespace
}  // namespace perfgate
