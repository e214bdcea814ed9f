#include "adapters/readiness.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "metrics/error.h"

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

long long RealtimeNs() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<long long>(ts.tv_sec) * 1000000000LL + ts.tv_nsec;
}

}  // namespace

void FileMarker::Start() { start_realtime_ns_ = RealtimeNs(); }

bool FileMarker::Poll() {
  struct stat st {};
  if (stat(path_.c_str(), &st) != 0) return false;
  // A file left by an earlier start does not count: it must be written after this one began.
  // File times have the kernel's coarse clock (a tick behind), hence the slack.
  constexpr long long kCoarseClockSlackNs = 20LL * 1000000;
  const long long written = static_cast<long long>(st.st_mtim.tv_sec) * 1000000000LL + st.st_mtim.tv_nsec;
  return written + kCoarseClockSlackNs >= start_realtime_ns_;
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
    const auto& [kind, value] = *ready.items().begin();
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
