#include "probes/ufunc_targets.h"

#include <fcntl.h>
#include <fnmatch.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>

#include "base/error.h"
#include "probes/elf_symbols.h"
#include "probes/features.h"
#include "probes/process_maps.h"

extern char** environ;

namespace perfgate {
namespace {

namespace fs = std::filesystem;

constexpr const char* kProbe = "probe ufunc: ";
constexpr int kLoaderTimeoutMs = 10'000;

bool HasWildcard(const std::string& glob) { return glob.find_first_of("*?[") != std::string::npos; }

std::string Quoted(const std::string& s) { return "\"" + s + "\""; }

// One name of a function, with everything a glob may match.
struct Names {
  std::string base;       // "ns::F"
  std::string cloned;     // "ns::F.isra.0" (== base for an original)
  std::string demangled;  // "ns::F(int) [clone .isra.0]"
};

Names NamesOf(const std::string& symbol) {
  Names n;
  n.demangled = Demangle(symbol);
  n.base = FunctionBaseName(n.demangled);
  n.cloned = n.base + CloneSuffix(n.demangled);
  return n;
}

bool Matches(const std::string& glob, const std::string& symbol, const Names& names) {
  for (const std::string* candidate : {&names.base, &names.cloned, &names.demangled, &symbol}) {
    if (fnmatch(glob.c_str(), candidate->c_str(), 0) == 0) return true;
  }
  return false;
}

// An ELF object read on first use; demangled names are computed once and
// shared by every glob.
class SearchedObject {
 public:
  explicit SearchedObject(std::string path) : path_(std::move(path)) {}
  const std::string& path() const { return path_; }
  const ElfObject& elf() {
    if (!elf_) elf_ = ReadElfObject(path_);
    return *elf_;
  }
  const Names& names(size_t i) {
    if (names_.size() != elf().functions.size()) names_.resize(elf().functions.size());
    if (!names_[i]) names_[i] = NamesOf(elf().functions[i].symbol);
    return *names_[i];
  }

 private:
  std::string path_;
  std::optional<ElfObject> elf_;
  std::vector<std::optional<Names>> names_;
};

// Which of several names at one address stands for the function: an exported
// one over a local alias, then the one with fewer leading underscores
// (memcpy over __memcpy), then the shorter, then the first in order.
bool PreferredAlias(const ElfFunction& a, const ElfFunction& b) {
  if (a.global != b.global) return a.global;
  size_t ua = a.symbol.find_first_not_of('_'), ub = b.symbol.find_first_not_of('_');
  if (ua != ub) return ua < ub;
  if (a.symbol.size() != b.symbol.size()) return a.symbol.size() < b.symbol.size();
  return a.symbol < b.symbol;
}

std::string Canonical(const std::string& path) {
  std::error_code ec;
  fs::path canonical = fs::weakly_canonical(path, ec);
  return ec ? path : canonical.string();
}

bool SameObject(const std::string& a, const std::string& b) {
  std::error_code ec;
  return a == b || fs::equivalent(a, b, ec);
}

// "libz.so.1" or "libz" names the dependency /lib/x86_64-linux-gnu/libz.so.1.
bool NamesLibrary(const std::string& name, const std::string& path) {
  std::string file = fs::path(path).filename().string();
  return file == name || file.rfind(name + ".so", 0) == 0 || file.rfind(name + ".", 0) == 0;
}

class Resolver {
 public:
  explicit Resolver(const UfuncRequest& request) : request_(request) {
    if (request.globs.empty()) throw InputError(std::string(kProbe) + "needs at least one glob in \"functions\"");
    binary_ = request.binary;
    if (binary_.empty() && request.pid >= 0) binary_ = ProcessExecutable(request.pid);
    if (binary_.empty())
      throw InputError(std::string(kProbe) +
                       "no binary to search: the workload is a shell command line; set parameter \"binary\"");
    objects_.emplace_back(binary_);
    for (const auto& library : request.libraries) {
      std::string path = library.find('/') != std::string::npos ? library : DependencyNamed(library);
      if (!fs::exists(path)) throw InputError(std::string(kProbe) + "library " + Quoted(library) + " does not exist");
      objects_.emplace_back(path);
    }
    explicit_count_ = objects_.size();
  }

  std::vector<UfuncFunction> Resolve() {
    for (const auto& glob : request_.globs) {
      if (glob.empty()) throw InputError(std::string(kProbe) + "an empty glob in \"functions\"");
      size_t found = Search(glob, 0, explicit_count_);
      if (found == 0) found = SearchDependencies(glob);
      if (found == 0)
        throw InputError(std::string(kProbe) + "no function matches " + Quoted(glob) + " in " + SearchedDescription());
      if (selected_.size() > kUfuncMaxFunctions) TooMany();
    }
    std::vector<UfuncFunction> out;
    for (auto& [key, entry] : selected_) {
      UfuncFunction f;
      f.object = objects_[key.first].path();
      f.file_offset = key.second;
      f.symbol = entry.function.symbol;
      f.demangled = objects_[key.first].names(entry.index).demangled;
      out.push_back(std::move(f));
    }
    AssignUfuncMetricNames(out);
    return out;
  }

 private:
  struct Selected {
    ElfFunction function;  // the preferred alias
    size_t index;          // of that alias in its object's function list
  };

  // Searches objects_[begin, end) for `glob`; returns the number of matches.
  size_t Search(const std::string& glob, size_t begin, size_t end) {
    size_t found = 0;
    for (size_t o = begin; o < end; ++o) {
      SearchedObject& object = objects_[o];
      const auto& functions = object.elf().functions;
      size_t in_object = 0;
      for (size_t i = 0; i < functions.size(); ++i) {
        if (!Matches(glob, functions[i].symbol, object.names(i))) continue;
        ++in_object;
        auto key = std::make_pair(o, functions[i].file_offset);
        auto it = selected_.find(key);
        if (it == selected_.end()) {
          selected_.emplace(key, Selected{functions[i], i});
        } else if (PreferredAlias(functions[i], it->second.function)) {
          it->second = Selected{functions[i], i};
        }
      }
      found += in_object;
      // Without wildcards the glob is one name, and the first definition in
      // search order is the one the program calls.
      if (in_object > 0 && !HasWildcard(glob)) break;
      if (selected_.size() > kUfuncMaxFunctions) TooMany();
    }
    return found;
  }

  size_t SearchDependencies(const std::string& glob) {
    if (!LoadDependencies()) return 0;
    return Search(glob, explicit_count_, objects_.size());
  }

  // Appends the binary's shared libraries to objects_ once; false when they
  // cannot be listed (the reason goes into the no-match error).
  bool LoadDependencies() {
    if (dependencies_loaded_) return dependency_error_.empty();
    dependencies_loaded_ = true;
    try {
      for (const auto& path : Dependencies()) {
        bool known = false;
        for (size_t o = 0; o < explicit_count_; ++o) known |= SameObject(objects_[o].path(), path);
        if (!known) objects_.emplace_back(path);
      }
    } catch (const Error& e) {
      dependency_error_ = e.what();
    }
    return dependency_error_.empty();
  }

  const std::vector<std::string>& Dependencies() {
    if (!dependencies_) {
      if (request_.pid >= 0) {
        std::vector<std::string> mapped;
        for (const auto& path : MappedObjects(request_.pid))
          if (!SameObject(path, binary_)) mapped.push_back(path);
        dependencies_ = std::move(mapped);
      } else {
        dependencies_ = LoaderDependencies(binary_, ReadElfObject(binary_).interpreter);
      }
    }
    return *dependencies_;
  }

  std::string DependencyNamed(const std::string& name) {
    std::vector<std::string> deps;
    try {
      deps = Dependencies();
    } catch (const Error& e) {
      throw InputError(std::string(kProbe) + "library " + Quoted(name) + ": not a path, and the libraries of " +
                       binary_ + " cannot be listed: " + e.what());
    }
    for (const auto& path : deps)
      if (NamesLibrary(name, path)) return path;
    std::string known;
    for (const auto& path : deps) known += (known.empty() ? "" : ", ") + fs::path(path).filename().string();
    throw InputError(std::string(kProbe) + "library " + Quoted(name) + " is not a path and not one of the libraries " +
                     binary_ + " loads (" + (known.empty() ? "none" : known) + ")");
  }

  std::string SearchedDescription() const {
    std::string text = binary_;
    for (size_t o = 1; o < explicit_count_; ++o) text += ", " + objects_[o].path();
    if (!dependency_error_.empty())
      return text + " (its shared libraries could not be listed: " + dependency_error_ + ")";
    size_t libraries = objects_.size() - explicit_count_;
    return text + " or its " + std::to_string(libraries) + " shared " + (libraries == 1 ? "library" : "libraries");
  }

  [[noreturn]] void TooMany() const {
    throw InputError(std::string(kProbe) + "the globs in \"functions\" match more than " +
                     std::to_string(kUfuncMaxFunctions) + " functions; narrow them");
  }

  static std::string ProcessExecutable(pid_t pid) {
    std::string link = "/proc/" + std::to_string(pid) + "/exe";
    std::error_code ec;
    fs::path target = fs::read_symlink(link, ec);
    if (ec) throw InputError(std::string(kProbe) + "process " + std::to_string(pid) + ": " + ec.message());
    // The path is in the process's mount namespace; the link itself always
    // reaches the right file.
    return fs::exists(target) ? target.string() : link;
  }

  const UfuncRequest& request_;
  std::string binary_;
  std::vector<SearchedObject> objects_;  // binary, explicit libraries, then dependencies
  size_t explicit_count_ = 0;
  bool dependencies_loaded_ = false;
  std::optional<std::vector<std::string>> dependencies_;
  std::string dependency_error_;
  std::map<std::pair<size_t, uint64_t>, Selected> selected_;  // (object, file offset)
};

// Runs argv, returning its stdout; stderr is discarded. Throws InfraError on
// a spawn failure, a timeout or a signal; `status` gets the exit code.
std::string Capture(const std::vector<std::string>& argv, int& status) {
  int out[2];
  if (pipe2(out, O_CLOEXEC) != 0) throw InfraError("pipe: " + ErrnoText(errno));
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = -1;
  int err = posix_spawn(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(out[1]);
  if (err != 0) {
    close(out[0]);
    throw InfraError(argv[0] + ": " + ErrnoText(err));
  }
  std::string text;
  timespec start{};
  clock_gettime(CLOCK_MONOTONIC, &start);
  bool timed_out = false;
  for (;;) {
    timespec now{};
    clock_gettime(CLOCK_MONOTONIC, &now);
    long elapsed_ms = (now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1'000'000;
    if (elapsed_ms >= kLoaderTimeoutMs) {
      timed_out = true;
      kill(pid, SIGKILL);
      break;
    }
    pollfd p{out[0], POLLIN, 0};
    int ready = poll(&p, 1, static_cast<int>(kLoaderTimeoutMs - elapsed_ms));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) continue;
    char buffer[4096];
    ssize_t n = read(out[0], buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    text.append(buffer, static_cast<size_t>(n));
  }
  close(out[0]);
  int wait_status = 0;
  while (waitpid(pid, &wait_status, 0) < 0 && errno == EINTR) {
  }
  if (timed_out) throw InfraError(argv[0] + ": no answer within " + std::to_string(kLoaderTimeoutMs / 1000) + " s");
  if (WIFSIGNALED(wait_status))
    throw InfraError(argv[0] + ": killed by signal " + std::to_string(WTERMSIG(wait_status)));
  status = WEXITSTATUS(wait_status);
  return text;
}

}  // namespace

std::vector<UfuncFunction> ResolveUfuncFunctions(const UfuncRequest& request) {
  try {
    return Resolver(request).Resolve();
  } catch (const Error& e) {
    // An unreadable binary or library: name the probe, as the suite's author
    // knows it.
    if (std::string(e.what()).rfind(kProbe, 0) == 0) throw;
    throw Error(e.code(), kProbe + std::string(e.what()));
  }
}

bool UfuncGlobMatches(const std::string& glob, const std::string& symbol) {
  return Matches(glob, symbol, NamesOf(symbol));
}

std::string UfuncMetricSymbol(const std::string& name) {
  static const std::string kAnonymous = "(anonymous namespace)";
  static const std::string kAllowed = "_:<>*/+-";
  std::string out;
  bool replaced = false;  // the last character written stands for replaced ones
  for (size_t i = 0; i < name.size(); ++i) {
    if (name.compare(i, kAnonymous.size(), kAnonymous) == 0) {
      out += "anonymous";
      replaced = false;
      i += kAnonymous.size() - 1;
      continue;
    }
    char c = name[i];
    if (std::isalnum(static_cast<unsigned char>(c)) || kAllowed.find(c) != std::string::npos) {
      out += c;
      replaced = false;
    } else if (!replaced) {
      out += '_';
      replaced = true;
    }
  }
  return out.empty() ? "_" : out;
}

void AssignUfuncMetricNames(std::vector<UfuncFunction>& functions) {
  // Object order is the order functions were found in: binary first.
  std::map<std::string, size_t> object_rank;
  for (const auto& f : functions) object_rank.emplace(f.object, object_rank.size());
  std::stable_sort(functions.begin(), functions.end(), [&](const UfuncFunction& a, const UfuncFunction& b) {
    size_t ra = object_rank.at(a.object), rb = object_rank.at(b.object);
    if (ra != rb) return ra < rb;
    if (a.demangled != b.demangled) return a.demangled < b.demangled;
    return a.symbol < b.symbol;
  });
  std::set<std::string> taken;
  for (auto& f : functions) {
    std::string base = UfuncMetricSymbol(FunctionBaseName(f.demangled) + CloneSuffix(f.demangled));
    std::string name = base;
    for (int n = 2; !taken.insert(name).second; ++n) name = base + "_" + std::to_string(n);
    f.metric_name = name;
  }
}

std::vector<std::string> LoaderDependencies(const std::string& binary, const std::string& interpreter) {
  // Statically linked: nothing to load.
  if (interpreter.empty()) return {};
  int status = 0;
  // The real path: the loader's $ORIGIN is the directory of the executable's
  // real path, and "/proc/self/exe" would be the loader itself.
  std::string text = Capture({interpreter, "--list", Canonical(binary)}, status);
  // Lines: "\tlibz.so.1 => /lib/x86_64-linux-gnu/libz.so.1 (0x...)", the
  // loader itself as "\t/lib64/ld-linux-x86-64.so.2 (0x...)", the vDSO
  // (no file) as "\tlinux-vdso.so.1 (0x...)", a missing library as "=> not found".
  std::vector<std::string> paths;
  std::set<std::string> seen;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    std::string path;
    size_t arrow = line.find(" => ");
    size_t paren = line.rfind(" (0x");
    if (arrow != std::string::npos) {
      path =
          line.substr(arrow + 4, paren == std::string::npos || paren < arrow ? std::string::npos : paren - arrow - 4);
    } else {
      size_t start = line.find_first_not_of(" \t");
      if (start != std::string::npos) path = line.substr(start, paren == std::string::npos ? paren : paren - start);
    }
    if (path.empty() || path[0] != '/' || SameObject(path, binary)) continue;
    if (seen.insert(Canonical(path)).second) paths.push_back(path);
  }
  if (status != 0 && paths.empty())
    throw InfraError(interpreter + " --list " + binary + " exited with status " + std::to_string(status));
  return paths;
}

std::vector<std::string> MappedObjects(pid_t pid) {
  std::string root = "/proc/" + std::to_string(pid);
  std::ifstream maps(root + "/maps");
  if (!maps) throw InputError(std::string(kProbe) + "process " + std::to_string(pid) + " does not exist");
  std::vector<std::string> paths;
  std::set<std::string> seen;
  for (const MappedRange& range : ParseProcessMaps(maps).ranges) {
    std::string path = range.path;
    if (path[0] != '/') continue;  // [vdso] and other pseudo files
    // A file replaced since it was mapped cannot be probed by path.
    if (path.size() > 10 && path.compare(path.size() - 10, 10, " (deleted)") == 0) continue;
    // Paths are in the process's mount namespace.
    if (!fs::exists(path)) path = root + "/root" + path;
    if (seen.insert(path).second) paths.push_back(path);
  }
  return paths;
}

}  // namespace perfgate
