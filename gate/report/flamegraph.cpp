#include "report/flamegraph.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <memory>
#include <string_view>

#include "base/escape.h"
#include "report/format.h"

namespace perfgate {
namespace {

constexpr size_t kNone = std::numeric_limits<size_t>::max();
// A tooltip shows this much of a name; a workload can make names of any length.
constexpr size_t kMaxTooltipBytes = 400;
constexpr double kFontSize = 11;
constexpr double kCharWidth = 6.7;    // monospace at kFontSize, a little generous
constexpr double kLegendHeight = 36;  // two lines: swatches, then what was left out
constexpr const char* kNeutralFill = "#e8e8e8";

// The prefix tree of a profile's stacks: node 0 is the root, a parent's index
// is below its children's.
class StackTree {
 public:
  struct Node {
    std::string_view name;
    uint64_t weight = 0;
    int depth = 0;
    size_t parent = kNone;
    std::map<std::string_view, size_t> children;  // by name: the order frames are drawn in
  };

  explicit StackTree(const FoldedProfile& profile) {
    nodes_.push_back(Node{"all", 0, 0, kNone, {}});
    for (const auto& [stack, weight] : profile.stacks) {
      if (weight == 0) continue;
      size_t node = 0;
      nodes_[0].weight += weight;
      for (std::string_view frame : SplitStack(stack)) {
        auto it = nodes_[node].children.find(frame);
        size_t child;
        if (it == nodes_[node].children.end()) {
          child = nodes_.size();
          nodes_[node].children.emplace(frame, child);
          nodes_.push_back(Node{frame, 0, nodes_[node].depth + 1, node, {}});
        } else {
          child = it->second;
        }
        nodes_[child].weight += weight;
        node = child;
      }
    }
  }
  const Node& operator[](size_t i) const { return nodes_[i]; }
  size_t size() const { return nodes_.size(); }
  size_t Child(size_t node, std::string_view name) const {
    if (node == kNone) return kNone;
    auto it = nodes_[node].children.find(name);
    return it == nodes_[node].children.end() ? kNone : it->second;
  }

 private:
  std::vector<Node> nodes_;
};

std::string FlameNum(double v) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.1f", v);
  return buffer;
}

std::string Hex(int r, int g, int b) {
  char buffer[8];
  std::snprintf(buffer, sizeof buffer, "#%02x%02x%02x", std::clamp(r, 0, 255), std::clamp(g, 0, 255),
                std::clamp(b, 0, 255));
  return buffer;
}

// Three stable numbers in [0, 1) from a name, so a function keeps its shade
// from graph to graph (FlameGraph's --hash).
void NameHash(std::string_view name, double v[3]) {
  uint64_t h = 1469598103934665603ull;
  for (char c : name) h = (h ^ static_cast<uint8_t>(c)) * 1099511628211ull;
  for (int i = 0; i < 3; ++i) {
    v[i] = static_cast<double>((h >> (i * 16)) & 0xFFFF) / 65536.0;
  }
}

std::string KindFill(FrameKind kind, std::string_view name) {
  double v[3];
  NameHash(name, v);
  switch (kind) {
    case FrameKind::kUser:  // FlameGraph's "hot"
      return Hex(205 + static_cast<int>(50 * v[0]), static_cast<int>(100 + 130 * v[1]), static_cast<int>(55 * v[2]));
    case FrameKind::kKernel:  // FlameGraph's "aqua"
      return Hex(50 + static_cast<int>(60 * v[0]), 165 + static_cast<int>(55 * v[0]),
                 165 + static_cast<int>(55 * v[0]));
    case FrameKind::kUnknown:
      return Hex(180 + static_cast<int>(30 * v[0]), 180 + static_cast<int>(30 * v[0]),
                 180 + static_cast<int>(30 * v[0]));
  }
  return kNeutralFill;
}

// Red for growth, blue for shrinkage, white-grey for none; full colour at
// |delta| = max_abs.
std::string DeltaFill(double delta_pp, double max_abs_pp) {
  if (max_abs_pp <= 0 || std::fabs(delta_pp) < 1e-7) return kNeutralFill;
  double v = std::min(1.0, std::fabs(delta_pp) / max_abs_pp);
  int light = static_cast<int>(std::lround(225 * (1 - v)));
  return delta_pp > 0 ? Hex(255, light, light) : Hex(light, light, 255);
}

std::string WeightText(uint64_t weight, const std::string& unit) {
  if (unit == "ns") return FormatQuantity(static_cast<double>(weight), "ns");
  return std::to_string(weight) + (unit.empty() ? "" : " " + unit);
}

std::string PercentText(double share) { return FormatNumber(100 * share) + " %"; }

// The first max_chars characters of sanitized text, ".." marking a cut;
// "" when not even three fit.
std::string FitLabel(const std::string& text, size_t max_chars) {
  if (max_chars < 3) return "";
  size_t chars = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    if ((static_cast<uint8_t>(text[i]) & 0xC0) != 0x80) ++chars;
  }
  if (chars <= max_chars) return text;
  size_t keep = max_chars - 2, seen = 0, cut = 0;
  for (; cut < text.size(); ++cut) {
    if ((static_cast<uint8_t>(text[cut]) & 0xC0) != 0x80 && seen++ == keep) break;
  }
  return text.substr(0, cut) + "..";
}

std::string FrameTooltip(const FlameFrame& f, const FlameLayout& layout, const FoldedProfile& profile,
                         double denominator) {
  std::string name = f.depth == 0 ? "all" : Abbreviate(SanitizeText(FrameLabel(f.frame)), kMaxTooltipBytes);
  if (f.depth > 0 && f.kind != FrameKind::kUser) name += " (" + ToString(f.kind) + ")";
  std::string text = name + "\n" + WeightText(f.weight, profile.unit) + ", " +
                     PercentText(denominator > 0 ? static_cast<double>(f.weight) / denominator : 0);
  if (layout.differential) {
    text += "\nbaseline " + PercentText(f.baseline_share) + " \u2192 candidate " + PercentText(f.candidate_share) +
            " (" + (f.delta_pp >= 0 ? "+" : "") + FormatNumber(f.delta_pp) + " pp)";
  }
  return text;
}

std::string FlameSvgOpen(double width, double height, const std::string& label) {
  std::string w = FlameNum(width), h = FlameNum(height);
  return "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"flame\" width=\"" + w + "\" height=\"" + h +
         "\" viewBox=\"0 0 " + w + " " + h + "\" role=\"img\" aria-label=\"" + XmlAttributeEscape(label) +
         "\"><title>" + XmlEscape(label) + "</title>";
}

std::string Swatch(double x, const std::string& fill, const std::string& text) {
  return "<rect x=\"" + FlameNum(x) + "\" y=\"5\" width=\"12\" height=\"10\" fill=\"" + fill + "\"/><text x=\"" +
         FlameNum(x + 16) + "\" y=\"14\">" + XmlEscape(text) + "</text>";
}

std::string PrunedText(const FlameLayout& layout, const FlameGraphOptions& options) {
  if (layout.pruned == 0) return "";
  return std::to_string(layout.pruned) + " frames narrower than " + FormatNumber(100 * options.min_width_share) +
         " % (or beyond " + std::to_string(options.max_frames) + ") not drawn";
}

std::string RenderSvg(const FlameLayout& layout, const FoldedProfile& profile, const FlameGraphOptions& options,
                      const std::string& legend) {
  const double height = kLegendHeight + (layout.depth + 1) * options.frame_height + 2;
  const double denominator = static_cast<double>(ProfileDenominator(profile));
  std::string svg = FlameSvgOpen(options.width, height, options.label);
  svg += "<g font-family=\"monospace\" font-size=\"" + FlameNum(kFontSize) + "\" fill=\"#1f2937\">" + legend;
  for (const FlameFrame& f : layout.frames) {
    double y = height - 2 - (f.depth + 1) * options.frame_height;
    double w = std::max(f.width - 0.5, 0.1);
    svg += "<g><title>" + XmlEscape(FrameTooltip(f, layout, profile, denominator)) + "</title><rect x=\"" +
           FlameNum(f.x) + "\" y=\"" + FlameNum(y) + "\" width=\"" + FlameNum(w) + "\" height=\"" +
           FlameNum(options.frame_height - 1) + "\" fill=\"" + f.fill + "\"/>";
    std::string label = FitLabel(f.depth == 0 ? "all" : SanitizeText(FrameLabel(f.frame)),
                                 static_cast<size_t>(std::max(0.0, (w - 4) / kCharWidth)));
    if (!label.empty()) {
      svg += "<text x=\"" + FlameNum(f.x + 2) + "\" y=\"" + FlameNum(y + options.frame_height - 4.5) + "\">" +
             XmlEscape(label) + "</text>";
    }
    svg += "</g>";
  }
  return svg + "</g></svg>";
}

}  // namespace

FlameLayout LayoutFlameGraph(const FoldedProfile& candidate, const FoldedProfile* baseline,
                             const FlameGraphOptions& options) {
  FlameLayout layout;
  layout.differential = baseline != nullptr;
  StackTree tree(candidate);
  const uint64_t total = tree[0].weight;
  if (total == 0) return layout;

  // Which frames to draw: wide enough, and the widest max_frames of those.
  // A parent is never narrower than its child and sorts before it, so the
  // kept frames always hang together.
  std::vector<size_t> order;
  const double min_weight = options.min_width_share * static_cast<double>(total);
  for (size_t i = 1; i < tree.size(); ++i) {
    if (static_cast<double>(tree[i].weight) >= min_weight) order.push_back(i);
  }
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (tree[a].weight != tree[b].weight) return tree[a].weight > tree[b].weight;
    if (tree[a].depth != tree[b].depth) return tree[a].depth < tree[b].depth;
    return a < b;
  });
  const size_t room = options.max_frames > 0 ? options.max_frames - 1 : 0;
  if (order.size() > room) order.resize(room);
  std::vector<bool> kept(tree.size(), false);
  kept[0] = true;
  for (size_t i : order) kept[i] = true;
  layout.pruned = tree.size() - 1 - order.size();

  // The same stack prefix in the baseline, for the differential colours.
  std::unique_ptr<StackTree> base;
  double base_denominator = 0;
  const double denominator = static_cast<double>(ProfileDenominator(candidate));
  std::vector<size_t> in_base;
  if (baseline) {
    base = std::make_unique<StackTree>(*baseline);
    base_denominator = static_cast<double>(ProfileDenominator(*baseline));
    in_base.assign(tree.size(), kNone);
    in_base[0] = 0;
  }

  // Depth-first in name order; x of a child is where its older siblings end.
  const double scale = options.width / static_cast<double>(total);
  std::vector<std::pair<size_t, double>> todo = {{0, 0.0}};
  while (!todo.empty()) {
    auto [node, x] = todo.back();
    todo.pop_back();
    FlameFrame f;
    f.frame = std::string(tree[node].name);
    f.kind = node == 0 ? FrameKind::kUser : FrameKindOf(f.frame);
    f.depth = tree[node].depth;
    f.weight = tree[node].weight;
    f.x = x;
    f.width = static_cast<double>(f.weight) * scale;
    if (baseline) {
      if (node != 0) in_base[node] = base->Child(in_base[tree[node].parent], tree[node].name);
      uint64_t base_weight = in_base[node] == kNone ? 0 : (*base)[in_base[node]].weight;
      f.baseline_share = base_denominator > 0 ? static_cast<double>(base_weight) / base_denominator : 0;
      f.candidate_share = denominator > 0 ? static_cast<double>(f.weight) / denominator : 0;
      f.delta_pp = 100 * (f.candidate_share - f.baseline_share);
      if (node != 0) layout.max_abs_delta_pp = std::max(layout.max_abs_delta_pp, std::fabs(f.delta_pp));
    } else {
      f.fill = node == 0 ? kNeutralFill : KindFill(f.kind, f.frame);
    }
    layout.depth = std::max(layout.depth, f.depth);
    layout.frames.push_back(std::move(f));
    // Children pushed in reverse so they pop (and are drawn) in name order.
    std::vector<std::pair<size_t, double>> children;
    double offset = x;
    for (const auto& [name, child] : tree[node].children) {
      if (kept[child]) children.emplace_back(child, offset);
      offset += static_cast<double>(tree[child].weight) * scale;
    }
    todo.insert(todo.end(), children.rbegin(), children.rend());
  }

  if (baseline) {
    for (FlameFrame& f : layout.frames) f.fill = DeltaFill(f.depth == 0 ? 0 : f.delta_pp, layout.max_abs_delta_pp);
    // Baseline stacks whose prefix the candidate never reached: not drawn, said.
    std::vector<size_t> in_candidate(base->size(), kNone);
    in_candidate[0] = 0;
    uint64_t missing = 0;
    for (size_t i = 1; i < base->size(); ++i) {
      size_t parent = in_candidate[(*base)[i].parent];
      if (parent == kNone) continue;
      in_candidate[i] = tree.Child(parent, (*base)[i].name);
      if (in_candidate[i] == kNone) missing += (*base)[i].weight;
    }
    layout.baseline_only_share = base_denominator > 0 ? static_cast<double>(missing) / base_denominator : 0;
  }
  return layout;
}

std::string FlameGraphSvg(const FoldedProfile& profile, const FlameGraphOptions& options) {
  FlameLayout layout = LayoutFlameGraph(profile, nullptr, options);
  if (layout.frames.empty()) return "";
  std::string legend = Swatch(0, KindFill(FrameKind::kUser, "user"), "user") +
                       Swatch(60, KindFill(FrameKind::kKernel, "kernel"), "kernel") +
                       Swatch(132, KindFill(FrameKind::kUnknown, "?"), "unknown");
  std::string pruned = PrunedText(layout, options);
  if (!pruned.empty()) legend += "<text x=\"0\" y=\"30\">" + XmlEscape(pruned) + "</text>";
  return RenderSvg(layout, profile, options, legend);
}

std::string DifferentialFlameGraphSvg(const FoldedProfile& baseline, const FoldedProfile& candidate,
                                      const FlameGraphOptions& options) {
  FlameLayout layout = LayoutFlameGraph(candidate, &baseline, options);
  if (layout.frames.empty()) return "";
  std::string scale = "full colour: \u00b1" + FormatNumber(layout.max_abs_delta_pp) + " pp of each side's total";
  std::string legend = Swatch(0, DeltaFill(1, 1), "share grew") + Swatch(110, DeltaFill(-1, 1), "share shrank") +
                       Swatch(230, kNeutralFill, "unchanged") + "<text x=\"330\" y=\"14\">" + XmlEscape(scale) +
                       "</text>";
  std::string right;
  if (layout.baseline_only_share > 0)
    right = PercentText(layout.baseline_only_share) + " of the baseline on stacks the candidate lacks, not drawn";
  std::string pruned = PrunedText(layout, options);
  if (!pruned.empty()) right += (right.empty() ? "" : "; ") + pruned;
  if (!right.empty()) legend += "<text x=\"0\" y=\"30\">" + XmlEscape(right) + "</text>";
  return RenderSvg(layout, candidate, options, legend);
}

}  // namespace perfgate
