// Context switches and process creation in a tight loop, timed by itself:
// where an event that follows a task (a perf counter inherited by every child,
// a sched_switch hook) costs. Prints ns per operation so scripts can take
// medians.
//
//   task_churn switches N   two threads pass a byte back and forth through
//                           pipes N times (ns per round trip: two switches
//                           or more)
//   task_churn forks N      fork a child that exits at once, and reap it, N
//                           times (ns per fork)
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

namespace {

void Transfer(int from, int to) {
  char byte = 0;
  if (read(from, &byte, 1) != 1 || write(to, &byte, 1) != 1) {
    std::perror("task_churn: pipe");
    std::exit(1);
  }
}

void Switches(long n) {
  int ping[2], pong[2];
  if (pipe(ping) != 0 || pipe(pong) != 0) {
    std::perror("task_churn: pipe");
    std::exit(1);
  }
  std::thread echo([&] {
    for (long i = 0; i < n; ++i) Transfer(ping[0], pong[1]);
  });
  char byte = 0;
  for (long i = 0; i < n; ++i) {
    if (write(ping[1], &byte, 1) != 1 || read(pong[0], &byte, 1) != 1) {
      std::perror("task_churn: pipe");
      std::exit(1);
    }
  }
  echo.join();
}

void Forks(long n) {
  for (long i = 0; i < n; ++i) {
    const pid_t pid = fork();
    if (pid == 0) _exit(0);
    if (pid < 0 || waitpid(pid, nullptr, 0) != pid) {
      std::perror("task_churn: fork");
      std::exit(1);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  const long n = argc == 3 ? std::atol(argv[2]) : 0;
  const bool switches = argc == 3 && std::strcmp(argv[1], "switches") == 0;
  const bool forks = argc == 3 && std::strcmp(argv[1], "forks") == 0;
  if (n <= 0 || !(switches || forks)) {
    std::fprintf(stderr, "usage: %s switches|forks N (N > 0)\n", argv[0]);
    return 2;
  }
  const auto begin = std::chrono::steady_clock::now();
  if (switches)
    Switches(n);
  else
    Forks(n);
  const double ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - begin).count();
  std::printf("%.1f\n", ns / static_cast<double>(n));
  return 0;
}
