// CUDA backend settings: parsing, the environment, and the process-wide current value.
#include "kernels/cuda/settings.hpp"

#include <cstdlib>
#include <mutex>

#include "graph/base/error.hpp"

namespace halo::kernels::cuda {
namespace {

bool parse_flag(const char* variable, const char* value) {
  const std::string v(value);
  if (v == "1" || v == "on" || v == "true" || v == "yes") return true;
  if (v == "0" || v == "off" || v == "false" || v == "no" || v.empty()) return false;
  throw InvalidArgument(std::string(variable) + "='" + v + "' is not a switch (expected 0 or 1)");
}

std::mutex g_mutex;
bool g_loaded = false;
CudaSettings g_settings;

}  // namespace

const char* to_string(SpmmImpl impl) {
  switch (impl) {
    case SpmmImpl::automatic:
      return "auto";
    case SpmmImpl::halo:
      return "halo";
    case SpmmImpl::cusparse:
      return "cusparse";
  }
  return "?";
}

SpmmImpl parse_spmm_impl(const std::string& text) {
  if (text == "auto" || text == "automatic") return SpmmImpl::automatic;
  if (text == "halo") return SpmmImpl::halo;
  if (text == "cusparse") return SpmmImpl::cusparse;
  throw InvalidArgument("parse_spmm_impl: unknown SpMM implementation '" + text +
                        "' (expected auto, halo or cusparse)");
}

CudaSettings settings_from_environment(const char* spmm, const char* deterministic, const char* allow_tf32) {
  CudaSettings s;
  if (spmm != nullptr && *spmm != '\0') {
    try {
      s.spmm = parse_spmm_impl(spmm);
    } catch (const InvalidArgument&) {
      throw InvalidArgument(std::string("HALO_SPMM='") + spmm +
                            "' is not an SpMM implementation (auto, halo, cusparse)");
    }
  }
  if (deterministic != nullptr) s.deterministic = parse_flag("HALO_DETERMINISTIC", deterministic);
  if (allow_tf32 != nullptr) s.allow_tf32 = parse_flag("HALO_ALLOW_TF32", allow_tf32);
  return s;
}

CudaSettings cuda_settings() {
  const std::lock_guard<std::mutex> lock(g_mutex);
  if (!g_loaded) {
    g_settings = settings_from_environment(std::getenv("HALO_SPMM"), std::getenv("HALO_DETERMINISTIC"),
                                           std::getenv("HALO_ALLOW_TF32"));
    g_loaded = true;
  }
  return g_settings;
}

void set_cuda_settings(const CudaSettings& settings) {
  const std::lock_guard<std::mutex> lock(g_mutex);
  g_settings = settings;
  g_loaded = true;
}

}  // namespace halo::kernels::cuda
