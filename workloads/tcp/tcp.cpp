// pg-tcp: TCP connections over loopback, the workload of the tcp probe's
// scenario. A server thread accepts connections and echoes what it reads;
// the client opens --connections connections one after the other, sends
// --bytes on each in --request-bytes requests, reads every request's echo
// back, and closes. One operation is one connection.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

struct Options {
  long connections = 200;
  long bytes = 256 * 1024;
  long request_bytes = 16 * 1024;
};

[[noreturn]] void Usage(const char* why) {
  std::fprintf(stderr,
               "pg-tcp: %s\n"
               "usage: pg-tcp [--connections N] [--bytes N] [--request-bytes N]\n",
               why);
  std::exit(2);
}

[[noreturn]] void Die(const char* what) {
  std::fprintf(stderr, "pg-tcp: %s: %s\n", what, std::strerror(errno));
  std::exit(1);
}

long ParseCount(const std::string& flag, const char* text, long hi) {
  char* end = nullptr;
  long v = std::strtol(text, &end, 10);
  if (end == text || *end != '\0' || v < 1 || v > hi) Usage(("bad value for " + flag).c_str());
  return v;
}

Options Parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string flag = argv[i];
    if (i + 1 >= argc) Usage(("missing value for " + flag).c_str());
    const char* value = argv[++i];
    if (flag == "--connections")
      o.connections = ParseCount(flag, value, 10000000);
    else if (flag == "--bytes")
      o.bytes = ParseCount(flag, value, 1L << 34);
    else if (flag == "--request-bytes")
      o.request_bytes = ParseCount(flag, value, 1 << 24);
    else
      Usage(("unknown option " + flag).c_str());
  }
  return o;
}

bool ReadFully(int fd, char* data, size_t size) {
  for (size_t done = 0; done < size;) {
    ssize_t n = read(fd, data + done, size - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

bool WriteFully(int fd, const char* data, size_t size) {
  for (size_t done = 0; done < size;) {
    ssize_t n = write(fd, data + done, size - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

// Echoes each connection until the client closes it.
void Serve(int listener, long connections) {
  std::vector<char> buffer(64 * 1024);
  for (long i = 0; i < connections; ++i) {
    int fd = accept(listener, nullptr, nullptr);
    if (fd < 0) Die("accept");
    for (;;) {
      ssize_t n = read(fd, buffer.data(), buffer.size());
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      if (!WriteFully(fd, buffer.data(), static_cast<size_t>(n))) Die("echo");
    }
    close(fd);
  }
}

}  // namespace

int main(int argc, char** argv) {
  Options o = Parse(argc, argv);
  int listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof(address);
  // Port 0 is chosen at bind(), before listen(): the probe recognises the
  // accepted sockets by the listener's port.
  if (listener < 0 || bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0 ||
      getsockname(listener, reinterpret_cast<sockaddr*>(&address), &length) != 0 || listen(listener, 64) != 0)
    Die("listen");
  std::thread server(Serve, listener, o.connections);

  std::vector<char> request(static_cast<size_t>(o.request_bytes), 'p'), echo(request.size());
  timespec t0{}, t1{};
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (long i = 0; i < o.connections; ++i) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) Die("connect");
    for (long sent = 0; sent < o.bytes; sent += o.request_bytes) {
      size_t size = static_cast<size_t>(std::min(o.request_bytes, o.bytes - sent));
      if (!WriteFully(fd, request.data(), size) || !ReadFully(fd, echo.data(), size)) Die("request");
    }
    close(fd);
  }
  clock_gettime(CLOCK_MONOTONIC, &t1);
  server.join();
  close(listener);
  double elapsed = static_cast<double>(t1.tv_sec - t0.tv_sec) + static_cast<double>(t1.tv_nsec - t0.tv_nsec) / 1e9;
  std::printf("{\"ops\": %ld}\n", o.connections);
  std::printf("{\"metric\": \"tcp_echo.time\", \"value\": %.9f, \"unit\": \"s\", \"better\": \"lower\"}\n", elapsed);
  return 0;
}
