// The memory plan a rank would make before its first epoch, made from the counts of its part
// alone (train/memory_plan.hpp's PartShape), on the CPU or a GPU of a given size: what
// `halo-train --plan-only` prints for every rank of a job before anything is allocated.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "datasets/dataset.hpp"
#include "train/memory_plan.hpp"
#include "train/models/model_shape.hpp"
#include "train/trainer.hpp"

namespace halo::train {

struct RankPlan {
  MemoryPlan plan;             // with the features resident, or their staging and cache when streamed
  FeaturePlacement placement;  // as place_features decides for `memory_bytes`
  bool fits = false;           // plan total <= memory_bytes (and config.memory_limit when set)
  std::string recompute;       // the model's recompute setting, "auto" resolved as train() does
};

// The plan of a rank holding a part of `shape` with `memory_bytes` of memory (the GPU's with
// config.device a GPU, whose plan keeps only what lives there; else the host's): the part plan
// (plan_part_shape_memory), the first layer's input (plan_feature_input: resident, or streamed
// with the budget place_features gives when the resident plan does not fit; a precomputed Â·X
// with config.precompute_first_aggregation), and whether the total fits; recompute "auto" is
// resolved as train() resolves it (ModelShape::recompute_for). O(1); allocates nothing.
RankPlan plan_rank(const PartShape& shape, const ModelShape& model, const TrainConfig& config,
                   std::int64_t memory_bytes);

// The two choices of a rank's plan that change which collectives it starts and how wide they are,
// so that the ranks of a job must make them alike: its features streamed (the first layer then
// transforms first, and its halo exchange carries outputs' columns) and a recompute other than
// "none" (recomputing Â·x adds an exchange to backward).
struct RankChoices {
  bool stream = false;
  bool recompute = false;

  // The choices of a plan that placed the features as `placement` with recompute `recompute`
  // (resolved: not "auto").
  static RankChoices of(const FeaturePlacement& placement, const std::string& recompute);
  // Where any rank streams or recomputes, every rank does: the job's choices from its ranks'.
  RankChoices with(const RankChoices& other) const;
  bool operator==(const RankChoices& other) const;
  bool operator!=(const RankChoices& other) const { return !(*this == other); }
};

// The configs a rank whose own plan made the choices `own` plans again with to make the job's
// choices `agreed`: recompute "auto" resolved as agreed (ModelShape::recompute_for), and, where it
// streams only because another rank does, a feature budget that holds its `rows` x `cols` features
// whole (whole_features_budget). The one rule of agree_rank_plans and the distributed trainers.
struct AgreedConfigs {
  ModelConfig model;
  TrainConfig train;
};
AgreedConfigs configs_as_agreed(const ModelShape& model, const TrainConfig& config, const RankChoices& own,
                                const RankChoices& agreed, std::int64_t rows, std::int64_t cols);

// The plans of a job's ranks (of parts `shapes`, `plans` as plan_rank made them) as the ranks'
// trainers agree on them before training (train_homogeneous_problem): each plan whose choices are
// not the job's is made again with configs_as_agreed. O(ranks); allocates no model.
std::vector<RankPlan> agree_rank_plans(const std::vector<PartShape>& shapes, const ModelShape& model,
                                       const TrainConfig& config, std::int64_t memory_bytes,
                                       std::vector<RankPlan> plans);

// The plan train(ds, model, config) makes of a homogeneous dataset on one process before anything
// of the model exists (the same code), with `memory_bytes` of memory: the host's, or with
// config.device a GPU that GPU's (none is needed to plan); recompute "auto" resolved, the
// features placed, fits as train() would pass it. InvalidArgument for a heterogeneous kind or
// dataset. O(n) to read the split and features' shape; allocates no model.
RankPlan plan_homogeneous(const datasets::Dataset& ds, const ModelConfig& model, const TrainConfig& config,
                          std::int64_t memory_bytes);

}  // namespace halo::train
