// The commands of halo-partition: their options, how they register with CLI11, and how they run.
#pragma once

#include <cstdint>
#include <string>

namespace CLI {
class App;
}

namespace halo::tools {

struct PartitionCommand {
  std::string dataset;
  std::int64_t parts = 0;
  std::string method = "metis";
  std::string balance;  // "" = the method's default
  std::string objective = "cut";
  double imbalance = 0.03;
  std::uint64_t seed = 1;
  std::string output;
  bool force = false;
  bool no_verify = false;
  std::string json;
};
void add_partition_options(CLI::App& app, PartitionCommand& command);
int run_partition_command(const PartitionCommand& command);

struct PartitionInfoCommand {
  std::string directory;
  std::string json;
  bool verify = false;
};
void add_partition_info_options(CLI::App& app, PartitionInfoCommand& command);
int run_partition_info_command(const PartitionInfoCommand& command);

struct MetisGraphCommand {
  std::string dataset;
  std::string output;
};
void add_metis_graph_options(CLI::App& app, MetisGraphCommand& command);
int run_metis_graph_command(const MetisGraphCommand& command);

}  // namespace halo::tools
