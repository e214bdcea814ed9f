// Accepting an intended regression with a bound: the commit trailer
// `Perfgate-Accept: SCENARIO/CHECK <= +N%: reason`, the same text given to
// `perfgate ab|run --accept`, or a file of trailers the pull-request gate
// collected from the commits between merge base and head.
#pragma once

#include <string>
#include <vector>

#include "config/suite.h"

namespace perfgate {

struct Acceptance {
  std::string target;    // "SCENARIO/CHECK" as written
  std::string scenario;  // resolved against the suite (ResolveAcceptances)
  std::string check;
  double bound_pct = 0;  // the change in the check's worse direction it allows, > 0
  std::string reason;
  std::string by;      // the commit that carries it, or "--accept"
  std::string source;  // where it was written, for messages: "--accept", "FILE:3"
  bool from_trailer_file = false;  // read by ReadAcceptanceFile (what --skip-bad-trailers may skip)
};

// Parses "SCENARIO/CHECK <= +N%: reason"; InputError naming `source` when it
// is malformed, bounds an improvement (a bound of zero or below), or gives no reason.
Acceptance ParseAcceptance(const std::string& text, const std::string& by, const std::string& source);

// A file of trailers, one per line: "COMMIT TRAILER-VALUE" (what
// ci/pr-gate.sh and ci/nightly-accepts.sh write from git log); blank lines
// and lines starting with '#' are skipped. InputError naming FILE:LINE for a
// bad one; with `skipped` (the nightly's --skip-bad-trailers), a bad line's
// one-line message goes there instead and the line is left out.
std::vector<Acceptance> ReadAcceptanceFile(const std::string& file, std::vector<std::string>* skipped = nullptr);

// Resolves each acceptance's target against the whole suite (before any
// shard is taken). InputError for a target that names no check of the suite
// or a budget check (a budget is absolute: there is no change to bound);
// with `skipped`, such an acceptance read from a trailer file is left out
// and its message goes there (one given with --accept still fails).
void ResolveAcceptances(std::vector<Acceptance>& acceptances, const Suite& suite,
                        std::vector<std::string>* skipped = nullptr);

}  // namespace perfgate
