// train(): the one entry point for training, on one process or on a rank of many. It checks the
// model settings, then hands the run to its family's trainer (train/detail/, train/dist/detail/).
#include "train/trainer.hpp"

#include "graph/base/error.hpp"
#include "train/detail/hetero_problem.hpp"
#include "train/detail/homogeneous_trainer.hpp"
#include "train/dist/detail/part_trainers.hpp"
#include "train/models/hetero_model.hpp"

namespace halo::train {

TrainSummary train(const datasets::Dataset& ds, const ModelConfig& model, const TrainConfig& config,
                   const EpochCallback& on_epoch) {
  check_model_config(model);
  if (is_heterogeneous_kind(model.kind)) return detail::train_hetero(ds, hetero_model_config(model), config, on_epoch);
  return detail::train_homogeneous(ds, model, config, on_epoch);
}

TrainSummary train(const std::string& partition_dir, dist::Communicator& comm, const ModelConfig& model,
                   const TrainConfig& config, const EpochCallback& on_epoch) {
  check_model_config(model);
  if (is_heterogeneous_kind(model.kind))
    return dist::detail::train_hetero_part(partition_dir, comm, hetero_model_config(model), config, on_epoch);
  return dist::detail::train_homogeneous_part(partition_dir, comm, model, config, on_epoch);
}

MemoryPlan plan_heterogeneous(const datasets::Dataset& ds, const ModelConfig& model, const TrainConfig& config) {
  check_model_config(model);
  if (!is_heterogeneous_kind(model.kind))
    throw InvalidArgument("plan_heterogeneous: model '" + model.kind + "' is not one of rgcn, hgt, rgat");
  return detail::plan_hetero(ds, hetero_model_config(model), config);
}

}  // namespace halo::train
