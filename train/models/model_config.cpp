// ModelConfig's checks: the kinds train() knows, and the settings each family has.
#include "train/models/model_config.hpp"

#include "graph/base/error.hpp"

namespace halo::train {

bool is_heterogeneous_kind(const std::string& kind) { return kind == "rgcn" || kind == "hgt" || kind == "rgat"; }

void check_model_config(const ModelConfig& c) {
  HALO_EXPECTS(c.kind == "gcn" || c.kind == "sage" || c.kind == "gat" || c.kind == "rgcn" || c.kind == "hgt" ||
                   c.kind == "rgat",
               "model kind must be gcn, sage, gat, rgcn, hgt or rgat, got '" + c.kind + "'");
  if (c.kind == "gat" || c.kind == "rgat") {
    HALO_EXPECTS(c.heads >= 1 && c.out_heads >= 1, c.kind + " needs at least one head per layer, got heads " +
                                                       std::to_string(c.heads) + " and out_heads " +
                                                       std::to_string(c.out_heads));
    HALO_EXPECTS(c.attention_dropout >= 0.0f && c.attention_dropout < 1.0f,
                 c.kind + "'s attention dropout must be in [0, 1), got " + std::to_string(c.attention_dropout));
  }
  HALO_EXPECTS(!c.residual || c.kind == "gat", c.kind + " has no residual connections (residual is for gat)");
  if (c.kind == "hgt")
    HALO_EXPECTS(c.heads >= 1 && c.hidden % c.heads == 0,
                 "hgt splits the hidden width over its heads: hidden " + std::to_string(c.hidden) +
                     " is not a multiple of heads " + std::to_string(c.heads));
  HALO_EXPECTS(c.num_bases == 0 || c.kind == "rgcn", c.kind + " has no basis decomposition (bases are for rgcn)");
  HALO_EXPECTS(c.recompute == "auto" || c.recompute == "none" || c.recompute == "aggregation" || c.recompute == "layer",
               "recompute must be auto, none, aggregation or layer, got '" + c.recompute + "'");
  HALO_EXPECTS(c.recompute != "layer" || !is_heterogeneous_kind(c.kind),
               c.kind + " recomputes nothing (recompute layer is for gcn, sage and gat)");
  HALO_EXPECTS(c.recompute != "aggregation" || c.kind == "gcn" || c.kind == "sage",
               c.kind + " does not aggregate its input first (recompute aggregation is for gcn and sage)");
  HALO_EXPECTS(c.activation_dtype == "f32" || c.activation_dtype == "bf16",
               "activation dtype must be f32 or bf16, got '" + c.activation_dtype + "'");
  HALO_EXPECTS(c.activation_dtype == "f32" || !is_heterogeneous_kind(c.kind),
               c.kind + " keeps its activations in float32 (activation dtype bf16 is for gcn, sage and gat)");
  if (!is_heterogeneous_kind(c.kind)) return;
  HALO_EXPECTS(!c.batch_norm, c.kind + " has no batch norm (batch_norm is for gcn and sage)");
  HALO_EXPECTS(!c.weight_decay_first_layer_only,
               c.kind + " decays every layer's weights (weight_decay_first_layer_only is for gcn and sage)");
}

}  // namespace halo::train
