#include "metrics/metric_declaration.h"

#include <algorithm>
#include <initializer_list>
#include <map>
#include <set>

#include "base/json_reader.h"

namespace perfgate {
namespace {

// The text of a declared name outside its placeholders: the more of it, the
// more specific the declaration.
size_t LiteralLength(std::string_view declared) {
  size_t length = 0;
  bool inside = false;
  for (char c : declared) {
    if (c == '<') inside = true;
    if (!inside) ++length;
    if (c == '>') inside = false;
  }
  return length;
}

// The text each placeholder of a matched declaration stands for ("<name>" -> "getppid").
using Filling = std::map<std::string, std::string, std::less<>>;

bool MatchesFrom(std::string_view declared, std::string_view name, Filling* filling = nullptr) {
  if (declared.empty()) return name.empty();
  if (declared.front() != '<') {
    return !name.empty() && name.front() == declared.front() &&
           MatchesFrom(declared.substr(1), name.substr(1), filling);
  }
  const size_t close = declared.find('>');
  if (close == std::string_view::npos) return declared == name;
  const std::string_view rest = declared.substr(close + 1);
  // A placeholder takes at least one character; the rest of the pattern has
  // few placeholders, so trying every split stays cheap.
  for (size_t taken = 1; taken <= name.size(); ++taken) {
    if (MatchesFrom(rest, name.substr(taken), filling)) {
      if (filling != nullptr) filling->emplace(declared.substr(0, close + 1), name.substr(0, taken));
      return true;
    }
  }
  return false;
}

// The placeholders of a declared name, "<name>" in "syscalls.count.<name>".
std::set<std::string> PlaceholdersOf(std::string_view declared) {
  std::set<std::string> out;
  for (size_t open = declared.find('<'); open != std::string_view::npos; open = declared.find('<', open + 1)) {
    const size_t close = declared.find('>', open);
    if (close == std::string_view::npos) break;
    out.emplace(declared.substr(open, close - open + 1));
  }
  return out;
}

bool IsPattern(std::string_view declared) { return declared.find('<') != std::string_view::npos; }

}  // namespace

std::string ToString(MetricRole role) {
  static constexpr const char* kNames[] = {"outcome", "kernel", "host"};  // in MetricRole's order
  return kNames[static_cast<int>(role)];
}

std::string ToString(Pricing pricing) {
  static constexpr const char* kNames[] = {"wait_time", "events", "latency_sum", "read_back", "unpriced"};
  return kNames[static_cast<int>(pricing)];
}

MetricPrice PerEvent(double seconds, std::string within, std::string unless) {
  return {.pricing = Pricing::kEvents, .event_s = seconds, .within = std::move(within), .unless = std::move(unless)};
}

MetricPrice Unpriced(std::string unless) { return {.unless = std::move(unless)}; }

MetricPrice NeverACause() { return {.hidden = true}; }

namespace {

MetricDeclaration Kernel(std::string name, MetricKind kind, std::string unit, MetricPrice price, std::string help) {
  return {.name = std::move(name),
          .kind = kind,
          .unit = std::move(unit),
          .better = Better::kLower,
          .role = MetricRole::kKernel,
          .price = std::move(price),
          .help = std::move(help)};
}

}  // namespace

MetricDeclaration KernelCounter(std::string name, std::string unit, MetricPrice price, std::string help) {
  return Kernel(std::move(name), MetricKind::kCounter, std::move(unit), std::move(price), std::move(help));
}

MetricDeclaration KernelScalar(std::string name, std::string unit, MetricPrice price, std::string help) {
  return Kernel(std::move(name), MetricKind::kScalar, std::move(unit), std::move(price), std::move(help));
}

MetricDeclaration OutcomeScalar(std::string name, std::string unit, Better better, std::string help) {
  return {.name = std::move(name),
          .kind = MetricKind::kScalar,
          .unit = std::move(unit),
          .better = better,
          .role = MetricRole::kOutcome,
          .help = std::move(help)};
}

MetricDeclaration HostMetric(std::string name, std::string unit, std::string help) {
  return {.name = std::move(name),
          .kind = MetricKind::kScalar,
          .unit = std::move(unit),
          .better = Better::kNone,
          .role = MetricRole::kHost,
          .help = std::move(help)};
}

bool DeclarationMatches(std::string_view declared, std::string_view name) {
  if (!IsPattern(declared)) return declared == name;
  return MatchesFrom(declared, name);
}

std::string FillPlaceholders(std::string_view declared, std::string_view name, std::string_view related) {
  if (!IsPattern(related)) return std::string(related);
  Filling filling;
  if (!MatchesFrom(declared, name, &filling)) return std::string(related);
  std::string out(related);
  for (const auto& [placeholder, text] : filling) {
    for (size_t at = out.find(placeholder); at != std::string::npos; at = out.find(placeholder, at + text.size())) {
      out.replace(at, placeholder.size(), text);
    }
  }
  return out;
}

MetricVocabulary::MetricVocabulary(std::vector<MetricDeclaration> declarations)
    : declarations_(std::move(declarations)) {}

void MetricVocabulary::Add(const std::vector<MetricDeclaration>& declarations) {
  declarations_.insert(declarations_.end(), declarations.begin(), declarations.end());
}

const MetricDeclaration* MetricVocabulary::Find(std::string_view name) const {
  const MetricDeclaration* best = nullptr;
  for (const MetricDeclaration& d : declarations_) {
    if (!IsPattern(d.name)) {
      if (d.name == name) return &d;
      continue;
    }
    if (!DeclarationMatches(d.name, name)) continue;
    if (best == nullptr || LiteralLength(d.name) > LiteralLength(best->name)) best = &d;
  }
  return best;
}

MetricRole MetricVocabulary::RoleOf(std::string_view name) const {
  const MetricDeclaration* d = Find(name);
  return d ? d->role : MetricRole::kOutcome;
}

namespace {

// The value of `key` among `names` (an enum's names in its order); fails naming the path.
template <typename Enum, size_t N>
Enum OneOf(const JsonObjectReader& r, const std::string& key, const char* const (&names)[N], Enum fallback) {
  if (!r.Has(key)) return fallback;
  const std::string text = r.String(key);
  for (size_t i = 0; i < N; ++i) {
    if (text == names[i]) return static_cast<Enum>(i);
  }
  std::string expected;
  for (size_t i = 0; i < N; ++i) expected += std::string(i ? ", " : "") + "\"" + names[i] + "\"";
  r.Fail(r.At(key), "\"" + text + "\" is not one of " + expected);
}

}  // namespace

MetricDeclaration DeclarationFromJson(const nlohmann::json& j, const std::string& file, const std::string& path) {
  static const char* const kKinds[] = {"scalar", "counter", "histogram"};
  static const char* const kBetter[] = {"lower", "higher", "none"};
  static const char* const kRoles[] = {"outcome", "kernel", "host"};
  static const char* const kPricings[] = {"wait_time", "events", "latency_sum", "read_back", "unpriced"};
  static const char* const kScales[] = {"none", "cpu", "wall"};
  const JsonObjectReader r(j, file, path, {"name", "kind", "unit", "better", "role", "price", "help"});
  MetricDeclaration d;
  d.name = r.String("name");
  d.kind = OneOf(r, "kind", kKinds, MetricKind::kScalar);
  d.unit = r.String("unit");
  d.better = OneOf(r, "better", kBetter, Better::kLower);
  d.role = OneOf(r, "role", kRoles, MetricRole::kOutcome);
  d.help = r.String("help", "");
  if (r.Has("price")) {
    const JsonObjectReader p(r.Get("price"), file, r.At("price"),
                             {"pricing", "event_s", "within", "unless", "hidden", "scale"});
    d.price.pricing = OneOf(p, "pricing", kPricings, Pricing::kUnpriced);
    d.price.event_s = p.Number("event_s", 0);
    d.price.within = p.String("within", "");
    d.price.unless = p.String("unless", "");
    d.price.hidden = p.Bool("hidden", false);
    d.price.scale = OneOf(p, "scale", kScales, PriceScale::kNone);
  }
  return d;
}

std::vector<std::string> DeclarationProblems(const std::vector<MetricDeclaration>& declarations) {
  std::vector<std::string> problems;
  std::set<std::string> names;
  for (const MetricDeclaration& d : declarations) names.insert(d.name);
  std::set<std::string> seen;
  auto declared = [&](const std::string& name) {
    return std::any_of(declarations.begin(), declarations.end(),
                       [&](const MetricDeclaration& other) { return DeclarationMatches(other.name, name); });
  };
  for (const MetricDeclaration& d : declarations) {
    const std::string at = "metric " + d.name + ": ";
    // Placeholders are text, not segments: check the name with them filled in.
    std::string filled;
    bool inside = false;
    for (char c : d.name) {
      if (c == '<') {
        inside = true;
        filled += "x";
      }
      if (!inside) filled += c;
      if (c == '>') inside = false;
    }
    if (!IsMetricName(filled)) problems.push_back(at + "not a metric name (<source>.<name>, lower case)");
    if (!seen.insert(d.name).second) problems.push_back(at + "declared twice");
    if (d.unit.empty()) problems.push_back(at + "no unit");
    const MetricPrice& p = d.price;
    if (d.role != MetricRole::kKernel && p.pricing != Pricing::kUnpriced)
      problems.push_back(at + "only kernel-side metrics are priced, this one is " + ToString(d.role));
    switch (p.pricing) {
      case Pricing::kWaitTime:
        if (d.kind != MetricKind::kCounter || !IsTimeUnit(d.unit))
          problems.push_back(at + "wait_time prices a counter of time, not a " + ToString(d.kind) + " of " + d.unit);
        break;
      case Pricing::kLatencySum:
        if (d.kind != MetricKind::kHistogram || !IsTimeUnit(d.unit))
          problems.push_back(at + "latency_sum prices a histogram of times, not a " + ToString(d.kind) + " of " +
                             d.unit);
        break;
      case Pricing::kEvents:
        if (d.kind != MetricKind::kCounter) problems.push_back(at + "events prices a counter");
        if (!(p.event_s > 0)) problems.push_back(at + "events priced without a cost per event");
        break;
      case Pricing::kReadBack:
        if (d.kind != MetricKind::kCounter || d.unit != "bytes")
          problems.push_back(at + "read_back prices a counter of bytes");
        if (p.within.empty()) problems.push_back(at + "read_back needs the I/O waits it is within");
        break;
      case Pricing::kUnpriced:
        if (p.event_s != 0 || p.scale != PriceScale::kNone)
          problems.push_back(at + "a cost or a scale on a metric the why does not price");
        break;
    }
    if (!p.within.empty() && !declared(p.within)) problems.push_back(at + "within " + p.within + ", not declared");
    if (!p.unless.empty() && !declared(p.unless)) problems.push_back(at + "unless " + p.unless + ", not declared");
    // A placeholder of `within` or `unless` is filled from the metric's own name.
    const std::set<std::string> own = PlaceholdersOf(d.name);
    for (const std::string* related : {&p.within, &p.unless}) {
      for (const std::string& placeholder : PlaceholdersOf(*related)) {
        if (!own.count(placeholder))
          problems.push_back(at + *related + " has " + placeholder + ", which its name has not");
      }
    }
    if (p.hidden && p.pricing != Pricing::kUnpriced) problems.push_back(at + "hidden, yet priced");
  }
  return problems;
}

std::vector<std::string> UndeclaredMetrics(const std::string& who, const std::vector<MetricDeclaration>& declared,
                                           const MetricSet& emitted) {
  const MetricVocabulary vocabulary(declared);
  std::vector<std::string> problems;
  for (const auto& [name, metric] : emitted) {
    const MetricDeclaration* d = vocabulary.Find(name);
    if (d == nullptr) {
      problems.push_back(who + " emits " + name + ", which it does not declare");
      continue;
    }
    if (d->kind != metric.kind)
      problems.push_back(who + " emits " + name + " as a " + ToString(metric.kind) + ", declared a " +
                         ToString(d->kind));
    if (d->unit == kUnitAsReported) continue;
    if (d->unit != metric.unit)
      problems.push_back(who + " emits " + name + " in " + metric.unit + ", declared in " + d->unit);
    if (d->better != metric.better)
      problems.push_back(who + " emits " + name + " with better " + ToString(metric.better) + ", declared " +
                         ToString(d->better));
  }
  return problems;
}

}  // namespace perfgate
