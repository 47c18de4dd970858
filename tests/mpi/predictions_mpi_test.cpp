// BestPredictions on P ranks: every rank's rows, dealt round-robin over more vertices than one
// all-reduce piece carries (2^24 values), land at their ids in rank 0's file; and rows that do
// not fill the file are refused on every rank alike.
#include <catch2/catch.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "datasets/npy.hpp"
#include "tests/mpi/mpi_world.hpp"
#include "tests/support/predictions_file.hpp"
#include "train/detail/best_predictions.hpp"

using namespace halo;

namespace {

// Vertex v's class: 0, 1 or 2, varying along the file so a misplaced piece shows.
std::int64_t class_of(std::int64_t v) { return (v / 7 + v % 5) % 3; }

}  // namespace

TEST_CASE("P ranks' predictions of more vertices than one all-reduce piece land at their ids in one file", "[mpi]") {
  train::dist::Communicator& world = test::mpi_world();
  const std::int64_t ranks = world.size();
  const std::int64_t vertices = (std::int64_t{1} << 24) + 1000003;
  // Rank r holds the vertices r, r + P, r + 2P, ...; its logits put 1 at each one's class.
  std::vector<std::int64_t> ids;
  for (std::int64_t v = world.rank(); v < vertices; v += ranks) ids.push_back(v);
  const auto rows = static_cast<std::int64_t>(ids.size());
  std::vector<float> logits(static_cast<std::size_t>(rows * 3), 0.0f);
  for (std::int64_t k = 0; k < rows; ++k) logits[static_cast<std::size_t>(k * 3 + class_of(ids[k]))] = 1.0f;
  train::detail::BestPredictions kept(0);
  kept.offer(kernels::Tensor::from_vector(rows, 3, logits), 7, 0.5);
  const std::string dir = test::shared_scratch("predictions-pieces");
  kept.write(world, {ids.data(), rows}, vertices, dir + "/y_pred.npy");
  const Array<std::int64_t> classes = test::read_predicted_classes(dir + "/y_pred.npy");
  CHECK(classes.rows() == vertices);
  std::int64_t wrong = 0;
  for (std::int64_t v = 0; v < classes.size(); ++v) wrong += classes[v] != class_of(v);
  CHECK(wrong == 0);
  // One vertex short of the file: every rank refuses, none waits on another.
  CHECK_THROWS_WITH(kept.write(world, {ids.data(), rows}, vertices + 1, dir + "/short.npy"),
                    Catch::Contains("the ranks hold " + std::to_string(vertices) + " rows"));
}
