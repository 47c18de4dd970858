// halo-train's flags, the JSON --config reader, and their translation into trainer configs.
#include "tools/halo_train/options.hpp"

#include <cmath>
#include <fstream>
#include <limits>
#include <memory>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "graph/base/error.hpp"
#include "kernels/device.hpp"
#include "tools/common/program.hpp"
#include "train/memory_plan.hpp"
#include "train/run_tracker.hpp"

namespace halo::tools {
namespace {

using nlohmann::json;

// CLI11's configuration format for a flat JSON object: {"model": "gcn", "hidden": 16,
// "batch-norm": true, ...}. Keys are long flag names without the dashes, and "description", a
// string that is not read; unknown keys, nested objects and nulls are refused with the key's name.
class JsonConfig : public CLI::Config {
 public:
  explicit JsonConfig(const CLI::App* app) : app_(app) {}

  std::vector<CLI::ConfigItem> from_config(std::istream& input) const override {
    json j;
    // JSON allows a key twice in an object; a settings file that does is a mistake (the last would
    // win without a word), so it is refused. The callback sees every key as it is parsed.
    std::vector<std::set<std::string>> keys;
    const json::parser_callback_t no_duplicate_keys = [&](int, json::parse_event_t event, json& parsed) {
      if (event == json::parse_event_t::object_start) keys.emplace_back();
      if (event == json::parse_event_t::object_end) keys.pop_back();
      if (event == json::parse_event_t::key && !keys.back().insert(parsed.get<std::string>()).second)
        throw CLI::ConfigError("--config: the key '" + parsed.get<std::string>() + "' is given twice");
      return true;
    };
    try {
      j = json::parse(input, no_duplicate_keys);
    } catch (const json::exception& e) {
      throw CLI::ConfigError(std::string("--config: not valid JSON: ") + e.what());
    }
    if (!j.is_object()) throw CLI::ConfigError("--config: expected a JSON object of flag names, got " + std::string(j.type_name()));
    std::vector<CLI::ConfigItem> result;
    for (auto it = j.begin(); it != j.end(); ++it) {
      const std::string& key = it.key();
      // A recipe's description (its source and the number it should reach) is for people only.
      if (key == "description") {
        if (!it.value().is_string())
          throw CLI::ConfigError(std::string("--config: key 'description' must be a string, got ") +
                                 it.value().type_name());
        continue;
      }
      if (key == "config" || key == "help" || app_->get_option_no_throw("--" + key) == nullptr) {
        throw CLI::ConfigError("--config: unknown key '" + key + "' (keys are the long flag names, e.g. \"hidden\")");
      }
      CLI::ConfigItem item;
      item.name = key;
      const json& v = it.value();
      if (v.is_array()) {
        for (const json& e : v) item.inputs.push_back(scalar_text(key, e));
      } else {
        item.inputs.push_back(scalar_text(key, v));
      }
      result.push_back(std::move(item));
    }
    return result;
  }

  // The options given (and, with default_also, the defaults) as a JSON object, the inverse of
  // from_config: numbers and booleans are written as such, other values as strings.
  std::string to_config(const CLI::App* app, bool default_also, bool /*write_description*/,
                        std::string /*prefix*/) const override {
    json j = json::object();
    for (const CLI::Option* opt : app->get_options()) {
      if (opt->get_lnames().empty() || !opt->get_configurable()) continue;
      const std::string& name = opt->get_lnames().front();
      if (opt->count() > 0) {
        j[name] = typed(opt->get_expected_min() == 0 ? (opt->as<bool>() ? "true" : "false") : opt->results().back());
      } else if (default_also && !opt->get_default_str().empty()) {
        j[name] = typed(opt->get_default_str());
      }
    }
    return j.dump(2);
  }

 private:
  static std::string scalar_text(const std::string& key, const json& v) {
    if (v.is_string()) return v.get<std::string>();
    if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
    if (v.is_number()) return v.dump();
    throw CLI::ConfigError("--config: key '" + key + "' must be a string, number or boolean, got " + v.type_name());
  }
  static json typed(const std::string& text) {
    try {
      const json v = json::parse(text);
      if (v.is_number() || v.is_boolean()) return v;
    } catch (const json::exception&) {
    }
    return text;
  }

  const CLI::App* app_;
};

// Validators whose messages read "must be positive, got -1" (CLI11's own print the whole range
// of double); infinities and NaN are refused as well.
CLI::Validator number_above(double bound, bool inclusive, const std::string& name) {
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        double v = 0;
        if (!CLI::detail::lexical_cast(text, v)) return "not a number: " + text;
        // A float setting must also fit a float: inf, nan and 1e39 do not.
        if (!std::isfinite(v) || std::fabs(v) > std::numeric_limits<float>::max())
          return "must be a finite number, got " + text;
        const bool ok = inclusive ? v >= bound : v > bound;
        return ok ? std::string() : "must be " + std::string(inclusive ? "non-negative" : "positive") + ", got " + text;
      },
      name);
}
const CLI::Validator positive = number_above(0, false, "POSITIVE");
const CLI::Validator non_negative = number_above(0, true, "NON-NEGATIVE");

// A float setting as the decimal a user typed ("0.01"), not its binary expansion.
double decimal(float value) { return std::stod(fmt::format("{}", value)); }

}  // namespace

void add_train_options(CLI::App& app, TrainOptions& o) {
  train::ModelConfig& m = o.model;
  train::TrainConfig& t = o.train;
  app.add_option("--dataset", o.dataset, "halo dataset directory (written by halo-convert)");
  app.add_option("--partitions", o.partitions,
                 "Partition directory (written by halo-partition): under mpirun -np P, rank r trains part r");
  app.add_option("--boundary-sample-rate", o.train.boundary_sample_rate,
                 "With --partitions: keep each halo vertex with this probability per epoch (BNS-GCN; 1 = exact)")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1.0));

  app.add_option("--model", m.kind,
                 "Model: gcn (Kipf & Welling), sage (GraphSAGE, mean aggregator), gat (Veličković et al., graph "
                 "attention); for heterogeneous datasets rgcn (Schlichtkrull et al.), hgt (Hu et al., "
                 "heterogeneous graph transformer) or rgat (a GAT per relation, summed)")
      ->capture_default_str()
      ->check(CLI::IsMember({"gcn", "sage", "gat", "rgcn", "hgt", "rgat"}));
  app.add_option("--heads", m.heads,
                 "GAT, RGAT: attention heads of every hidden layer (each --hidden wide, concatenated); HGT: "
                 "attention heads of every layer (splitting --hidden)")
      ->capture_default_str()
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{1024}));
  app.add_option("--out-heads", m.out_heads, "GAT, RGAT: attention heads of the last layer (averaged)")
      ->capture_default_str()
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{1024}));
  app.add_option("--attn-dropout", m.attention_dropout, "GAT, RGAT: dropout on the attention coefficients")
      ->capture_default_str()
      ->check(CLI::Range(0.0f, 0.99f));
  app.add_flag("--residual", m.residual, "GAT: every layer adds a linear map of its input (PyG's residual=True)");
  app.add_option("--negative-slope", m.negative_slope, "GAT, RGAT: slope of the LeakyReLU on the attention scores")
      ->capture_default_str()
      ->check(CLI::Range(0.0f, 1.0f));
  app.add_option("--bases", m.num_bases, "R-GCN: basis decomposition with this many bases (0 = a weight per relation)")
      ->capture_default_str()
      ->check(CLI::Range(0, 4096));
  app.add_option("--embedding-dim", m.embedding_dim,
                 "R-GCN, HGT: width of the learnt embeddings of vertex types without features")
      ->capture_default_str()
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{1} << 16));
  app.add_flag("--add-reverse-relations", o.add_reverse_relations,
               "Heterogeneous --dataset: add the reverse of every relation before training (as OGB's ogbn-mag "
               "example does), so every type reaches the labelled one");
  app.add_option("--layers", m.layers, "Number of layers")->capture_default_str()->check(CLI::Range(1, 64));
  app.add_option("--hidden", m.hidden, "Hidden width")->capture_default_str()->check(CLI::Range(std::int64_t{1}, std::int64_t{1} << 20));
  app.add_option("--dropout", m.dropout, "Dropout on the input of every layer after the first")
      ->capture_default_str()
      ->check(CLI::Range(0.0f, 0.99f));
  app.add_option("--input-dropout", m.input_dropout, "Dropout on the input features (the first layer's input)")
      ->capture_default_str()
      ->check(CLI::Range(0.0f, 0.99f));
  app.add_flag("--batch-norm,!--no-batch-norm", m.batch_norm, "Batch norm after every hidden layer");
  app.add_flag("--bias,!--no-bias", m.bias, "Learn a bias in every layer")->capture_default_str();
  app.add_option("--weight-decay", m.weight_decay, "L2 weight decay")->capture_default_str()->check(non_negative);
  app.add_flag("--weight-decay-first-layer-only,!--weight-decay-all-layers", m.weight_decay_first_layer_only,
               "Decay only the first layer's weights (Kipf & Welling)");

  app.add_option("--optimizer", t.optimizer.kind, "Optimizer: adam, adamw or sgd")
      ->capture_default_str()
      ->check(CLI::IsMember({"adam", "adamw", "sgd"}));
  app.add_option("--lr", t.optimizer.lr, "Learning rate")->capture_default_str()->check(positive);
  app.add_option("--momentum", t.optimizer.momentum, "SGD momentum")->capture_default_str()->check(CLI::Range(0.0f, 1.0f));
  app.add_option("--epochs", t.epochs, "Epochs per run")->capture_default_str()->check(CLI::Range(1, 1000000));
  app.add_option("--eval-every", t.eval_every, "Evaluate every k epochs (and at the last)")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000000));
  app.add_option("--patience", t.early_stopping.patience, "Early-stopping patience in evaluations (0 = off)")
      ->capture_default_str()
      ->check(CLI::Range(0, 1000000));
  app.add_option("--early-stopping-metric", o.early_stopping_metric,
                 "valid_loss (stop when it exceeds the mean of the last PATIENCE, as tkipf/gcn) or valid_acc")
      ->capture_default_str()
      ->check(CLI::IsMember({"valid_loss", "valid_acc"}));
  app.add_option("--runs", t.runs, "Independent runs with seeds SEED .. SEED+RUNS-1")
      ->capture_default_str()
      ->check(CLI::Range(1, 10000));
  app.add_option("--seed", t.seed, "Seed of the first run")->capture_default_str();
  app.add_flag("--normalize-features,!--no-normalize-features", t.normalize_features,
               "Divide each feature row by its sum (Kipf & Welling's preprocessing)");
  app.add_option("--threads", t.threads, "OpenMP threads (0 = OMP_NUM_THREADS, else the cores this rank may use: its affinity mask shared among the ranks on this node, at most the idle ones when alone; -v says which)")
      ->capture_default_str()
      ->check(CLI::Range(0, 4096));
  app.add_option("--collective-timeout", o.collective_timeout_s,
                 "Seconds a rank waits for a collective that makes no progress (a stopped or dead peer) before it "
                 "ends the job with an error (--partitions under mpirun)")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_flag("--no-verify{false}", t.verify_checksums,
               "Skip the CRC-32 check of the dataset's or part's files (their sizes and structure are still checked)");
  app.add_flag("--allow-nonfinite", t.allow_nonfinite,
               "Go on training when the loss becomes NaN or infinite (by default the run stops with an error)");
  app.add_option("--tensorboard", o.tensorboard,
                 "Write each run's per-epoch loss, accuracies, times and traffic as TensorBoard curves in DIR/run-R "
                 "(rank 0)");
  app.add_option("--device", o.device, "cpu or cuda[:N]")->capture_default_str();
  app.add_option("--checkpoint", t.checkpoint_dir, "Save checkpoints to DIR (one sub-directory per run)");
  app.add_option("--checkpoint-every", t.checkpoint_every, "Checkpoint every k epochs (0 = when a run ends)")
      ->capture_default_str()
      ->check(CLI::Range(0, 1000000));
  app.add_flag("--resume", t.resume, "Continue from the checkpoints in --checkpoint DIR");
  app.add_option("--predictions", t.predictions_dir,
                 "Write each run's predictions for every vertex of the labelled type at its best validation epoch "
                 "to DIR/run-NNNN/y_pred.npy, as OGB's Evaluator takes them: the class (int64, n x 1), or for a "
                 "multi-label task the scores (float32 logits, n x tasks)");
  app.add_option("--memory-limit", o.memory_limit,
                 "Refuse runs whose memory plan exceeds BYTES (e.g. 8G, 512M); features that do not fit are streamed");
  app.add_option("--feature-memory-budget", o.feature_memory_budget,
                 "Stream the first layer's features through BYTES of staging buffers and cache (e.g. 512M, 2G); "
                 "with --model rgcn, the embedding tables through BYTES of staging. Default: stream only when the "
                 "memory plan does not fit");
  app.add_flag("--precompute-first-aggregation", t.precompute_first_aggregation,
               "Compute Â·X once before training so the first layer needs no SpMM (needs --input-dropout 0)");
  app.add_option("--recompute", m.recompute,
                 "gcn, sage: 'aggregation' computes Â·x of the layers that aggregate first (in < out) again in "
                 "backward instead of keeping it (less memory, one more SpMM each); 'layer' recomputes all a "
                 "layer would keep beyond its input (gcn, sage: as 'aggregation'; gat: x·W and its scores, one "
                 "more GEMM each); 'none' keeps it; 'auto' recomputes Â·x only when the memory plan would not "
                 "fit otherwise")
      ->capture_default_str()
      ->check(CLI::IsMember({"auto", "none", "aggregation", "layer"}));
  app.add_option("--activation-dtype", m.activation_dtype,
                 "gcn, sage, gat: 'bf16' keeps the activations a step saves for backward (hidden outputs, Â·x) "
                 "in bfloat16, half the bytes, widened for every product (float32 arithmetic); 'f32' keeps them "
                 "whole")
      ->capture_default_str()
      ->check(CLI::IsMember({"f32", "bf16"}));
  app.add_option("--json", o.json, "Write the summary as JSON to FILE ('-' = stdout)")->check(writable_output_file());
  app.add_flag("--plan-only", o.plan_only,
               "Print (and with --json write) every rank's memory plan, halo rows and halo traffic per epoch, and "
               "whether it fits, then stop: nothing is trained (with --partitions only partition.json is read; with "
               "--dataset and --world-size its graph is partitioned in memory; with --dataset alone one process is "
               "planned as training would plan it)");
  app.add_option("--world-size", o.world_size,
                 "--plan-only with --dataset: the ranks to plan for (the dataset is partitioned in memory, as "
                 "halo-partition would); without it, one process (a heterogeneous dataset: always)")
      ->check(CLI::Range(2, 1 << 20));
  app.add_option("--device-memory", o.device_memory,
                 "--plan-only: each rank's memory (e.g. 141G; a GPU's with --device cuda); default: this machine's "
                 "available memory");
  app.add_option("--plan-scale", o.plan_scale,
                 "--plan-only: multiply every part's vertices, edges and halo by K (the plan of a graph K times "
                 "larger with the same shape, e.g. from a 1/20 sample)")
      ->check(CLI::Range(1.0, 1e6));
  app.add_option("--plan-partitioner", o.plan_partitioner, "--plan-only with --dataset: how to partition")
      ->capture_default_str()
      ->check(CLI::IsMember({"metis", "stream", "random"}));
  app.add_flag("-q,--quiet", o.quiet, "Print only warnings and errors");
  app.add_flag("-v,--verbose", o.verbose, "Print debug messages (the memory plan table)");

  app.set_config("--config", "", "Read settings from a JSON file whose keys are the long flag names; "
                                 "flags on the command line override it");
  app.config_formatter(std::make_shared<JsonConfig>(&app));
}

void finish_train_options(TrainOptions& o) {
  if (o.dataset.empty() == o.partitions.empty())
    throw InvalidArgument("give exactly one of --dataset DIR (one process) and --partitions DIR (one rank per part)");
  if (o.train.boundary_sample_rate <= 0.0)
    throw InvalidArgument("--boundary-sample-rate must be in (0, 1], got " + std::to_string(o.train.boundary_sample_rate));
  if (o.add_reverse_relations && !o.partitions.empty())
    throw InvalidArgument("--add-reverse-relations changes a whole dataset's relations; a partition keeps those it "
                          "was cut with: convert with halo-convert ogb --add-reverse-relations, then partition");
  if (!o.plan_only && (o.world_size > 0 || !o.device_memory.empty() || o.plan_scale != 1.0))
    throw InvalidArgument(
        "--world-size, --device-memory and --plan-scale describe a job to plan: they need --plan-only");
  if (o.plan_only && !o.partitions.empty() && o.world_size > 0)
    throw InvalidArgument("--world-size is the partition's part count with --partitions; drop it");
  if (o.partitions.empty() && o.train.boundary_sample_rate < 1.0)
    throw InvalidArgument("--boundary-sample-rate samples the halo of a partitioned run; it needs --partitions DIR");
  o.train.early_stopping.metric = train::stopping_metric_from_string(o.early_stopping_metric);
  o.train.device = kernels::parse_device(o.device);
  o.train.memory_limit = o.memory_limit.empty() ? 0 : train::parse_byte_size(o.memory_limit);
  o.train.feature_memory_budget = o.feature_memory_budget.empty() ? 0 : train::parse_byte_size(o.feature_memory_budget);
  if (!o.feature_memory_budget.empty() && o.train.feature_memory_budget == 0)
    throw InvalidArgument("--feature-memory-budget must be positive, got '" + o.feature_memory_budget + "'");
  if (o.train.precompute_first_aggregation && o.model.input_dropout != 0.0f)
    throw InvalidArgument(fmt::format("--precompute-first-aggregation needs --input-dropout 0 (Â·X is constant only "
                                      "when nothing random touches X), got {}",
                                      o.model.input_dropout));
}

nlohmann::json describe_settings(const TrainOptions& o) {
  const train::ModelConfig& m = o.model;
  const train::TrainConfig& t = o.train;
  return json{{"dataset", o.dataset},
              {"partitions", o.partitions},
              {"boundary-sample-rate", t.boundary_sample_rate},
              {"model", m.kind},
              {"heads", m.heads},
              {"out-heads", m.out_heads},
              {"attn-dropout", decimal(m.attention_dropout)},
              {"negative-slope", decimal(m.negative_slope)},
              {"residual", m.residual},
              {"bases", m.num_bases},
              {"embedding-dim", m.embedding_dim},
              {"add-reverse-relations", o.add_reverse_relations},
              {"layers", m.layers},
              {"hidden", m.hidden},
              {"dropout", decimal(m.dropout)},
              {"input-dropout", decimal(m.input_dropout)},
              {"batch-norm", m.batch_norm},
              {"bias", m.bias},
              {"weight-decay", decimal(m.weight_decay)},
              {"weight-decay-first-layer-only", m.weight_decay_first_layer_only},
              {"optimizer", t.optimizer.kind},
              {"lr", decimal(t.optimizer.lr)},
              {"momentum", decimal(t.optimizer.momentum)},
              {"epochs", t.epochs},
              {"eval-every", t.eval_every},
              {"patience", t.early_stopping.patience},
              {"early-stopping-metric", o.early_stopping_metric},
              {"runs", t.runs},
              {"seed", t.seed},
              {"normalize-features", t.normalize_features},
              {"threads", t.threads},
              {"collective-timeout", o.collective_timeout_s},
              {"tensorboard", o.tensorboard},
              {"allow-nonfinite", t.allow_nonfinite},
              {"no-verify", !t.verify_checksums},
              {"device", o.device},
              {"checkpoint", t.checkpoint_dir},
              {"checkpoint-every", t.checkpoint_every},
              {"resume", t.resume},
              {"predictions", t.predictions_dir},
              {"memory-limit", t.memory_limit},
              {"feature-memory-budget", t.feature_memory_budget},
              {"precompute-first-aggregation", t.precompute_first_aggregation},
              {"recompute", m.recompute},
              {"activation-dtype", m.activation_dtype}};
}

}  // namespace halo::tools
