// Tests of TrainingRows' byte counts: what a selection holds on its device, against what the memory
// plan counts for it before it exists (TrainingRows::bytes_for).
#include <catch2/catch.hpp>
#include <cstdint>
#include <utility>
#include <vector>

#include "kernels/device.hpp"
#include "tests/support/gpu.hpp"
#include "train/layers/training_rows.hpp"

namespace {

using halo::kernels::Device;
using halo::train::TrainingRows;

// Every third of `outputs` rows, last first, as a trainer's split lists rows in no set order.
std::vector<std::int64_t> every_third(std::int64_t outputs) {
  std::vector<std::int64_t> rows;
  for (std::int64_t i = outputs - 1; i >= 0; i -= 3) rows.push_back(i);
  return rows;
}

void check_bytes_on(Device device) {
  CHECK(TrainingRows().device_bytes() == 0);
  for (const std::int64_t outputs : {std::int64_t{0}, std::int64_t{1}, std::int64_t{1000}}) {
    CAPTURE(outputs);
    const std::vector<std::int64_t> rows = every_third(outputs);
    const auto n = static_cast<std::int64_t>(rows.size());
    TrainingRows selection({rows.data(), n}, outputs, device, "test", "paper");
    CHECK(selection.device_bytes() == TrainingRows::bytes_for(n, device));
    // Moved, the bytes go with it.
    const TrainingRows moved = std::move(selection);
    CHECK(moved.device_bytes() == TrainingRows::bytes_for(n, device));
    CHECK(selection.device_bytes() == 0);  // NOLINT(bugprone-use-after-move): what a move leaves
  }
}

}  // namespace

TEST_CASE("TrainingRows on the CPU holds the rows and both indices as bytes_for counts them", "[train]") {
  check_bytes_on(Device::cpu());
  // The rows, the gather index's copy and the scatter index's.
  CHECK(TrainingRows::bytes_for(334, Device::cpu()) == 3 * 8 * 334);
}

TEST_CASE("TrainingRows on a GPU holds there what bytes_for counts", "[train][gpu]") {
  HALO_SKIP_WITHOUT_GPU();
  check_bytes_on(Device::cuda());
  // The gather index, and the scatter index grouped by target (entries, targets, offsets, sources).
  CHECK(TrainingRows::bytes_for(334, Device::cuda()) == 8 * (334 + 4 * 334 + 1));
  CHECK(TrainingRows::bytes_for(0, Device::cuda()) == 0);
}
