// The ufunc probe's user side without the kernel: reading functions and their
// file offsets from ELF objects, demangled names and globs, metric names, and
// resolving globs in the test workload and its shared library.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "base/error.h"
#include "harness/paths.h"
#include "probes/elf_symbols.h"
#include "probes/ufunc_targets.h"

// A function of this test binary whose load address the test can take.
extern "C" __attribute__((noinline, used)) void PerfgateUfuncUnitTarget() { asm volatile(""); }

namespace perfgate {
namespace {

namespace fs = std::filesystem;

const std::string kTarget = PERFGATE_UFUNC_TARGET;
const std::string kLibrary = PERFGATE_UFUNC_LIB;

const ElfFunction* FindSymbol(const ElfObject& object, const std::string& symbol) {
  for (const auto& f : object.functions)
    if (f.symbol == symbol) return &f;
  return nullptr;
}

// Where the kernel mapped `address` from: its mapping's file offset plus the
// distance from the mapping's start.
uint64_t RuntimeFileOffset(uintptr_t address) {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    std::istringstream fields(line);
    uintptr_t start = 0, end = 0;
    char dash = 0;
    std::string perms;
    uint64_t offset = 0;
    fields >> std::hex >> start >> dash >> end >> perms >> offset;
    if (address >= start && address < end) return address - start + offset;
  }
  return UINT64_MAX;
}

TEST(ElfSymbols, FileOffsetIsWhereTheKernelMapsTheFunctionFrom) {
  ElfObject self = ReadElfObject("/proc/self/exe");
  const ElfFunction* f = FindSymbol(self, "PerfgateUfuncUnitTarget");
  ASSERT_NE(f, nullptr);
  EXPECT_GT(f->size, 0u);
  EXPECT_TRUE(f->global);
  EXPECT_EQ(f->file_offset, RuntimeFileOffset(reinterpret_cast<uintptr_t>(&PerfgateUfuncUnitTarget)));
}

TEST(ElfSymbols, ReadsMangledFunctionsAndTheInterpreter) {
  ElfObject target = ReadElfObject(kTarget);
  EXPECT_FALSE(target.interpreter.empty());
  const ElfFunction* work = FindSymbol(target, "_ZN6pgtest4WorkEi");
  ASSERT_NE(work, nullptr);
  EXPECT_GT(work->size, 0u);
  // Undefined functions (imported from the library) are not the binary's.
  EXPECT_EQ(FindSymbol(target, "pgtest_lib_scale"), nullptr);
  EXPECT_NE(FindSymbol(ReadElfObject(kLibrary), "pgtest_lib_scale"), nullptr);
  for (size_t i = 1; i < target.functions.size(); ++i)
    ASSERT_LE(target.functions[i - 1].address, target.functions[i].address);
}

TEST(ElfSymbols, MissingAndNonElfFilesAreInputErrors) {
  for (const std::string& path :
       {std::string("/nonexistent/binary"), std::string(PERFGATE_SOURCE_DIR) + "/README.md"}) {
    try {
      ReadElfObject(path);
      FAIL() << path;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ExitCode::kBadInput);
      EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
    }
  }
}

TEST(ElfSymbols, DemanglesCxxAndLeavesCNamesAlone) {
  EXPECT_EQ(Demangle("_ZN6pgtest4WorkEi"), "pgtest::Work(int)");
  EXPECT_EQ(Demangle("compress2"), "compress2");
  EXPECT_EQ(Demangle("_Znot_a_mangled_name"), "_Znot_a_mangled_name");
}

TEST(ElfSymbols, BaseNameDropsReturnTypeParametersQualifiersAndClones) {
  EXPECT_EQ(FunctionBaseName("pgtest::Work(int)"), "pgtest::Work");
  EXPECT_EQ(FunctionBaseName("void ns::F<int>(int) const"), "ns::F<int>");
  EXPECT_EQ(FunctionBaseName("ns::C::Get() const &&"), "ns::C::Get");
  EXPECT_EQ(FunctionBaseName("ns::F(int (*)(int))"), "ns::F");
  EXPECT_EQ(FunctionBaseName("(anonymous namespace)::Helper(int)"), "(anonymous namespace)::Helper");
  EXPECT_EQ(FunctionBaseName("std::vector<int, std::allocator<int> >::push_back(int const&)"),
            "std::vector<int, std::allocator<int> >::push_back");
  EXPECT_EQ(FunctionBaseName("ns::C::operator()(int) const"), "ns::C::operator()");
  EXPECT_EQ(FunctionBaseName("ns::operator<<(std::ostream&, ns::X const&)"), "ns::operator<<");
  EXPECT_EQ(FunctionBaseName("bool ns::operator< <int>(ns::X<int> const&)"), "ns::operator< <int>");
  EXPECT_EQ(FunctionBaseName("operator new(unsigned long)"), "operator new");
  EXPECT_EQ(FunctionBaseName("ns::F(int)::{lambda(int)#1}::operator()(int) const"),
            "ns::F(int)::{lambda(int)#1}::operator()");
  EXPECT_EQ(FunctionBaseName("ns::F(int) [clone .isra.0]"), "ns::F");
  EXPECT_EQ(FunctionBaseName("ns::GetEnv[abi:cxx11](llvm::StringRef)"), "ns::GetEnv");
  EXPECT_EQ(FunctionBaseName("compress2"), "compress2");
  EXPECT_EQ(FunctionBaseName("deflate_slow.constprop.0"), "deflate_slow");
}

TEST(ElfSymbols, CloneSuffixInSymbolForm) {
  EXPECT_EQ(CloneSuffix("ns::F(int) [clone .isra.0]"), ".isra.0");
  EXPECT_EQ(CloneSuffix("ns::F(int) [clone .isra.0] [clone .part.1]"), ".isra.0.part.1");
  EXPECT_EQ(CloneSuffix("deflate_slow.constprop.0"), ".constprop.0");
  EXPECT_EQ(CloneSuffix("ns::F(int)"), "");
  EXPECT_EQ(CloneSuffix("compress2"), "");
}

TEST(UfuncGlob, MatchesNameWithoutParametersSignatureOrSymbol) {
  const std::string work = "_ZN6pgtest4WorkEi";
  EXPECT_TRUE(UfuncGlobMatches("pgtest::*", work));
  EXPECT_TRUE(UfuncGlobMatches("pgtest::Work", work));
  EXPECT_TRUE(UfuncGlobMatches("pgtest::Work(int)", work));
  EXPECT_TRUE(UfuncGlobMatches("_ZN6pgtest*", work));
  EXPECT_TRUE(UfuncGlobMatches("*::Wor?", work));
  EXPECT_FALSE(UfuncGlobMatches("pgtest::Wor", work));
  EXPECT_FALSE(UfuncGlobMatches("pgtest::Work(double)", work));
  EXPECT_FALSE(UfuncGlobMatches("leveldb::*", work));
  EXPECT_TRUE(UfuncGlobMatches("compress*", "compress2"));
  EXPECT_FALSE(UfuncGlobMatches("compress*", "uncompress"));
}

TEST(UfuncMetricName, KeepsTheMetricCharsetAndReplacesTheRest) {
  EXPECT_EQ(UfuncMetricSymbol("pgtest::Work"), "pgtest::Work");
  EXPECT_EQ(UfuncMetricSymbol("std::map<int, int>::find"), "std::map<int_int>::find");
  EXPECT_EQ(UfuncMetricSymbol("(anonymous namespace)::Helper"), "anonymous::Helper");
  EXPECT_EQ(UfuncMetricSymbol("ns::C::operator()"), "ns::C::operator_");
  EXPECT_EQ(UfuncMetricSymbol("ns::C::~C"), "ns::C::_C");
  EXPECT_EQ(UfuncMetricSymbol("deflate_slow.constprop.0"), "deflate_slow_constprop_0");
  EXPECT_EQ(UfuncMetricSymbol("ns::F(int)::{lambda(int)#1}::operator()"), "ns::F_int_::_lambda_int_1_::operator_");
  EXPECT_EQ(UfuncMetricSymbol(""), "_");
}

TEST(UfuncMetricName, OverloadsGetSuffixesInSignatureOrder) {
  std::vector<UfuncFunction> functions = {
      {"/bin/app", 0x30, "_ZN2ns1FEd", "ns::F(double)", ""},
      {"/bin/app", 0x10, "_ZN2ns1FEi", "ns::F(int)", ""},
      {"/bin/app", 0x20, "_ZN2ns1GEv", "ns::G()", ""},
      {"/lib/libx.so", 0x10, "_ZN2ns1GEv", "ns::G()", ""},
      {"/bin/app", 0x40, "_ZN2ns1FEi.isra.0", "ns::F(int) [clone .isra.0]", ""},
  };
  AssignUfuncMetricNames(functions);
  std::map<std::string, std::string> names;  // object:demangled -> metric name
  for (const auto& f : functions) names[f.object + ":" + f.demangled] = f.metric_name;
  EXPECT_EQ(names["/bin/app:ns::F(double)"], "ns::F");  // "(double)" sorts before "(int)"
  EXPECT_EQ(names["/bin/app:ns::F(int)"], "ns::F_2");
  EXPECT_EQ(names["/bin/app:ns::F(int) [clone .isra.0]"], "ns::F_isra_0");
  EXPECT_EQ(names["/bin/app:ns::G()"], "ns::G");
  EXPECT_EQ(names["/lib/libx.so:ns::G()"], "ns::G_2");
}

TEST(UfuncResolve, FindsNamespacedFunctionsInTheBinary) {
  UfuncRequest request;
  request.binary = kTarget;
  request.globs = {"pgtest::*"};
  std::set<std::string> names;
  for (const auto& f : ResolveUfuncFunctions(request)) {
    EXPECT_EQ(f.object, kTarget);
    names.insert(f.metric_name);
  }
  EXPECT_EQ(names,
            (std::set<std::string>{"pgtest::Overload", "pgtest::Overload_2", "pgtest::Recurse", "pgtest::Work"}));
}

TEST(UfuncResolve, FindsLibraryFunctionsThroughTheDynamicLoader) {
  std::vector<std::string> deps = LoaderDependencies(kTarget, ReadElfObject(kTarget).interpreter);
  bool has_library = false, has_libc = false;
  for (const auto& path : deps) {
    has_library |= fs::equivalent(path, kLibrary);
    has_libc |= fs::path(path).filename().string().rfind("libc.so", 0) == 0;
  }
  EXPECT_TRUE(has_library);
  EXPECT_TRUE(has_libc);

  UfuncRequest request;
  request.binary = kTarget;
  request.globs = {"pgtest_lib_*", "pglib::Step"};
  auto functions = ResolveUfuncFunctions(request);
  ASSERT_EQ(functions.size(), 2u);
  for (const auto& f : functions) EXPECT_TRUE(fs::equivalent(f.object, kLibrary)) << f.object;
}

TEST(UfuncResolve, LibrariesByPathOrByName) {
  for (const std::string& library : {kLibrary, std::string("libpg_ufunc_lib")}) {
    UfuncRequest request;
    request.binary = kTarget;
    request.libraries = {library};
    request.globs = {"pglib::*"};
    auto functions = ResolveUfuncFunctions(request);
    ASSERT_EQ(functions.size(), 1u) << library;
    EXPECT_EQ(functions[0].metric_name, "pglib::Step");
  }
  UfuncRequest request;
  request.binary = kTarget;
  request.libraries = {"libnot_a_dependency"};
  request.globs = {"pglib::*"};
  EXPECT_THROW(ResolveUfuncFunctions(request), Error);
}

TEST(UfuncResolve, AnExactNameTakesTheFirstDefinitionOnly) {
  // The binary's own main, not a main of any library.
  UfuncRequest request;
  request.binary = kTarget;
  request.libraries = {kLibrary};
  request.globs = {"main"};
  auto functions = ResolveUfuncFunctions(request);
  ASSERT_EQ(functions.size(), 1u);
  EXPECT_EQ(functions[0].object, kTarget);
}

TEST(UfuncResolve, AGlobMatchingNothingIsAnInputErrorNamingIt) {
  UfuncRequest request;
  request.binary = kTarget;
  request.globs = {"pgtest::*", "nosuch::Function*"};
  try {
    ResolveUfuncFunctions(request);
    FAIL() << "resolved a glob that matches nothing";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kBadInput);
    std::string message = e.what();
    EXPECT_NE(message.find("probe ufunc"), std::string::npos) << message;
    EXPECT_NE(message.find("\"nosuch::Function*\""), std::string::npos) << message;
    EXPECT_NE(message.find("shared libraries"), std::string::npos) << message;
  }
}

TEST(UfuncResolve, TooManyMatchesIsAnInputError) {
  // This test binary (GoogleTest, perfgate's stages), libc and libstdc++
  // define far more functions than the limit.
  UfuncRequest request;
  request.binary = "/proc/self/exe";
  request.globs = {"*"};
  request.libraries = {"libc", "libstdc++"};
  try {
    ResolveUfuncFunctions(request);
    FAIL() << "resolved more than " << kUfuncMaxFunctions << " functions";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kBadInput);
    EXPECT_NE(std::string(e.what()).find("more than 5000"), std::string::npos) << e.what();
  }
}

TEST(UfuncResolve, NoGlobsOrNoBinaryAreInputErrors) {
  UfuncRequest request;
  request.binary = kTarget;
  EXPECT_THROW(ResolveUfuncFunctions(request), Error);
  request.globs = {"main"};
  request.binary.clear();
  EXPECT_THROW(ResolveUfuncFunctions(request), Error);
}

TEST(UfuncResolve, APidSearchesItsExecutableAndMappedLibraries) {
  std::vector<std::string> mapped = MappedObjects(getpid());
  bool has_libc = false;
  for (const auto& path : mapped) has_libc |= fs::path(path).filename().string().rfind("libc.so", 0) == 0;
  EXPECT_TRUE(has_libc);
  UfuncRequest request;
  request.pid = getpid();
  request.globs = {"PerfgateUfuncUnitTarget", "getppid"};
  auto functions = ResolveUfuncFunctions(request);
  ASSERT_EQ(functions.size(), 2u);
  EXPECT_TRUE(fs::equivalent(functions[0].object, "/proc/self/exe")) << functions[0].object;
  EXPECT_EQ(fs::path(functions[1].object).filename().string().rfind("libc.so", 0), 0u) << functions[1].object;
}

}  // namespace
}  // namespace perfgate
