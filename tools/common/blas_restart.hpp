// Runs a halo program on the OpenBLAS kernels that fit this CPU when OpenBLAS did not recognise it
// and fell back to its Prescott kernels (kernels/blas_kernels.hpp): OpenBLAS reads
// OPENBLAS_CORETYPE only when it is loaded, before main, so the program starts itself again with it
// set (execv of /proc/self/exe with the same arguments: the same process, so mpirun's ranks stay
// its ranks).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace halo::tools {

// When kernels::fitting_blas_core() names a core, sets OPENBLAS_CORETYPE to it and restarts the
// program; returns when OpenBLAS's choice stands, or when the restart failed (the program then goes
// on with OpenBLAS's choice, and its first product logs a warning). Call it in main once the
// command line is parsed (help and usage errors need no restart), before any thread starts and
// before anything is written.
void restart_on_fitting_blas_kernels(char** argv);

// After such a restart, one line for the log saying what changed (halo-train logs it with -v, beside
// its thread choice: at the default level a failing run still prints one line); else empty.
std::string blas_restart_note();

// The BLAS a summary describes: {"core", "config", "replaced_core"} (replaced_core: the core
// OpenBLAS fell back to before the restart, or null).
nlohmann::json blas_json();

}  // namespace halo::tools
