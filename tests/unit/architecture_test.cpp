// docs/ARCHITECTURE.md stays the map of the code: its stage table names
// every stage under gate/ with exactly the stages and libraries that stage's
// perfgate_stage(...) declaration links (as CMake resolved them at configure
// time, PERFGATE_STAGE_LINKS), and no stage includes the headers of a stage
// it does not depend on.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "harness/paths.h"

namespace perfgate {
namespace {

namespace fs = std::filesystem;

using Names = std::set<std::string>;

struct StageLinks {
  Names stages;     // pg_<stage> dependencies, without the prefix
  Names libraries;  // everything else it links, as CMake names it
};

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// One line per stage target, "stage<TAB>dep;dep;...", written by tests/CMakeLists.txt.
std::map<std::string, StageLinks> LinkGraph() {
  std::map<std::string, StageLinks> graph;
  std::istringstream in(ReadFile(PERFGATE_STAGE_LINKS));
  std::string line;
  while (std::getline(in, line)) {
    const auto tab = line.find('\t');
    if (tab == std::string::npos) continue;
    StageLinks& links = graph[line.substr(0, tab)];
    std::istringstream deps(line.substr(tab + 1));
    std::string dep;
    while (std::getline(deps, dep, ';')) {
      if (dep.empty()) continue;
      if (dep.rfind("pg_", 0) == 0)
        links.stages.insert(dep.substr(3));
      else
        links.libraries.insert(dep);
    }
  }
  return graph;
}

// The `names` in backticks of a table cell; "—" for none.
Names BacktickedNames(const std::string& cell) {
  Names names;
  static const std::regex kName("`([^`]+)`");
  for (std::sregex_iterator it(cell.begin(), cell.end(), kName), end; it != end; ++it) names.insert((*it)[1]);
  return names;
}

std::vector<std::string> Cells(const std::string& row) {
  std::vector<std::string> cells;
  std::string cell;
  // A row starts and ends with '|'; cells between.
  for (size_t i = 1; i < row.size(); ++i) {
    if (row[i] == '|') {
      cells.push_back(cell);
      cell.clear();
    } else {
      cell += row[i];
    }
  }
  return cells;
}

// The table under "## Stages" whose header is | stage | owns | depends on | links |.
std::map<std::string, StageLinks> DocumentedGraph(std::string* error) {
  std::map<std::string, StageLinks> graph;
  std::istringstream in(ReadFile(fs::path(PERFGATE_SOURCE_DIR) / "docs/ARCHITECTURE.md"));
  std::string line;
  bool in_section = false, in_table = false;
  while (std::getline(in, line)) {
    if (line.rfind("## ", 0) == 0) {
      in_section = line == "## Stages";
      in_table = false;
      continue;
    }
    if (!in_section) continue;
    if (line.rfind("| stage |", 0) == 0) {
      const auto header = Cells(line);
      if (header.size() != 4 || header[2].find("depends on") == std::string::npos ||
          header[3].find("links") == std::string::npos) {
        *error = "the stage table's header is not | stage | owns | depends on | links |: " + line;
        return {};
      }
      in_table = true;
      continue;
    }
    if (!in_table) continue;
    if (line.rfind("|", 0) != 0) break;
    if (line.rfind("| ---", 0) == 0) continue;
    const auto cells = Cells(line);
    const Names stage = BacktickedNames(cells.empty() ? "" : cells[0]);
    if (cells.size() != 4 || stage.size() != 1) {
      *error = "a row of the stage table is not | `stage` | owns | `deps` | `libraries` |: " + line;
      return {};
    }
    graph[*stage.begin()] = {BacktickedNames(cells[2]), BacktickedNames(cells[3])};
  }
  if (graph.empty()) *error = "no stage table (| stage | owns | depends on | links |) under \"## Stages\"";
  return graph;
}

std::string Difference(const Names& documented, const Names& linked) {
  std::string out;
  for (const auto& n : linked)
    if (!documented.count(n)) out += " `" + n + "` is linked but not listed;";
  for (const auto& n : documented)
    if (!linked.count(n)) out += " `" + n + "` is listed but not linked;";
  return out;
}

TEST(Architecture, StageTableMatchesTheStagesLinkGraph) {
  std::string error;
  const auto documented = DocumentedGraph(&error);
  ASSERT_TRUE(error.empty()) << "docs/ARCHITECTURE.md: " << error;
  const auto linked = LinkGraph();
  ASSERT_FALSE(linked.empty()) << PERFGATE_STAGE_LINKS << ": no stage targets";
  for (const auto& [stage, links] : linked) {
    const auto row = documented.find(stage);
    if (row == documented.end()) {
      ADD_FAILURE() << "stage `" << stage << "` (pg_" << stage << " in CMakeLists.txt) has no row in the stage table "
                    << "of docs/ARCHITECTURE.md";
      continue;
    }
    EXPECT_EQ(Difference(row->second.stages, links.stages), "")
        << "stage `" << stage << "`: docs/ARCHITECTURE.md's \"depends on\" differs from perfgate_stage(" << stage
        << " DEPS ...) in CMakeLists.txt";
    EXPECT_EQ(Difference(row->second.libraries, links.libraries), "")
        << "stage `" << stage << "`: docs/ARCHITECTURE.md's \"links\" differs from perfgate_stage(" << stage
        << " DEPS ...) in CMakeLists.txt";
  }
  for (const auto& [stage, links] : documented) {
    EXPECT_TRUE(linked.count(stage)) << "docs/ARCHITECTURE.md has a row for stage `" << stage
                                     << "`, which CMakeLists.txt does not declare (perfgate_stage)";
  }
}

TEST(Architecture, EveryFolderOfGateIsAStage) {
  const auto linked = LinkGraph();
  for (const auto& entry : fs::directory_iterator(fs::path(PERFGATE_SOURCE_DIR) / "gate")) {
    if (!entry.is_directory()) continue;
    const std::string folder = entry.path().filename();
    EXPECT_TRUE(linked.count(folder)) << "gate/" << folder << "/ is not declared with perfgate_stage in CMakeLists.txt";
  }
}

// What a stage may include: its own headers and those of every stage below
// it, through its dependencies.
Names Reachable(const std::map<std::string, StageLinks>& graph, const std::string& stage) {
  Names seen;
  std::vector<std::string> todo{stage};
  while (!todo.empty()) {
    const std::string s = todo.back();
    todo.pop_back();
    const auto it = graph.find(s);
    if (it == graph.end()) continue;
    for (const auto& dep : it->second.stages)
      if (seen.insert(dep).second) todo.push_back(dep);
  }
  return seen;
}

TEST(Architecture, StagesIncludeOnlyTheHeadersOfStagesTheyDependOn) {
  const auto graph = LinkGraph();
  static const std::regex kInclude(R"re(#include\s+"(\w+)/[^"]+")re");
  for (const auto& [stage, links] : graph) {
    const Names allowed = Reachable(graph, stage);
    const fs::path dir = fs::path(PERFGATE_SOURCE_DIR) / "gate" / stage;
    if (!fs::is_directory(dir)) continue;
    for (const auto& entry : fs::directory_iterator(dir)) {
      const std::string text = ReadFile(entry.path());
      for (std::sregex_iterator it(text.begin(), text.end(), kInclude), end; it != end; ++it) {
        const std::string included = (*it)[1];
        if (included == stage || !graph.count(included)) continue;
        EXPECT_TRUE(allowed.count(included))
            << "gate/" << stage << "/" << entry.path().filename().string() << " includes " << (*it)[0]
            << ", but stage `" << stage << "` does not depend on `" << included << "` (CMakeLists.txt)";
      }
    }
  }
}

// A file of gate/ longer than this does more than one job: split it by
// job, as compare/ is. Data tables (declarations, a stylesheet) are the
// exception, named here.
constexpr size_t kMaxLines = 600;
const Names kDataTables = {};

TEST(Architecture, NoFileOfGateIsLongerThanItsJobs) {
  for (const auto& entry : fs::recursive_directory_iterator(fs::path(PERFGATE_SOURCE_DIR) / "gate")) {
    const std::string name = entry.path().filename();
    if (!entry.is_regular_file() || !(name.ends_with(".cpp") || name.ends_with(".h"))) continue;
    const std::string relative = fs::relative(entry.path(), PERFGATE_SOURCE_DIR).string();
    if (kDataTables.count(relative)) continue;
    const std::string text = ReadFile(entry.path());
    const auto lines = static_cast<size_t>(std::count(text.begin(), text.end(), '\n'));
    EXPECT_LE(lines, kMaxLines) << relative << " has " << lines << " lines: split it by job";
  }
}

}  // namespace
}  // namespace perfgate
