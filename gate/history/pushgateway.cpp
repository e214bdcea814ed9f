#include "history/pushgateway.h"

#include <netdb.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

#include "base/error.h"

namespace perfgate {
namespace {

constexpr int kTimeoutSeconds = 10;

class Socket {
 public:
  explicit Socket(int fd) : fd_(fd) {}
  ~Socket() {
    if (fd_ >= 0) ::close(fd_);
  }
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;
  int fd() const { return fd_; }

 private:
  int fd_;
};

int Connect(const HttpUrl& url, const std::string& where) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  int rc = ::getaddrinfo(url.host.c_str(), url.port.c_str(), &hints, &found);
  if (rc != 0) throw InfraError(where + ": cannot resolve " + url.host + ": " + gai_strerror(rc));
  std::string last_error = "no address";
  int fd = -1;
  for (addrinfo* a = found; a != nullptr && fd < 0; a = a->ai_next) {
    fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    timeval timeout{kTimeoutSeconds, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
    ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof timeout);
    if (::connect(fd, a->ai_addr, a->ai_addrlen) == 0) break;
    last_error = std::strerror(errno);
    ::close(fd);
    fd = -1;
  }
  ::freeaddrinfo(found);
  if (fd < 0) throw InfraError(where + ": cannot connect to " + url.host + ":" + url.port + ": " + last_error);
  return fd;
}

void SendAll(int fd, const std::string& data, const std::string& where) {
  for (size_t sent = 0; sent < data.size();) {
    ssize_t n = ::send(fd, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw InfraError(where + ": sending failed: " + std::strerror(errno));
    sent += static_cast<size_t>(n);
  }
}

std::string ReceiveAll(int fd, const std::string& where) {
  std::string response;
  char buffer[4096];
  for (;;) {
    ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw InfraError(where + ": no response: " + std::strerror(errno));
    if (n == 0) return response;
    response.append(buffer, static_cast<size_t>(n));
  }
}

}  // namespace

HttpUrl ParseHttpUrl(const std::string& url) {
  const std::string scheme = "http://";
  if (url.rfind(scheme, 0) != 0) throw InputError("--push: expected an http:// URL, got \"" + url + "\"");
  std::string rest = url.substr(scheme.size());
  HttpUrl out;
  size_t slash = rest.find('/');
  std::string authority = rest.substr(0, slash);
  out.path = slash == std::string::npos ? "" : rest.substr(slash);
  while (!out.path.empty() && out.path.back() == '/') out.path.pop_back();
  size_t colon = authority.rfind(':');
  bool bracketed = !authority.empty() && authority.front() == '[';  // [::1]:9091
  if (colon != std::string::npos && (!bracketed || authority[colon - 1] == ']')) {
    out.port = authority.substr(colon + 1);
    authority = authority.substr(0, colon);
  }
  if (bracketed && authority.size() >= 2 && authority.back() == ']')
    authority = authority.substr(1, authority.size() - 2);
  out.host = authority;
  bool port_ok =
      !out.port.empty() && out.port.size() <= 5 && out.port.find_first_not_of("0123456789") == std::string::npos;
  if (out.host.empty() || !port_ok || out.host.find_first_of("@?# ") != std::string::npos) {
    throw InputError("--push: expected http://host[:port][/path], got \"" + url + "\"");
  }
  return out;
}

std::string Base64Url(const std::string& bytes) {
  static constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  std::string out;
  for (size_t i = 0; i < bytes.size(); i += 3) {
    uint32_t chunk = static_cast<uint8_t>(bytes[i]) << 16;
    if (i + 1 < bytes.size()) chunk |= static_cast<uint8_t>(bytes[i + 1]) << 8;
    if (i + 2 < bytes.size()) chunk |= static_cast<uint8_t>(bytes[i + 2]);
    out += kAlphabet[(chunk >> 18) & 63];
    out += kAlphabet[(chunk >> 12) & 63];
    out += i + 1 < bytes.size() ? kAlphabet[(chunk >> 6) & 63] : '=';
    out += i + 2 < bytes.size() ? kAlphabet[chunk & 63] : '=';
  }
  return out;
}

std::string GroupingSegment(const std::string& name, const std::string& value) {
  bool plain = !value.empty() && value.find_first_not_of(
                                     "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                     "0123456789-._~") == std::string::npos;
  // "." and ".." would be read as path steps; an empty value must be spelled "=" in base64 form.
  if (plain && value != "." && value != "..") return name + "/" + value;
  return name + "@base64/" + (value.empty() ? std::string("=") : Base64Url(value));
}

std::string PushPath(const std::string& suite, const std::string& scenario, const std::string& host) {
  return "/metrics/job/perfgate/" + GroupingSegment("suite", suite) + "/" + GroupingSegment("scenario", scenario) +
         "/" + GroupingSegment("host", host);
}

void PushMetrics(const std::string& url, const std::string& push_path, const std::string& body) {
  HttpUrl target = ParseHttpUrl(url);
  std::string path = target.path + push_path;
  std::string where = "push to " + url;
  Socket socket(Connect(target, where));
  std::string host = target.host.find(':') != std::string::npos ? "[" + target.host + "]" : target.host;
  std::string request = "PUT " + path + " HTTP/1.1\r\nHost: " + host + ":" + target.port +
                        "\r\nUser-Agent: perfgate\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\n"
                        "Content-Length: " +
                        std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body;
  SendAll(socket.fd(), request, where);
  std::string response = ReceiveAll(socket.fd(), where);
  std::string status = FirstLine(response);
  // "HTTP/1.1 200 OK": the code is the second word.
  size_t space = status.find(' ');
  std::string code = space == std::string::npos ? "" : status.substr(space + 1, 3);
  if (code.size() == 3 && code[0] == '2') return;
  size_t body_start = response.find("\r\n\r\n");
  std::string detail = body_start == std::string::npos ? "" : FirstLine(response.substr(body_start + 4));
  throw InfraError(where + ": " + (status.empty() ? "empty response" : status) + (detail.empty() ? "" : ": " + detail));
}

}  // namespace perfgate
