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
};

// Parses "SCENARIO/CHECK <= +N%: reason"; InputError naming `source` when it
// is malformed, bounds an improvement (a bound of zero or below), or gives no reason.
Acceptance ParseAcceptance(const std::string& text, const std::string& by, const std::string& source);

// A file of trailers, one per line: "COMMIT TRAILER-VALUE" (what
// ci/pr-gate.sh writes from git log); blank lines and lines starting with
// '#' are skipped. InputError naming FILE:LINE for a bad one.
std::vector<Acceptance> ReadAcceptanceFile(const std::string& file);

// Resolves each acceptance's target against the whole suite (before any
// shard is taken). InputError for a target that names no check of the suite
// or a budget check (a budget is absolute: there is no change to bound).
void ResolveAcceptances(std::vector<Acceptance>& acceptances, const Suite& suite);

}  // namespace perfgate
