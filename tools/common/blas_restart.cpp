// Restarting a program on the OpenBLAS kernels that fit this CPU (blas_restart.hpp).
#include "tools/common/blas_restart.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdlib>

#include "kernels/blas_kernels.hpp"

namespace halo::tools {
namespace {

// Set for the restarted program: the core OpenBLAS had fallen back to.
constexpr const char* replaced_core_variable = "HALO_REPLACED_BLAS_CORE";

}  // namespace

void restart_on_fitting_blas_kernels(char** argv) {
  const std::string fitting = kernels::fitting_blas_core();
  if (fitting.empty()) return;
  const std::string replaced = kernels::blas_core();
  if (setenv("OPENBLAS_CORETYPE", fitting.c_str(), 1) != 0 || setenv(replaced_core_variable, replaced.c_str(), 1) != 0)
    return;
  execv("/proc/self/exe", argv);
  // Still here: no restart (no /proc, say). Go on as OpenBLAS chose, and let the first product warn.
  unsetenv("OPENBLAS_CORETYPE");
  unsetenv(replaced_core_variable);
}

std::string blas_restart_note() {
  const char* replaced = std::getenv(replaced_core_variable);
  if (replaced == nullptr) return "";
  return fmt::format(
      "OpenBLAS does not know this CPU and chose its {} kernels (SSE3): restarted on its {} kernels, "
      "which this CPU runs (set OPENBLAS_CORETYPE to choose)",
      replaced, kernels::blas_core());
}

nlohmann::json blas_json() {
  const char* replaced = std::getenv(replaced_core_variable);
  return {{"core", kernels::blas_core()},
          {"config", kernels::blas_config()},
          {"replaced_core", replaced != nullptr ? nlohmann::json(replaced) : nlohmann::json(nullptr)}};
}

}  // namespace halo::tools
