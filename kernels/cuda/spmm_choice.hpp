// How SpMM on a GPU picks between halo's kernel and cuSPARSE when left to choose: both are timed
// on the first product of each (graph, width), and the choice is kept for the later ones. The
// decision and its cache are plain C++, tested without a GPU; kernels/cuda/spmm.cu does the timing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <tuple>
#include <vector>

#include "kernels/cuda/settings.hpp"

namespace halo::kernels::cuda {

// What a choice is kept for: the graph (DeviceCsr::id(), never reused in a process) and the
// feature width. (With determinism asked there is no choice to keep: halo's kernel runs.)
struct SpmmKey {
  std::uint64_t graph = 0;
  std::int64_t width = 0;
  bool operator<(const SpmmKey& o) const { return std::tie(graph, width) < std::tie(o.graph, o.width); }
  bool operator==(const SpmmKey& o) const { return graph == o.graph && width == o.width; }
};

// The implementation to keep, given the milliseconds of each timed repetition of both on the same
// product (an empty list, or one holding a non-finite or negative time, marks an implementation
// that could not run): the lower median; halo's kernel on a tie, and whenever cuSPARSE has no
// valid time; cuSPARSE only when halo's kernel has none and cuSPARSE has. Pure and deterministic.
SpmmImpl choose_spmm_impl(std::vector<double> halo_ms, std::vector<double> cusparse_ms);

// The median of valid times (see choose_spmm_impl), or nullopt when there is none.
std::optional<double> median_time(std::vector<double> ms);

// Choices made so far, shared by all threads.
class SpmmChoiceCache {
 public:
  std::optional<SpmmImpl> find(const SpmmKey& key) const;
  void store(const SpmmKey& key, SpmmImpl impl);
  // Drops every choice made for `graph` (when its DeviceCsr is destroyed).
  void forget_graph(std::uint64_t graph);
  std::size_t size() const;

 private:
  mutable std::mutex mutex_;
  std::map<SpmmKey, SpmmImpl> choices_;
};

}  // namespace halo::kernels::cuda
