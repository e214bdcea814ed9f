// pg-locks: lock contention of known size, for the futex and mmaplock probes.
//
//   --mode mutex  two threads take turns on one mutex, each holding it for
//                 --hold-us (asleep) and then sleeping --gap-us outside it.
//                 A thread tries the mutex on its turn only, which the other
//                 hands over through a pipe once it holds the mutex, so the
//                 one whose turn it is waits most of each hold, and every
//                 acquisition but the first waits exactly once: the holder
//                 never takes the mutex back first, so the lock's retries (and
//                 the instructions counted under --instrument) do not depend
//                 on how fast the waiter wakes. Each thread times its
//                 pthread_mutex_lock() calls with CLOCK_MONOTONIC; the sum is
//                 reported as locks.mutex_wait_time (ns), and the mutex's
//                 address as {"mutex_address": N}.
//   --mode mmap   one thread maps, touches and unmaps memory (mmap_lock taken
//                 for writing) while another reads /proc/self/maps (taken for
//                 reading, or the per-VMA locks where the kernel has them), as
//                 many times as the first maps.
//
// The threads signal their end through a pipe instead of being joined: a
// join waits in a futex too, and the only futex waits of the mutex mode are
// to be the mutex's. main ends in pthread_exit, so the process exits after
// the last thread has, never in the middle of a thread's own exit: the
// instructions it executes (counted under --instrument) do not depend on
// which thread ends last. --slowdown FACTOR multiplies the iterations while the
// reported operation count stays the same (a planted regression).
#include <fcntl.h>
#include <pthread.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

namespace {

struct Options {
  std::string mode;
  long iterations = 100;
  double slowdown = 1.0;
  long hold_us = 1000;
  long gap_us = 100;
  long map_kib = 64;
};

[[noreturn]] void Usage(const char* why) {
  std::fprintf(stderr,
               "pg-locks: %s\n"
               "usage: pg-locks --mode mutex|mmap [--iterations N] [--slowdown FACTOR] [--hold-us N] [--gap-us N]\n"
               "                [--map-kib N]\n",
               why);
  std::exit(2);
}

double ParseNumber(const std::string& flag, const char* text, double lo, double hi) {
  char* end = nullptr;
  double v = std::strtod(text, &end);
  if (end == text || *end != '\0' || !(v >= lo && v <= hi)) Usage(("bad value for " + flag).c_str());
  return v;
}

Options Parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string flag = argv[i];
    if (i + 1 >= argc) Usage(("missing value for " + flag).c_str());
    const char* value = argv[++i];
    if (flag == "--mode")
      o.mode = value;
    else if (flag == "--iterations")
      o.iterations = static_cast<long>(ParseNumber(flag, value, 1, 1e9));
    else if (flag == "--slowdown")
      o.slowdown = ParseNumber(flag, value, 0.01, 100);
    else if (flag == "--hold-us")
      o.hold_us = static_cast<long>(ParseNumber(flag, value, 0, 1e7));
    else if (flag == "--gap-us")
      o.gap_us = static_cast<long>(ParseNumber(flag, value, 0, 1e7));
    else if (flag == "--map-kib")
      o.map_kib = static_cast<long>(ParseNumber(flag, value, 4, 1 << 20));
    else
      Usage(("unknown option " + flag).c_str());
  }
  if (o.mode != "mutex" && o.mode != "mmap") Usage("--mode must be mutex or mmap");
  return o;
}

int64_t NowNs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

void SleepUs(long us) {
  if (us <= 0) return;
  timespec ts{us / 1000000, (us % 1000000) * 1000};
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
}

[[noreturn]] void Die(const char* what) {
  std::fprintf(stderr, "pg-locks: %s: %s\n", what, std::strerror(errno));
  std::exit(1);
}

// Runs `body` in `n` detached threads and returns when all have finished,
// without a futex wait of its own (see the top of the file).
template <class Body>
void RunThreads(int n, Body body) {
  int done[2];
  if (pipe(done) != 0) Die("pipe");
  for (int i = 0; i < n; ++i) {
    std::thread([&body, i, fd = done[1]] {
      body(i);
      char byte = 1;
      while (write(fd, &byte, 1) < 0 && errno == EINTR) {
      }
    }).detach();
  }
  for (int finished = 0; finished < n;) {
    char byte;
    ssize_t got = read(done[0], &byte, 1);
    if (got == 1)
      ++finished;
    else if (got < 0 && errno != EINTR)
      Die("read");
  }
  close(done[0]);
  close(done[1]);
}

pthread_mutex_t g_mutex = PTHREAD_MUTEX_INITIALIZER;

void ReadByte(int fd) {
  char byte;
  ssize_t got;
  while ((got = read(fd, &byte, 1)) < 0 && errno == EINTR) {
  }
  if (got != 1) Die("read a turn");
}

void WriteByte(int fd) {
  char byte = 1;
  ssize_t put;
  while ((put = write(fd, &byte, 1)) < 0 && errno == EINTR) {
  }
  if (put != 1) Die("write a turn");
}

void Mutex(const Options& o, long work) {
  std::atomic<int64_t> wait_ns{0};
  int turn[2][2];  // thread t reads its turns from turn[t][0]
  if (pipe(turn[0]) != 0 || pipe(turn[1]) != 0) Die("pipe");
  WriteByte(turn[0][1]);  // thread 0 goes first
  RunThreads(2, [&](int t) {
    int64_t waited = 0;
    for (long i = 0; i < work; ++i) {
      ReadByte(turn[t][0]);
      int64_t before = NowNs();
      pthread_mutex_lock(&g_mutex);
      waited += NowNs() - before;
      WriteByte(turn[1 - t][1]);  // the other's turn: it finds the mutex held
      SleepUs(o.hold_us);
      pthread_mutex_unlock(&g_mutex);
      SleepUs(o.gap_us);
    }
    wait_ns += waited;
  });
  for (auto& fds : turn) {
    close(fds[0]);
    close(fds[1]);
  }
  std::printf("{\"mutex_address\": %llu}\n", static_cast<unsigned long long>(reinterpret_cast<uintptr_t>(&g_mutex)));
  std::printf("{\"metric\": \"locks.mutex_wait_time\", \"value\": %lld, \"unit\": \"ns\", \"better\": \"lower\"}\n",
              static_cast<long long>(wait_ns.load()));
}

void Mmap(const Options& o, long work) {
  std::atomic<long> maps_reads{0};
  RunThreads(2, [&](int thread) {
    if (thread == 0) {
      const size_t bytes = static_cast<size_t>(o.map_kib) * 1024;
      const long page = sysconf(_SC_PAGESIZE);
      for (long i = 0; i < work; ++i) {
        void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) Die("mmap");
        for (size_t off = 0; off < bytes; off += static_cast<size_t>(page)) static_cast<volatile char*>(p)[off] = 1;
        if (munmap(p, bytes) != 0) Die("munmap");
      }
      return;
    }
    // As many reads as the other thread maps, rather than reads until it is
    // done: the count, and the instructions, do not follow the interleaving.
    char buffer[4096];
    for (long i = 0; i < std::max(work, 1L); ++i) {
      int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
      if (fd < 0) Die("open /proc/self/maps");
      while (read(fd, buffer, sizeof(buffer)) > 0) {
      }
      close(fd);
      ++maps_reads;
    }
  });
  std::printf("{\"metric\": \"locks.maps_reads\", \"value\": %ld, \"unit\": \"count\", \"better\": \"none\"}\n",
              maps_reads.load());
}

}  // namespace

int main(int argc, char** argv) {
  Options o = Parse(argc, argv);
  long work = static_cast<long>(static_cast<double>(o.iterations) * o.slowdown + 0.5);
  int64_t begin = NowNs();
  if (o.mode == "mutex")
    Mutex(o, work);
  else
    Mmap(o, work);
  std::printf("{\"ops\": %ld}\n", o.iterations);
  std::printf("{\"metric\": \"locks.loop_time\", \"value\": %.9f, \"unit\": \"s\", \"better\": \"lower\"}\n",
              static_cast<double>(NowNs() - begin) / 1e9);
  // The process exits (status 0, stdout flushed) once the threads have.
  pthread_exit(nullptr);
}
