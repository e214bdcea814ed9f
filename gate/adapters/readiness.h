// When a starting app counts as ready: a marker the cold-start suite names,
// watched by the process runner (run/process.h) while the app runs. The
// runner feeds it the app's output as it arrives, polls it, and takes the
// monotonic time of the first `true` as the moment the app was ready.
#pragma once

#include <sys/types.h>

#include <array>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <regex>
#include <string>
#include <string_view>

namespace perfgate {

enum class OutputStream { kStdout, kStderr };

class ReadinessMarker {
 public:
  virtual ~ReadinessMarker() = default;
  // What the marker waits for, for messages ("a line on stdout matching ...").
  virtual std::string Describe() const = 0;
  // Right after the app was released to exec.
  virtual void Start() {}
  // The app's output as it arrives, in pieces of any size; true once ready.
  virtual bool OnOutput(OutputStream /*stream*/, std::string_view /*data*/) { return false; }
  // Called at least every poll_interval_ms() while the app runs; true once ready.
  virtual bool Poll() { return false; }
  // How often Poll must run; 0: it need not (output and exit markers).
  virtual int poll_interval_ms() const { return 0; }
  // The app's exit (status 0) is its readiness.
  virtual bool ready_at_exit() const { return false; }
  // Whether an app still running once ready is stopped (a server), or runs on
  // to its own end, its output until then parsed (a camera's frame stream).
  bool stop_when_ready() const { return stop_when_ready_; }
  void set_stop_when_ready(bool stop) { stop_when_ready_ = stop; }

 private:
  bool stop_when_ready_ = true;
};

// A marker of complete lines on one stream: pieces are joined into lines,
// each checked by Matches (without its newline).
class LineMarker : public ReadinessMarker {
 public:
  explicit LineMarker(OutputStream stream) : stream_(stream) {}
  bool OnOutput(OutputStream stream, std::string_view data) override;

 protected:
  virtual bool Matches(const std::string& line) const = 0;

 private:
  // std::regex recurses per character (a 64 KiB line overflows an 8 MiB
  // stack): a longer line is checked in pieces of this size.
  static constexpr size_t kMaxLine = 4096;
  OutputStream stream_;
  std::string partial_;
};

// A line on stdout or stderr in which the ECMAScript regex finds a match.
class OutputPatternMarker : public LineMarker {
 public:
  // Throws std::regex_error when `pattern` does not compile.
  OutputPatternMarker(OutputStream stream, const std::string& pattern);
  std::string Describe() const override;

 protected:
  bool Matches(const std::string& line) const override;

 private:
  std::string pattern_;
  std::regex regex_;
  OutputStream stream_;
};

// The app's phase JSON line (command.h's {"phase": NAME, "begin_ns", "end_ns"})
// of the named phase: ready when it ended.
class PhaseLineMarker : public LineMarker {
 public:
  explicit PhaseLineMarker(std::string phase) : LineMarker(OutputStream::kStdout), phase_(std::move(phase)) {}
  std::string Describe() const override { return "the phase line of \"" + phase_ + "\" on stdout"; }

 protected:
  bool Matches(const std::string& line) const override;

 private:
  std::string phase_;
};

// A file created, or changed, after the start.
class FileMarker : public ReadinessMarker {
 public:
  explicit FileMarker(std::string path) : path_(std::move(path)) {}
  std::string Describe() const override { return "file " + path_ + " written"; }
  void Start() override;
  bool Poll() override;
  int poll_interval_ms() const override { return 1; }

 private:
  std::string path_;
  std::optional<std::array<long long, 6>> at_start_;
};

// A TCP port on the loopback address accepting connections.
class PortMarker : public ReadinessMarker {
 public:
  explicit PortMarker(int port) : port_(port) {}
  std::string Describe() const override { return "port " + std::to_string(port_) + " accepting on 127.0.0.1"; }
  bool Poll() override;
  int poll_interval_ms() const override { return 1; }

 private:
  int port_;
};

// The app exiting with status 0 (a command that does its start-up and ends).
class ExitMarker : public ReadinessMarker {
 public:
  std::string Describe() const override { return "the app exiting"; }
  bool ready_at_exit() const override { return true; }
};

// The marker of a cold-start "ready" object as the suite parser normalized it
// ({"stdout": RE} | {"stderr": RE} | {"file": PATH} | {"port": N} | {"phase": NAME} | {"exit": true}).
// Throws InputError naming `where` when it is none of these.
std::unique_ptr<ReadinessMarker> MakeReadinessMarker(const nlohmann::json& ready, const std::string& where);

}  // namespace perfgate
