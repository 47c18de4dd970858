// plan_rank: the steps of the trainers' own plans (train/features/detail/feature_setup.*) on a
// part's counts instead of its arrays; plan_homogeneous: the one-process trainer's own plan.
#include "train/rank_plan.hpp"

#include <string>

#include "graph/base/error.hpp"
#include "train/detail/homogeneous_trainer.hpp"
#include "train/features/detail/feature_setup.hpp"

namespace halo::train {

namespace {

RankPlan plan_rank_as(const PartShape& shape, const ModelShape& model, const TrainConfig& config,
                      std::int64_t memory_bytes) {
  const MemoryPlan resident = plan_part_shape_memory(shape, model, config.optimizer);
  const std::int64_t input_bytes = model.input_activation_bytes(shape.owned, shape.halo);
  const std::int64_t precomputed = config.precompute_first_aggregation ? 4 * shape.owned * shape.feature_dim : 0;
  const bool kept = keeps_features_beside_aggregation(model.config());
  const bool gpu = config.device.is_cuda();
  const auto on_device = [&](MemoryPlan plan) { return gpu ? detail::gpu_memory_plan(std::move(plan)) : plan; };
  RankPlan out;
  out.placement =
      place_features(on_device(plan_feature_input(resident, input_bytes, {}, precomputed, kept)).total_bytes(),
                     on_device(plan_feature_input(resident, input_bytes, {true, 0, 0}, 0)).total_bytes(), shape.owned,
                     shape.feature_dim, false, config.feature_memory_budget, config.memory_limit, memory_bytes);
  out.plan = on_device(
      plan_feature_input(resident, input_bytes, out.placement, out.placement.streamed ? 0 : precomputed, kept));
  const std::int64_t total = out.plan.total_bytes();
  out.fits = total <= memory_bytes && (config.memory_limit <= 0 || total <= config.memory_limit);
  out.recompute = model.config().recompute;
  return out;
}

}  // namespace

RankPlan plan_rank(const PartShape& shape, const ModelShape& model, const TrainConfig& config,
                   std::int64_t memory_bytes) {
  ModelConfig m = model.config();
  if (m.recompute == "auto") m.recompute = "none";
  RankPlan out =
      plan_rank_as(shape, ModelShape(m, model.in_dim(), model.num_classes(), config.device), config, memory_bytes);
  const std::string chosen = model.recompute_for(out.placement.streamed || !out.fits);
  if (chosen == m.recompute) return out;
  m.recompute = chosen;
  return plan_rank_as(shape, ModelShape(m, model.in_dim(), model.num_classes(), config.device), config, memory_bytes);
}

RankChoices RankChoices::of(const FeaturePlacement& placement, const std::string& recompute) {
  HALO_ASSERT(recompute != "auto");
  return {placement.streamed, recompute != "none"};
}

RankChoices RankChoices::with(const RankChoices& other) const {
  return {stream || other.stream, recompute || other.recompute};
}

bool RankChoices::operator==(const RankChoices& other) const {
  return stream == other.stream && recompute == other.recompute;
}

AgreedConfigs configs_as_agreed(const ModelShape& model, const TrainConfig& config, const RankChoices& own,
                                const RankChoices& agreed, std::int64_t rows, std::int64_t cols) {
  AgreedConfigs out{model.config(), config};
  if (out.model.recompute == "auto") out.model.recompute = model.recompute_for(agreed.recompute);
  if (agreed.stream && !own.stream) out.train.feature_memory_budget = whole_features_budget(rows, cols);
  return out;
}

std::vector<RankPlan> agree_rank_plans(const std::vector<PartShape>& shapes, const ModelShape& model,
                                       const TrainConfig& config, std::int64_t memory_bytes,
                                       std::vector<RankPlan> plans) {
  HALO_EXPECTS(shapes.size() == plans.size(), "agree_rank_plans: " + std::to_string(shapes.size()) + " parts but " +
                                                  std::to_string(plans.size()) + " plans");
  RankChoices agreed;
  for (const RankPlan& p : plans) agreed = agreed.with(RankChoices::of(p.placement, p.recompute));
  for (std::size_t r = 0; r < plans.size(); ++r) {
    const RankChoices own = RankChoices::of(plans[r].placement, plans[r].recompute);
    if (own == agreed) continue;
    const AgreedConfigs c = configs_as_agreed(model, config, own, agreed, shapes[r].owned, shapes[r].feature_dim);
    plans[r] = plan_rank(shapes[r], ModelShape(c.model, model.in_dim(), model.num_classes(), config.device), c.train,
                         memory_bytes);
  }
  return plans;
}

RankPlan plan_homogeneous(const datasets::Dataset& ds, const ModelConfig& model, const TrainConfig& config,
                          std::int64_t memory_bytes) {
  check_model_config(model);
  if (is_heterogeneous_kind(model.kind))
    throw InvalidArgument("plan_homogeneous: model '" + model.kind +
                          "' is heterogeneous; plan it with plan_heterogeneous");
  return detail::plan_homogeneous(ds, model, config, memory_bytes);
}

}  // namespace halo::train
