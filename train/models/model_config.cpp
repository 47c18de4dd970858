// ModelConfig's checks: the kinds train() knows, and the settings each family has.
#include "train/models/model_config.hpp"

#include "graph/base/error.hpp"

namespace halo::train {

bool is_heterogeneous_kind(const std::string& kind) { return kind == "rgcn"; }

void check_model_config(const ModelConfig& c) {
  HALO_EXPECTS(c.kind == "gcn" || c.kind == "sage" || c.kind == "rgcn",
               "model kind must be gcn, sage or rgcn, got '" + c.kind + "'");
  if (!is_heterogeneous_kind(c.kind)) return;
  HALO_EXPECTS(!c.batch_norm, c.kind + " has no batch norm (batch_norm is for gcn and sage)");
  HALO_EXPECTS(!c.weight_decay_first_layer_only,
               c.kind + " decays every layer's weights (weight_decay_first_layer_only is for gcn and sage)");
}

}  // namespace halo::train
