// The SpMM implementation choice: medians of timed runs, and the per-(graph, width) cache.
#include "kernels/cuda/spmm_choice.hpp"

#include <algorithm>
#include <cmath>

namespace halo::kernels::cuda {

std::optional<double> median_time(std::vector<double> ms) {
  if (ms.empty()) return std::nullopt;
  for (const double t : ms)
    if (!std::isfinite(t) || t < 0.0) return std::nullopt;
  std::sort(ms.begin(), ms.end());
  const std::size_t mid = ms.size() / 2;
  return ms.size() % 2 == 1 ? ms[mid] : 0.5 * (ms[mid - 1] + ms[mid]);
}

SpmmImpl choose_spmm_impl(std::vector<double> halo_ms, std::vector<double> cusparse_ms) {
  const std::optional<double> halo = median_time(std::move(halo_ms));
  const std::optional<double> cusparse = median_time(std::move(cusparse_ms));
  if (!cusparse) return SpmmImpl::halo;
  if (!halo) return SpmmImpl::cusparse;
  return *cusparse < *halo ? SpmmImpl::cusparse : SpmmImpl::halo;
}

std::optional<SpmmImpl> SpmmChoiceCache::find(const SpmmKey& key) const {
  const std::lock_guard<std::mutex> lock(mutex_);
  const auto it = choices_.find(key);
  if (it == choices_.end()) return std::nullopt;
  return it->second;
}

void SpmmChoiceCache::store(const SpmmKey& key, SpmmImpl impl) {
  const std::lock_guard<std::mutex> lock(mutex_);
  choices_[key] = impl;
}

void SpmmChoiceCache::forget_graph(std::uint64_t graph) {
  const std::lock_guard<std::mutex> lock(mutex_);
  for (auto it = choices_.begin(); it != choices_.end();) {
    if (it->first.graph == graph)
      it = choices_.erase(it);
    else
      ++it;
  }
}

std::size_t SpmmChoiceCache::size() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return choices_.size();
}

}  // namespace halo::kernels::cuda
