// Which user-space functions the ufunc probe traces: globs matched against
// the symbols of the workload binary and its shared libraries, each function
// with the object and file offset its uprobe attaches to and the name its
// metrics carry.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

namespace perfgate {

// Functions one probe may trace (PG_UFUNC_MAX_FUNCTIONS in bpf/ufunc.h).
constexpr size_t kUfuncMaxFunctions = 5000;

struct UfuncRequest {
  // Globs (fnmatch) over demangled C++ names or plain C names: "leveldb::*",
  // "compress*", "ns::F(int)". A glob matches a function when it matches its
  // name without parameters ("ns::F"), its full demangled signature
  // ("ns::F(int) const") or its raw symbol ("_ZN2ns1FEi").
  std::vector<std::string> globs;
  std::string binary;  // the executable (or shared object) the globs are looked up in first
  // More objects to search with every glob: paths, or names of the binary's
  // shared libraries ("libz.so.1", "libz").
  std::vector<std::string> libraries;
  // A running process: its /proc/PID/maps lists the shared libraries
  // (including dlopen()ed ones) and its executable is the default binary.
  pid_t pid = -1;
};

struct UfuncFunction {
  std::string object;        // path of the ELF object the function is in
  uint64_t file_offset = 0;  // of its first instruction, in `object`
  std::string symbol;        // as in the symbol table
  std::string demangled;     // full demangled signature ("pgtest::Work(int)")
  std::string metric_name;   // "<symbol>" of ufunc.<symbol>.latency / .calls
};

// Resolves the request. Search order per glob: the binary, then `libraries`,
// then, only for a glob that matched nothing there, the binary's own shared
// libraries in load order; a glob without wildcards takes only the first
// object that defines it, as the dynamic linker would. Aliases (several
// matching names at one address) are traced once.
// Throws InputError (naming the probe and the glob) when a glob matches
// nothing, and when the globs together match more than kUfuncMaxFunctions.
std::vector<UfuncFunction> ResolveUfuncFunctions(const UfuncRequest& request);

// Whether `glob` matches a function with this raw symbol (see UfuncRequest::globs).
bool UfuncGlobMatches(const std::string& glob, const std::string& symbol);

// The metric-name form of a function name: characters the suite's metric
// names do not allow become '_' (runs of them one '_'), "(anonymous
// namespace)" becomes "anonymous", '.' of clone suffixes becomes '_'.
// "std::map<int, int>::find" -> "std::map<int_int>::find".
std::string UfuncMetricSymbol(const std::string& name);

// Names every function's metrics: the sanitized name without parameters and
// return type, plus a clone suffix ("foo_isra_0"). Functions whose names
// collide (C++ overloads, one name in two objects) are taken in order of
// object, then full demangled signature, and all but the first get "_2",
// "_3", ... appended: stable across rebuilds, since it depends on neither
// addresses nor symbol table order.
void AssignUfuncMetricNames(std::vector<UfuncFunction>& functions);

// The shared objects a dynamically linked `binary` loads, in load order, as
// resolved by its own dynamic loader (`interpreter --list binary`, what ldd
// does): the loader applies DT_RUNPATH/DT_RPATH with $ORIGIN, LD_LIBRARY_PATH,
// /etc/ld.so.cache, glibc-hwcaps subdirectories and the default directories
// exactly as it will when the workload starts, which a re-implementation of
// its search would only approximate. --list only maps and relocates: no code
// of the binary or its libraries runs. Throws InfraError when the loader fails.
std::vector<std::string> LoaderDependencies(const std::string& binary, const std::string& interpreter);

// The executable file-backed objects mapped into process `pid`, in address
// order, from /proc/PID/maps.
std::vector<std::string> MappedObjects(pid_t pid);

}  // namespace perfgate
