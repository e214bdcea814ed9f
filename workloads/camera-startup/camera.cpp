// pg-camera: simulates what a camera app does on a cold start, so that the
// kernel work on its critical path is the same kind as the real app's:
//
//   load_libraries    maps its "libraries" and touches every page (major
//                     faults, block reads: the files are dropped from the
//                     page cache first, posix_fadvise DONTNEED, so the start
//                     is cold)
//   load_tuning       reads its tuning files with read() and checks them
//   allocate_buffers  maps preview and capture buffers and touches every
//                     page (minor faults, page allocations and zeroing)
//   start_pipeline    starts the sensor, ISP and preview threads
//   first_frame       until the preview thread shows the first frame
//
// then streams --frames frames: the sensor produces one every
// --frame-interval-us into a free preview buffer (dropping the frame when
// none is free, as a sensor cannot wait), the ISP thread processes it, the
// preview thread shows it. Frames go through bounded queues.
//
// The files are created once in --cache-dir (default
// ${TMPDIR:-/var/tmp}/perfgate-camera-cache) and kept, like an installed
// app's; delete the directory to reclaim the space.
//
// A memory limit and a memory-hungry background app are perfgate's
// (run/memory_pressure.h): the camera-startup kind starts this program in a
// memory cgroup of its own, filled first when the scenario asks for it.
//
// Each phase line ({"phase": NAME, "begin_ns", "end_ns"}) is printed and
// flushed as the phase ends, so the runner sees "first_frame" (the camera's
// readiness) while the frames stream on.
//
// Prints its metrics as JSON lines (the command adapter's format), times in ms:
//   camera.time_to_first_frame, camera.phase.<phase>,
//   camera.frame_interval_p50/_p90/_p99/_max (between frames shown),
//   camera.dropped_frames
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace {

struct Options {
  std::string cache_dir;
  long libraries = 12;
  long library_kib = 2048;
  long tuning_files = 16;
  long tuning_kib = 256;
  long preview_buffers = 6;
  long preview_kib = 3072;  // 1920x1080 NV12
  long capture_buffers = 3;
  long capture_kib = 12288;
  long frames = 30;
  long frame_interval_us = 16667;  // 60 fps
  long queue_depth = 3;
};

[[noreturn]] void Die(const std::string& what) {
  std::fprintf(stderr, "pg-camera: %s\n", what.c_str());
  std::exit(1);
}

[[noreturn]] void Usage(const std::string& why) {
  std::fprintf(stderr,
               "pg-camera: %s\n"
               "usage: pg-camera [--cache-dir DIR] [--libraries N] [--library-kib K] [--tuning-files N]\n"
               "                 [--tuning-kib K] [--preview-buffers N] [--preview-kib K] [--capture-buffers N]\n"
               "                 [--capture-kib K] [--frames N] [--frame-interval-us U] [--queue-depth N]\n",
               why.c_str());
  std::exit(2);
}

std::string Errno(const std::string& what) { return what + ": " + std::strerror(errno); }

long ParseCount(const std::string& flag, const char* text, long lo, long hi) {
  char* end = nullptr;
  errno = 0;
  long v = std::strtol(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0' || v < lo || v > hi) {
    Usage("bad value for " + flag + " (" + std::to_string(lo) + ".." + std::to_string(hi) + ")");
  }
  return v;
}

Options Parse(int argc, char** argv) {
  Options o;
  const char* tmpdir = std::getenv("TMPDIR");
  o.cache_dir = std::string(tmpdir && *tmpdir ? tmpdir : "/var/tmp") + "/perfgate-camera-cache";
  struct CountFlag {
    const char* name;
    long* value;
    long lo, hi;
  };
  const CountFlag counts[] = {{"--libraries", &o.libraries, 0, 1000},
                              {"--library-kib", &o.library_kib, 4, 1 << 20},
                              {"--tuning-files", &o.tuning_files, 0, 1000},
                              {"--tuning-kib", &o.tuning_kib, 4, 1 << 20},
                              {"--preview-buffers", &o.preview_buffers, 2, 64},
                              {"--preview-kib", &o.preview_kib, 4, 1 << 20},
                              {"--capture-buffers", &o.capture_buffers, 0, 64},
                              {"--capture-kib", &o.capture_kib, 4, 1 << 20},
                              {"--frames", &o.frames, 2, 100000},
                              {"--frame-interval-us", &o.frame_interval_us, 100, 10000000},
                              {"--queue-depth", &o.queue_depth, 1, 64}};
  for (int i = 1; i < argc; ++i) {
    std::string flag = argv[i];
    if (i + 1 >= argc) Usage("missing value for " + flag);
    const char* value = argv[++i];
    if (flag == "--cache-dir") {
      o.cache_dir = value;
      continue;
    }
    bool known = false;
    for (const auto& c : counts) {
      if (flag == c.name) {
        *c.value = ParseCount(flag, value, c.lo, c.hi);
        known = true;
      }
    }
    if (!known) Usage("unknown option " + flag);
  }
  return o;
}

double NowMs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

size_t PageSize() { return static_cast<size_t>(sysconf(_SC_PAGESIZE)); }

// ---- the installed files ---------------------------------------------------

// Creates `path` with `bytes` of non-zero data unless it is already there
// with that size; written to a temporary name and renamed, so concurrent
// first runs never see a partial file.
void EnsureFile(const std::string& path, size_t bytes, uint32_t seed) {
  struct stat st {};
  if (stat(path.c_str(), &st) == 0 && static_cast<size_t>(st.st_size) == bytes) return;
  std::string tmp = path + ".XXXXXX";
  int fd = mkstemp(tmp.data());
  if (fd < 0) Die(Errno("cannot create " + tmp));
  std::vector<uint32_t> chunk(256 * 1024 / sizeof(uint32_t));
  uint32_t x = seed * 2654435761u + 1;
  for (size_t done = 0; done < bytes;) {
    for (auto& w : chunk) w = x = x * 1664525u + 1013904223u;  // not zero pages: real data to read
    size_t n = std::min(bytes - done, chunk.size() * sizeof(uint32_t));
    if (write(fd, chunk.data(), n) != static_cast<ssize_t>(n)) Die(Errno("cannot write " + tmp));
    done += n;
  }
  // Synced, so the pages are clean and DONTNEED can drop them before each start.
  if (fsync(fd) != 0) Die(Errno("cannot fsync " + tmp));
  close(fd);
  if (rename(tmp.c_str(), path.c_str()) != 0) Die(Errno("cannot rename " + tmp));
}

// Drops the file's clean, unmapped pages from the page cache: the next read
// comes from the disk, as on a cold start.
void DropFromPageCache(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) Die(Errno("cannot open " + path));
  posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  close(fd);
}

struct AppFiles {
  std::vector<std::string> libraries;
  std::vector<std::string> tuning;
};

AppFiles InstallApp(const Options& o) {
  if (mkdir(o.cache_dir.c_str(), 0755) != 0 && errno != EEXIST) Die(Errno("cannot create " + o.cache_dir));
  AppFiles files;
  for (long i = 0; i < o.libraries; ++i) {
    files.libraries.push_back(o.cache_dir + "/libcamera_part" + std::to_string(i) + ".so");
    EnsureFile(files.libraries.back(), static_cast<size_t>(o.library_kib) * 1024, static_cast<uint32_t>(i));
  }
  for (long i = 0; i < o.tuning_files; ++i) {
    files.tuning.push_back(o.cache_dir + "/tuning" + std::to_string(i) + ".bin");
    EnsureFile(files.tuning.back(), static_cast<size_t>(o.tuning_kib) * 1024, static_cast<uint32_t>(1000 + i));
  }
  return files;
}

// ---- the pipeline ----------------------------------------------------------

template <typename T>
class BoundedQueue {
 public:
  explicit BoundedQueue(size_t capacity) : capacity_(capacity) {}
  bool TryPush(T v) {
    std::lock_guard<std::mutex> lock(mu_);
    if (items_.size() >= capacity_) return false;
    items_.push_back(std::move(v));
    cv_.notify_one();
    return true;
  }
  // Blocks until an item or Close(); nullopt when closed and empty.
  std::optional<T> Pop() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return !items_.empty() || closed_; });
    if (items_.empty()) return std::nullopt;
    T v = std::move(items_.front());
    items_.pop_front();
    return v;
  }
  std::optional<T> TryPop() {
    std::lock_guard<std::mutex> lock(mu_);
    if (items_.empty()) return std::nullopt;
    T v = std::move(items_.front());
    items_.pop_front();
    return v;
  }
  void Close() {
    std::lock_guard<std::mutex> lock(mu_);
    closed_ = true;
    cv_.notify_all();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<T> items_;
  size_t capacity_;
  bool closed_ = false;
};

struct Buffers {
  std::vector<char*> preview;
  std::vector<char*> capture;
  size_t preview_bytes = 0;
  size_t capture_bytes = 0;
};

char* MapAndTouch(size_t bytes) {
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) Die(Errno("mmap of a frame buffer"));
  char* c = static_cast<char*>(p);
  for (size_t off = 0; off < bytes; off += PageSize()) c[off] = 0x10;
  return c;
}

struct Frame {
  size_t buffer = 0;
  long sequence = 0;
};

struct Pipeline {
  Pipeline(const Options& o, Buffers& b)
      : options(o), buffers(b), free_buffers(b.preview.size()), to_isp(o.queue_depth), to_preview(o.queue_depth) {
    for (size_t i = 0; i < b.preview.size(); ++i) free_buffers.TryPush(i);
  }

  const Options& options;
  Buffers& buffers;
  BoundedQueue<size_t> free_buffers;
  BoundedQueue<Frame> to_isp;
  BoundedQueue<Frame> to_preview;
  std::atomic<bool> stop{false};
  std::atomic<int> ready{0};
  std::atomic<long> dropped{0};
  std::mutex shown_mu;
  std::condition_variable shown_cv;
  std::vector<double> shown_ms;  // when each frame was shown
  uint64_t checksum = 0;

  // Exposes a frame into a free buffer at a fixed rate; drops it when the
  // pipeline has no free buffer or the ISP queue is full.
  void Sensor() {
    ++ready;
    timespec next{};
    clock_gettime(CLOCK_MONOTONIC, &next);
    for (long seq = 0; !stop.load() && seq < options.frames * 8; ++seq) {
      if (auto index = free_buffers.TryPop()) {
        char* data = buffers.preview[*index];
        std::memset(data, static_cast<int>(seq & 0x7f), buffers.preview_bytes);
        if (!to_isp.TryPush(Frame{*index, seq})) {
          free_buffers.TryPush(*index);
          ++dropped;
        }
      } else {
        ++dropped;
      }
      next.tv_nsec += options.frame_interval_us * 1000;
      while (next.tv_nsec >= 1000000000) {
        next.tv_nsec -= 1000000000;
        ++next.tv_sec;
      }
      clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, nullptr);
    }
    to_isp.Close();
  }

  // Demosaic, denoise, tone-map stand-in: a pass that reads and rewrites
  // every cache line of the frame.
  void Isp() {
    ++ready;
    while (auto frame = to_isp.Pop()) {
      auto* data = reinterpret_cast<uint64_t*>(buffers.preview[frame->buffer]);
      const size_t words = buffers.preview_bytes / sizeof(uint64_t);
      uint64_t acc = static_cast<uint64_t>(frame->sequence);
      for (size_t i = 0; i < words; i += 8) {
        acc = acc * 6364136223846793005ull + data[i];
        data[i] = acc;
      }
      if (!to_preview.TryPush(*frame)) {
        free_buffers.TryPush(frame->buffer);
        ++dropped;
      }
    }
    to_preview.Close();
  }

  // Shows the frame (samples it, as a compositor would scan it out) and
  // returns its buffer.
  void Preview() {
    ++ready;
    while (auto frame = to_preview.Pop()) {
      const char* data = buffers.preview[frame->buffer];
      uint64_t sum = 0;
      for (size_t off = 0; off < buffers.preview_bytes; off += 4096) sum += static_cast<unsigned char>(data[off]);
      free_buffers.TryPush(frame->buffer);
      std::lock_guard<std::mutex> lock(shown_mu);
      checksum += sum;
      // Frames still in flight when the stream stops are drained, not counted.
      if (static_cast<long>(shown_ms.size()) < options.frames) shown_ms.push_back(NowMs());
      if (static_cast<long>(shown_ms.size()) >= options.frames) stop = true;
      shown_cv.notify_all();
    }
  }
};

double Quantile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  // Nearest rank: with 29 intervals, p99 is the largest.
  size_t rank = static_cast<size_t>(std::ceil(q * static_cast<double>(v.size())));
  return v[std::min(v.size() - 1, rank == 0 ? 0 : rank - 1)];
}

void PrintMetric(const std::string& name, double value, const char* unit, const char* better = "lower") {
  std::printf("{\"metric\": \"%s\", \"value\": %.6f, \"unit\": \"%s\", \"better\": \"%s\"}\n", name.c_str(), value,
              unit, better);
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = Parse(argc, argv);
  const AppFiles files = InstallApp(o);

  for (const auto& f : files.libraries) DropFromPageCache(f);
  for (const auto& f : files.tuning) DropFromPageCache(f);

  struct Phase {
    std::string name;
    double begin_ms, end_ms;
  };
  std::vector<Phase> phases;
  const double start = NowMs();
  double mark = start;
  auto end_phase = [&](const char* name) {
    double now = NowMs();
    phases.push_back({name, mark, now});
    // On the CLOCK_MONOTONIC time line, for the readiness marker and `perfgate run --trace`.
    std::printf("{\"phase\": \"%s\", \"begin_ns\": %llu, \"end_ns\": %llu}\n", name,
                static_cast<unsigned long long>(mark * 1e6), static_cast<unsigned long long>(now * 1e6));
    std::fflush(stdout);
    mark = now;
  };

  uint64_t checksum = 0;
  const size_t page = PageSize();
  std::vector<std::pair<void*, size_t>> mapped;
  for (const auto& lib : files.libraries) {
    int fd = open(lib.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) Die(Errno("cannot open " + lib));
    const size_t bytes = static_cast<size_t>(o.library_kib) * 1024;
    void* p = mmap(nullptr, bytes, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) Die(Errno("cannot map " + lib));
    close(fd);
    for (size_t off = 0; off < bytes; off += page) checksum += static_cast<const volatile unsigned char*>(p)[off];
    mapped.emplace_back(p, bytes);
  }
  end_phase("load_libraries");

  std::vector<std::vector<char>> tuning;
  for (const auto& file : files.tuning) {
    int fd = open(file.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) Die(Errno("cannot open " + file));
    std::vector<char> data(static_cast<size_t>(o.tuning_kib) * 1024);
    size_t got = 0;
    while (got < data.size()) {
      ssize_t n = read(fd, data.data() + got, std::min<size_t>(data.size() - got, 64 * 1024));
      if (n <= 0) Die(Errno("cannot read " + file));
      got += static_cast<size_t>(n);
    }
    close(fd);
    for (size_t i = 0; i < data.size(); i += 64) checksum = checksum * 31 + static_cast<unsigned char>(data[i]);
    tuning.push_back(std::move(data));
  }
  end_phase("load_tuning");

  Buffers buffers;
  buffers.preview_bytes = static_cast<size_t>(o.preview_kib) * 1024;
  buffers.capture_bytes = static_cast<size_t>(o.capture_kib) * 1024;
  for (long i = 0; i < o.preview_buffers; ++i) buffers.preview.push_back(MapAndTouch(buffers.preview_bytes));
  for (long i = 0; i < o.capture_buffers; ++i) buffers.capture.push_back(MapAndTouch(buffers.capture_bytes));
  end_phase("allocate_buffers");

  Pipeline pipeline(o, buffers);
  std::thread preview([&] { pipeline.Preview(); });
  std::thread isp([&] { pipeline.Isp(); });
  std::thread sensor([&] { pipeline.Sensor(); });
  while (pipeline.ready.load() < 3) std::this_thread::yield();
  end_phase("start_pipeline");

  {
    std::unique_lock<std::mutex> lock(pipeline.shown_mu);
    pipeline.shown_cv.wait(lock, [&] { return !pipeline.shown_ms.empty(); });
  }
  end_phase("first_frame");
  const double time_to_first_frame = mark - start;

  sensor.join();
  isp.join();
  preview.join();
  if (static_cast<long>(pipeline.shown_ms.size()) < o.frames) {
    Die("only " + std::to_string(pipeline.shown_ms.size()) + " of " + std::to_string(o.frames) +
        " frames were shown (the pipeline dropped too many)");
  }
  std::vector<double> intervals;
  for (size_t i = 1; i < pipeline.shown_ms.size(); ++i) {
    intervals.push_back(pipeline.shown_ms[i] - pipeline.shown_ms[i - 1]);
  }

  for (auto& [p, bytes] : mapped) munmap(p, bytes);
  for (char* b : buffers.preview) munmap(b, buffers.preview_bytes);
  for (char* b : buffers.capture) munmap(b, buffers.capture_bytes);

  PrintMetric("camera.time_to_first_frame", time_to_first_frame, "ms");
  for (const auto& p : phases) PrintMetric("camera.phase." + p.name, p.end_ms - p.begin_ms, "ms");
  PrintMetric("camera.frame_interval_p50", Quantile(intervals, 0.50), "ms");
  PrintMetric("camera.frame_interval_p90", Quantile(intervals, 0.90), "ms");
  PrintMetric("camera.frame_interval_p99", Quantile(intervals, 0.99), "ms");
  PrintMetric("camera.frame_interval_max", Quantile(intervals, 1.0), "ms");
  PrintMetric("camera.dropped_frames", static_cast<double>(pipeline.dropped.load()), "count");
  // Keeps the work observable, so the compiler cannot drop it.
  std::fprintf(stderr, "pg-camera: checksum %016llx\n", static_cast<unsigned long long>(checksum + pipeline.checksum));
  return 0;
}
