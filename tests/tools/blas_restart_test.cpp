// Tests of tools/common/blas_restart.*, through halo-train: its products run on OpenBLAS kernels
// that fit this CPU (it restarts itself when OpenBLAS fell back to Prescott's, and says so with -v),
// and a core the user forced stands.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <string>

#include "kernels/blas_kernels.hpp"
#include "tests/support/test_paths.hpp"
#include "tests/tools/run_program.hpp"

using halo::test::ScratchDir;

namespace {

// halo-train's summary of a two-epoch GCN on a small generated graph, run with `environment`
// ("env ..." settings) in front; its stderr in `err`.
nlohmann::json train_with(const std::string& environment, const ScratchDir& scratch, std::string& err) {
  const std::string data = scratch / "sbm";
  REQUIRE(halo::test::run_program("halo-convert", "synth sbm " + data + " --nodes 300 --force -q", scratch).exit_code ==
          0);
  const halo::test::ProgramResult r = halo::test::run_program(
      "halo-train", "--dataset " + data + " --epochs 2 --hidden 8 --threads 1 -v --json -", scratch, environment);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  err = r.err;
  return nlohmann::json::parse(r.out)["machine"]["blas"];
}

}  // namespace

TEST_CASE("halo-train multiplies on the OpenBLAS kernels that fit this CPU, restarting when OpenBLAS fell back",
          "[tools]") {
  ScratchDir scratch;
  std::string err;
  const nlohmann::json blas = train_with("env -u OPENBLAS_CORETYPE ", scratch, err);
  INFO(blas.dump() << "\n" << err);
  const std::string core = blas["core"];
  // Whatever OpenBLAS first chose, the products ran on a core that nothing fits better.
  CHECK(halo::kernels::fitting_blas_core(core, halo::kernels::cpu_vector_isa(), false).empty());
  if (blas["replaced_core"].is_null()) {
    CHECK(err.find("restarted on its") == std::string::npos);
  } else {
    // This CPU is one OpenBLAS does not know: it was restarted, and said on which kernels.
    CHECK(blas["replaced_core"] == "Prescott");
    CHECK(core != "Prescott");
    CHECK(err.find("chose its Prescott kernels (SSE3): restarted on its " + core + " kernels") != std::string::npos);
  }
}

TEST_CASE("halo-train keeps the OpenBLAS core the user forced", "[tools]") {
  ScratchDir scratch;
  std::string err;
  // Prescott runs on every x86-64 CPU; only a DYNAMIC_ARCH OpenBLAS (Debian's) reads the setting.
  const nlohmann::json blas = train_with("env OPENBLAS_CORETYPE=Prescott ", scratch, err);
  INFO(blas.dump() << "\n" << err);
  if (blas["config"].get<std::string>().find("DYNAMIC_ARCH") == std::string::npos) return;
  CHECK(blas["core"] == "Prescott");
  CHECK(blas["replaced_core"].is_null());
  CHECK(err.find("restarted on its") == std::string::npos);
}
