// pg-smoke: the small workload of the default suite. Each iteration makes a
// few cheap syscalls, maps and touches fresh memory (page faults and page
// allocations), and every so often sleeps briefly (off-CPU time, wake-ups).
// --slowdown FACTOR multiplies the work while the reported operation count
// stays the same, which is how the tests plant a regression of known size.
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace {

struct Options {
  long iterations = 4000;
  double slowdown = 1.0;
  long syscalls_per_iteration = 16;
  long map_bytes = 256 * 1024;
  long sleep_every = 200;
  long sleep_us = 300;
};

[[noreturn]] void Usage(const char* why) {
  std::fprintf(stderr,
               "pg-smoke: %s\n"
               "usage: pg-smoke [--iterations N] [--slowdown FACTOR] [--syscalls N] [--map-kib N]\n"
               "                [--sleep-every N] [--sleep-us N]\n",
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
    else Usage(("unknown option " + flag).c_str());
  }
  return o;
}

void Iteration(const Options& o, long i) {
  for (long k = 0; k < o.syscalls_per_iteration; ++k) syscall(SYS_getppid);
  void* p = mmap(nullptr, static_cast<size_t>(o.map_bytes), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    std::perror("pg-smoke: mmap");
    std::exit(1);
  }
  long page = sysconf(_SC_PAGESIZE);
  for (long off = 0; off < o.map_bytes; off += page) static_cast<volatile char*>(p)[off] = static_cast<char>(i);
  munmap(p, static_cast<size_t>(o.map_bytes));
  if (o.sleep_every > 0 && i % o.sleep_every == 0) {
    timespec ts{0, o.sleep_us * 1000};
    nanosleep(&ts, nullptr);
  }
}

}  // namespace

int main(int argc, char** argv) {
  Options o = Parse(argc, argv);
  long work = static_cast<long>(static_cast<double>(o.iterations) * o.slowdown + 0.5);
  timespec t0{}, t1{};
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (long i = 0; i < work; ++i) Iteration(o, i);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  double elapsed = static_cast<double>(t1.tv_sec - t0.tv_sec) + static_cast<double>(t1.tv_nsec - t0.tv_nsec) / 1e9;
  std::printf("{\"ops\": %ld}\n", o.iterations);
  std::printf("{\"metric\": \"smoke.loop_time\", \"value\": %.9f, \"unit\": \"s\", \"better\": \"lower\"}\n", elapsed);
  return 0;
}
