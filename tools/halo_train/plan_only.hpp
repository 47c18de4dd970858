// halo-train --plan-only: before a job is run (or its machines rented), every rank's memory plan
// (graph, features resident or streamed at what budget, activations, parameters, optimiser), its
// halo rows and the halo bytes it receives per epoch, and whether it fits the given memory; from a
// partition directory's partition.json, or from a dataset partitioned in memory for --world-size
// ranks, optionally scaled up (--plan-scale). Nothing is trained and no part is built.
#pragma once

#include "tools/halo_train/options.hpp"

namespace halo::tools {

// Prints one line per rank and a verdict, writes the JSON (--json) with "ranks": [{rank, ...}];
// returns 0 when every rank fits, 1 otherwise. UnsupportedError for a heterogeneous dataset or
// partition (their ranks plan per relation; not covered yet).
int plan_only(const TrainOptions& options);

}  // namespace halo::tools
