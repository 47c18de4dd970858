// Tests of kernels/cuda/settings.*: naming and parsing the SpMM implementations, reading the
// environment variables, and setting the process-wide value. Plain C++, on every machine.
#include <catch2/catch.hpp>

#include "graph/base/error.hpp"
#include "kernels/cuda/settings.hpp"

using namespace halo;
using namespace halo::kernels::cuda;

TEST_CASE("SpMM implementations print and parse as auto, halo and cusparse", "[kernels]") {
  for (const SpmmImpl impl : {SpmmImpl::automatic, SpmmImpl::halo, SpmmImpl::cusparse})
    CHECK(parse_spmm_impl(to_string(impl)) == impl);
  CHECK(std::string(to_string(SpmmImpl::automatic)) == "auto");
  CHECK_THROWS_WITH(parse_spmm_impl("cublas"), Catch::Contains("unknown SpMM implementation 'cublas'"));
}

TEST_CASE("settings_from_environment reads HALO_SPMM, HALO_DETERMINISTIC and HALO_ALLOW_TF32", "[kernels]") {
  const CudaSettings defaults = settings_from_environment(nullptr, nullptr, nullptr);
  CHECK(defaults.spmm == SpmmImpl::automatic);
  CHECK_FALSE(defaults.deterministic);
  CHECK_FALSE(defaults.allow_tf32);
  const CudaSettings s = settings_from_environment("cusparse", "1", "true");
  CHECK(s.spmm == SpmmImpl::cusparse);
  CHECK(s.deterministic);
  CHECK(s.allow_tf32);
  CHECK_FALSE(settings_from_environment("halo", "0", "off").deterministic);
  CHECK(settings_from_environment("", nullptr, nullptr).spmm == SpmmImpl::automatic);
  CHECK_THROWS_AS(settings_from_environment("fast", nullptr, nullptr), InvalidArgument);
  CHECK_THROWS_WITH(settings_from_environment(nullptr, "maybe", nullptr),
                    Catch::Contains("HALO_DETERMINISTIC='maybe' is not a switch"));
}

TEST_CASE("set_cuda_settings changes what cuda_settings returns", "[kernels]") {
  const CudaSettings before = cuda_settings();
  CudaSettings s;
  s.spmm = SpmmImpl::halo;
  s.deterministic = true;
  set_cuda_settings(s);
  CHECK(cuda_settings().spmm == SpmmImpl::halo);
  CHECK(cuda_settings().deterministic);
  set_cuda_settings(before);
  CHECK(cuda_settings().spmm == before.spmm);
}
