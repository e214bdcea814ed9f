// A libbpf skeleton, loaded and attached through a HookPlan, owning its links.
// Instantiated only where the generated <name>.skel.h is included.
#pragma once

#include <bpf/libbpf.h>

#include <cerrno>
#include <functional>
#include <vector>

#include "base/error.h"
#include "probes/features.h"
#include "probes/hooks.h"

namespace perfgate {

// The generated functions of one skeleton type (`runqlat_bpf__open`, ...).
template <class Skel>
struct SkeletonOps {
  Skel* (*open)();
  void (*destroy)(Skel*);
};

template <class Skel>
class AttachedSkeleton {
 public:
  explicit AttachedSkeleton(SkeletonOps<Skel> ops) : ops_(ops) {}
  ~AttachedSkeleton() { Destroy(); }
  AttachedSkeleton(const AttachedSkeleton&) = delete;
  AttachedSkeleton& operator=(const AttachedSkeleton&) = delete;

  // `configure` sets rodata and map options on the opened skeleton; it runs
  // again for every fallback attempt.
  void Load(HookPlan& plan, const std::function<void(Skel&)>& configure) {
    Destroy();
    auto open = [&]() -> bpf_object* {
      skel_ = ops_.open();
      if (skel_ == nullptr) throw InfraError("probe " + plan.probe() + ": open BPF object: " + ErrnoText(errno));
      try {
        configure(*skel_);
      } catch (...) {
        DestroySkeleton();
        throw;
      }
      return skel_->obj;
    };
    LoadAndAttach(
        plan, open, [this] { DestroySkeleton(); }, links_);
  }

  Skel* get() const { return skel_; }
  bool loaded() const { return skel_ != nullptr; }

  // Fds of the loaded programs, for run-time statistics.
  std::vector<int> ProgramFds() const {
    std::vector<int> fds;
    if (skel_ == nullptr) return fds;
    bpf_program* program = nullptr;
    bpf_object__for_each_program(program, skel_->obj) {
      if (bpf_program__autoload(program) && bpf_program__fd(program) >= 0) fds.push_back(bpf_program__fd(program));
    }
    return fds;
  }

  // The links only: no program runs any more, and everything stays loaded.
  void Unhook() { DestroyLinks(links_); }

  // Links first, so no program runs while its maps go away.
  void Destroy() {
    DestroyLinks(links_);
    DestroySkeleton();
  }

 private:
  void DestroySkeleton() {
    if (skel_ != nullptr) ops_.destroy(skel_);
    skel_ = nullptr;
  }

  SkeletonOps<Skel> ops_;
  Skel* skel_ = nullptr;
  std::vector<bpf_link*> links_;
};

}  // namespace perfgate
