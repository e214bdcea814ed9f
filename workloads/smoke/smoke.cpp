// pg-smoke: the small workload of the default suite. Each iteration makes a
// few cheap syscalls, maps and touches fresh memory (page faults and page
// allocations), and every so often sleeps briefly (off-CPU time, wake-ups).
// --slowdown FACTOR multiplies the work while the reported operation count
// stays the same, which is how the tests plant a regression of known size.
// --syscalls, --map-kib, --sleep-us and --lock-hold-us each plant one kernel
// behaviour: more syscalls, more page faults, longer sleeps, longer lock waits.
//
// --lock-every N: every Nth iteration the loop takes a mutex that a helper
// thread holds, asleep, for --lock-hold-us: one futex wait of about that
// long. The helper sleeps all the time, holding the mutex or waiting for the
// next turn, as an idle thread of a pool would. The two threads hand over
// through pipes, so the mutex's are the only futex waits.
#include <pthread.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <thread>

namespace {

struct Options {
  long iterations = 4000;
  double slowdown = 1.0;
  long syscalls_per_iteration = 16;
  long map_bytes = 256 * 1024;
  long sleep_every = 200;
  long sleep_us = 300;
  long lock_every = 0;
  long lock_hold_us = 100;
};

[[noreturn]] void Usage(const char* why) {
  std::fprintf(stderr,
               "pg-smoke: %s\n"
               "usage: pg-smoke [--iterations N] [--slowdown FACTOR] [--syscalls N] [--map-kib N]\n"
               "                [--sleep-every N] [--sleep-us N] [--lock-every N] [--lock-hold-us N]\n",
               why);
  std::exit(2);
}

double ParseNumber(const char* flag, const char* text, double lo, double hi) {
  char* end = nullptr;
  double v = std::strtod(text, &end);
  if (end == text || *end != '\0' || !(v >= lo && v <= hi)) Usage((std::string("bad value for ") + flag).c_str());
  return v;
}

Options Parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string flag = argv[i];
    if (i + 1 >= argc) Usage(("missing value for " + flag).c_str());
    const char* value = argv[++i];
    if (flag == "--iterations") o.iterations = static_cast<long>(ParseNumber("--iterations", value, 1, 1e9));
    else if (flag == "--slowdown") o.slowdown = ParseNumber("--slowdown", value, 0.01, 100);
    else if (flag == "--syscalls") o.syscalls_per_iteration = static_cast<long>(ParseNumber("--syscalls", value, 0, 1e6));
    else if (flag == "--map-kib") o.map_bytes = static_cast<long>(ParseNumber("--map-kib", value, 4, 1 << 20)) * 1024;
    else if (flag == "--sleep-every") o.sleep_every = static_cast<long>(ParseNumber("--sleep-every", value, 0, 1e9));
    else if (flag == "--sleep-us") o.sleep_us = static_cast<long>(ParseNumber("--sleep-us", value, 0, 1e7));
    else if (flag == "--lock-every") o.lock_every = static_cast<long>(ParseNumber("--lock-every", value, 0, 1e9));
    else if (flag == "--lock-hold-us") o.lock_hold_us = static_cast<long>(ParseNumber("--lock-hold-us", value, 0, 1e7));
    else Usage(("unknown option " + flag).c_str());
  }
  return o;
}

[[noreturn]] void Die(const char* what) {
  std::perror(what);
  std::exit(1);
}

double Now() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

class LockContention {
 public:
  explicit LockContention(long hold_us) : hold_{hold_us / 1000000, hold_us % 1000000 * 1000} {
    if (pipe(go_) != 0 || pipe(held_) != 0) Die("pg-smoke: pipe");
    helper_ = std::thread([this] { Hold(); });
  }
  ~LockContention() {
    char c = 'q';
    if (write(go_[1], &c, 1) != 1) Die("pg-smoke: write");
    helper_.join();
  }
  LockContention(const LockContention&) = delete;
  LockContention& operator=(const LockContention&) = delete;

  // Waits for the mutex while the helper holds it.
  void Wait() {
    char c = 'g';
    if (write(go_[1], &c, 1) != 1 || read(held_[0], &c, 1) != 1) Die("pg-smoke: lock hand-over");
    pthread_mutex_lock(&mutex_);
    pthread_mutex_unlock(&mutex_);
  }

 private:
  void Hold() {
    char c = 0;
    while (read(go_[0], &c, 1) == 1 && c == 'g') {
      pthread_mutex_lock(&mutex_);
      if (write(held_[1], &c, 1) != 1) Die("pg-smoke: lock hand-over");
      nanosleep(&hold_, nullptr);
      pthread_mutex_unlock(&mutex_);
    }
  }

  timespec hold_;
  int go_[2] = {-1, -1};
  int held_[2] = {-1, -1};
  pthread_mutex_t mutex_ = PTHREAD_MUTEX_INITIALIZER;
  std::thread helper_;
};

void Iteration(const Options& o, long i, LockContention* lock) {
  for (long k = 0; k < o.syscalls_per_iteration; ++k) syscall(SYS_getppid);
  void* p = mmap(nullptr, static_cast<size_t>(o.map_bytes), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) Die("pg-smoke: mmap");
  long page = sysconf(_SC_PAGESIZE);
  for (long off = 0; off < o.map_bytes; off += page) static_cast<volatile char*>(p)[off] = static_cast<char>(i);
  munmap(p, static_cast<size_t>(o.map_bytes));
  if (o.sleep_every > 0 && i % o.sleep_every == 0) {
    timespec ts{o.sleep_us / 1000000, o.sleep_us % 1000000 * 1000};
    nanosleep(&ts, nullptr);
  }
  if (lock && i % o.lock_every == 0) lock->Wait();
}

}  // namespace

int main(int argc, char** argv) {
  Options o = Parse(argc, argv);
  long work = static_cast<long>(static_cast<double>(o.iterations) * o.slowdown + 0.5);
  std::optional<LockContention> lock;
  if (o.lock_every > 0) lock.emplace(o.lock_hold_us);
  const double t0 = Now();
  for (long i = 0; i < work; ++i) Iteration(o, i, lock ? &*lock : nullptr);
  const double elapsed = Now() - t0;
  std::printf("{\"ops\": %ld}\n", o.iterations);
  std::printf("{\"metric\": \"smoke.loop_time\", \"value\": %.9f, \"unit\": \"s\", \"better\": \"lower\"}\n", elapsed);
  return 0;
}
