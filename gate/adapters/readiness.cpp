#include "adapters/readiness.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <optional>

#include "base/error.h"

namespace perfgate {

bool LineMarker::OnOutput(OutputStream stream, std::string_view data) {
  if (stream != stream_) return false;
  while (!data.empty()) {
    const size_t take = std::min(std::min(data.find('\n'), data.size()), kMaxLine - partial_.size());
    partial_.append(data.substr(0, take));
    data.remove_prefix(take);
    const bool line_end = !data.empty() && data.front() == '\n';
    if (line_end) data.remove_prefix(1);
    if (!line_end && partial_.size() < kMaxLine) break;
    if (!partial_.empty() && partial_.back() == '\r') partial_.pop_back();
    const bool ready = Matches(partial_);
    partial_.clear();
    if (ready) return true;
  }
  return false;
}

OutputPatternMarker::OutputPatternMarker(OutputStream stream, const std::string& pattern)
    : LineMarker(stream), pattern_(pattern), regex_(pattern, std::regex::ECMAScript), stream_(stream) {}

std::string OutputPatternMarker::Describe() const {
  return std::string("a line on ") + (stream_ == OutputStream::kStdout ? "stdout" : "stderr") + " matching " +
         nlohmann::json(pattern_).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

bool OutputPatternMarker::Matches(const std::string& line) const { return std::regex_search(line, regex_); }

bool PhaseLineMarker::Matches(const std::string& line) const {
  const size_t start = line.find_first_not_of(" \t");
  if (start == std::string::npos || line[start] != '{') return false;
  const nlohmann::json j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
  return j.is_object() && j.contains("phase") && j["phase"] == phase_;
}

namespace {

// What tells one version of a file from another: a rewrite changes the
// change time, a replacement the inode.
std::optional<std::array<long long, 6>> FileVersion(const std::string& path) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) return std::nullopt;
  return std::array<long long, 6>{static_cast<long long>(st.st_ino),         static_cast<long long>(st.st_size),
                                  static_cast<long long>(st.st_ctim.tv_sec), st.st_ctim.tv_nsec,
                                  static_cast<long long>(st.st_mtim.tv_sec), st.st_mtim.tv_nsec};
}

}  // namespace

// The file as it was at the start: left by an earlier start, it does not
// count until it changes. (Comparing its time with the start's would not do:
// file times come from the kernel's coarse clock, a tick behind.)
void FileMarker::Start() { at_start_ = FileVersion(path_); }

bool FileMarker::Poll() {
  const auto now = FileVersion(path_);
  return now && now != at_start_;
}

bool PortMarker::Poll() {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port_));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  // On loopback a connect completes or is refused at once.
  const bool accepted = connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0;
  close(fd);
  return accepted;
}

std::unique_ptr<ReadinessMarker> MakeReadinessMarker(const nlohmann::json& ready, const std::string& where) {
  if (ready.is_object() && ready.size() == 1) {
    // Not `*ready.items().begin()`: its element refers into the temporary
    // items() returns, gone by the next statement.
    const std::string kind = ready.begin().key();
    const nlohmann::json& value = ready.begin().value();
    try {
      if (kind == "stdout" && value.is_string()) {
        return std::make_unique<OutputPatternMarker>(OutputStream::kStdout, value.get<std::string>());
      }
      if (kind == "stderr" && value.is_string()) {
        return std::make_unique<OutputPatternMarker>(OutputStream::kStderr, value.get<std::string>());
      }
    } catch (const std::regex_error& e) {
      throw InputError(where + "." + kind + ": the pattern does not compile: " + e.what());
    }
    if (kind == "file" && value.is_string()) return std::make_unique<FileMarker>(value.get<std::string>());
    if (kind == "phase" && value.is_string()) return std::make_unique<PhaseLineMarker>(value.get<std::string>());
    if (kind == "port" && value.is_number_integer() && value.get<int64_t>() >= 1 && value.get<int64_t>() <= 65535) {
      return std::make_unique<PortMarker>(static_cast<int>(value.get<int64_t>()));
    }
    if (kind == "exit" && value == true) return std::make_unique<ExitMarker>();
  }
  throw InputError(where + ": expected one of {\"stdout\": RE}, {\"stderr\": RE}, {\"file\": PATH}, {\"port\": N}, " +
                   "{\"phase\": NAME}, {\"exit\": true}, got " +
                   ready.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).substr(0, 200));
}

}  // namespace perfgate
