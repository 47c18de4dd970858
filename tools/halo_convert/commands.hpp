// The subcommands of halo-convert: their options, how they register with CLI11, and how they run.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace CLI {
class App;
}

namespace halo::tools {

// Registers --feature-dtype f32|f16|bf16 (how a written dataset stores its features) on `sub`.
void add_feature_dtype_option(CLI::App* sub, std::string& value);

struct OgbCommand {
  std::string source;
  std::string destination;
  std::string name;
  std::string split;
  std::string add_inverse_edge;  // "", "true" or "false"
  std::int64_t num_classes = -1;
  bool to_undirected = false;
  bool add_reverse_relations = false;
  std::string node_features_from_edges;  // "", "mean" or "sum"
  std::string feature_dtype = "f32";     // f32, f16 or bf16
  bool keep_edge_features = false;
  bool force = false;
  std::string json;
};
void add_ogb_command(CLI::App& app, OgbCommand& command);
int run_ogb_command(const OgbCommand& command);

struct SynthCommand {
  std::string model;  // sbm or rmat
  std::string destination;
  std::int64_t nodes = 100000;
  double avg_degree = 20;
  std::int64_t features = 64;
  std::int64_t classes = 8;
  double homophily = 0.8;
  std::uint64_t seed = 1;
  std::string layout = "halo";  // halo, ogb or ogb-npz
  std::string feature_dtype = "f32";  // halo layout: f32, f16 or bf16
  int compression_level = 1;    // ogb layouts: zlib level
  bool force = false;
  std::string json;
};
void add_synth_command(CLI::App& app, SynthCommand& command);
int run_synth_command(const SynthCommand& command);

struct InfoCommand {
  std::string directory;
  std::string json;
  bool verify = false;
};
void add_info_command(CLI::App& app, InfoCommand& command);
int run_info_command(const InfoCommand& command);

}  // namespace halo::tools
