// Flame graphs of folded stacks (metrics/evidence.h) as inline SVG for the
// HTML report: no script, presentation attributes only (the report's CSP
// forbids style attributes), full names, weights and shares in <title>
// tooltips so they read without JavaScript. Every frame name is workload
// text and is escaped.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "metrics/evidence.h"
#include "metrics/frames.h"

namespace perfgate {

struct FlameGraphOptions {
  double width = 1180;       // pixels
  double frame_height = 16;  // pixels per stack level
  // Frames narrower than this share of the whole graph are not drawn (they
  // are counted): they could show no label and would bloat the page.
  double min_width_share = 0.001;
  // At most this many frames drawn; the narrowest go first.
  size_t max_frames = 2000;
  std::string label;  // the graph's accessible name and title
};

// One drawn frame. Root ("all") is depth 0, at the bottom of the graph.
struct FlameFrame {
  std::string frame;  // as in the folded stacks; "all" for the root
  FrameKind kind = FrameKind::kUser;
  int depth = 0;
  uint64_t weight = 0;  // inclusive, candidate
  double x = 0;         // pixels from the left
  double width = 0;     // pixels
  std::string fill;     // "#rrggbb"
  // Differential graphs: inclusive shares of the same stack prefix on each
  // side (0..1) and the change in percentage points.
  double baseline_share = 0;
  double candidate_share = 0;
  double delta_pp = 0;
};

struct FlameLayout {
  std::vector<FlameFrame> frames;  // parents before children; root first
  size_t pruned = 0;               // frames not drawn (too narrow, or over max_frames)
  int depth = 0;                   // deepest drawn level
  bool differential = false;
  double max_abs_delta_pp = 0;  // the change drawn at full colour
  // Share of the baseline's weight below the first frame at which its stack
  // leaves every candidate stack: what the differential graph cannot draw.
  double baseline_only_share = 0;
};

// The frames of `candidate` laid out as a flame graph; with `baseline`,
// coloured by the change of each frame's share (red grew, blue shrank,
// stronger for larger changes; each side normalised by its own total).
FlameLayout LayoutFlameGraph(const FoldedProfile& candidate, const FoldedProfile* baseline,
                             const FlameGraphOptions& options);

// `profile` as a flame graph: frames coloured by kind (user warm, kernel
// aqua, unknown grey). "" for a profile without stacks.
std::string FlameGraphSvg(const FoldedProfile& profile, const FlameGraphOptions& options);

// The candidate's shape coloured by growth against the baseline, with a
// legend. "" when the candidate has no stacks.
std::string DifferentialFlameGraphSvg(const FoldedProfile& baseline, const FoldedProfile& candidate,
                                      const FlameGraphOptions& options);

}  // namespace perfgate
