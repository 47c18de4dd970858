// halo-convert synth: generates a learnable dataset (SBM or R-MAT) and writes it as a halo
// dataset directory, or in OGB's raw layout with --layout ogb.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "datasets/atomic_output.hpp"
#include "datasets/dataset_dir.hpp"
#include "datasets/ogb_writer.hpp"
#include "datasets/synth.hpp"
#include "graph/base/log.hpp"
#include "graph/base/progress.hpp"
#include "tools/common/program.hpp"
#include "tools/halo_convert/commands.hpp"
#include "tools/halo_convert/summary.hpp"

namespace halo::tools {

void add_synth_command(CLI::App& app, SynthCommand& c) {
  CLI::App* sub = app.add_subcommand("synth", "Generate a dataset with learnable labels");
  sub->add_option("model", c.model, "Generator: sbm (degree-corrected stochastic block model) or rmat (Graph500 R-MAT)")
      ->required()
      ->check(CLI::IsMember({"sbm", "rmat"}));
  sub->add_option("destination", c.destination, "Output directory")->required();
  sub->add_option("--nodes", c.nodes, "Number of vertices")->capture_default_str()->check(CLI::Range(std::int64_t{2}, std::int64_t{2147483647}));
  sub->add_option("--avg-degree", c.avg_degree, "Mean degree of the stored (symmetric) graph")->capture_default_str()->check(CLI::PositiveNumber);
  sub->add_option("--features", c.features, "Feature width")->capture_default_str()->check(CLI::NonNegativeNumber);
  sub->add_option("--classes", c.classes, "Number of classes")->capture_default_str()->check(CLI::Range(std::int64_t{2}, std::int64_t{1} << 20));
  sub->add_option("--homophily", c.homophily, "SBM: probability that an edge stays inside a class")->capture_default_str()->check(CLI::Range(0.0, 1.0));
  sub->add_option("--seed", c.seed, "Random seed")->capture_default_str();
  sub->add_option("--layout", c.layout,
                  "Output layout: halo (dataset directory), ogb (OGB raw csv.gz) or ogb-npz (OGB's binary layout, "
                  "as ogbn-papers100M's, every edge stored)")
      ->capture_default_str()
      ->check(CLI::IsMember({"halo", "ogb", "ogb-npz"}));
  sub->add_option("--compression-level", c.compression_level,
                  "ogb layouts: zlib level, 0 (stored) to 9 (numpy's savez_compressed uses 6)")
      ->capture_default_str()
      ->check(CLI::Range(0, 9));
  add_feature_dtype_option(sub, c.feature_dtype);
  sub->add_flag("--force", c.force, "Replace the output directory if it exists");
  sub->add_option("--json", c.json, "Write the dataset summary as JSON to FILE ('-' = stdout)")->check(writable_output_file());
}

int run_synth_command(const SynthCommand& c) {
  if (c.layout != "halo" && c.feature_dtype != "f32")
    throw InvalidArgument("--feature-dtype " + c.feature_dtype + " is for halo's dataset directory; the " + c.layout +
                          " layout stores float32 features, as OGB's does");
  datasets::check_new_destination(c.destination, c.force);  // refused before any reading or generating
  Progress timer("synth " + c.model, 0);
  datasets::Dataset ds;
  log_info(fmt::format("generating {} graph: {} vertices, mean degree {}, {} features, {} classes, seed {}", c.model,
                       c.nodes, c.avg_degree, c.features, c.classes, c.seed));
  if (c.model == "sbm") {
    datasets::SbmOptions o;
    o.nodes = c.nodes;
    o.avg_degree = c.avg_degree;
    o.features = c.features;
    o.classes = c.classes;
    o.homophily = c.homophily;
    o.seed = c.seed;
    ds = datasets::generate_sbm(o);
  } else {
    datasets::RmatOptions o;
    o.nodes = c.nodes;
    o.edge_factor = c.avg_degree / 2;  // each generated edge is stored both ways
    o.features = c.features;
    o.classes = c.classes;
    o.seed = c.seed;
    ds = datasets::generate_rmat(o);
  }
  const double generate_seconds = timer.elapsed_seconds();
  log_info(fmt::format("generated in {:.1f} s; writing {} ({} layout)", generate_seconds, c.destination, c.layout));
  if (c.layout == "ogb" || c.layout == "ogb-npz") {
    datasets::OgbWriteOptions w;
    w.layout = c.layout == "ogb" ? datasets::OgbLayout::csv : datasets::OgbLayout::npz;
    w.add_inverse_edge = w.layout == datasets::OgbLayout::csv && !ds.meta.directed;
    w.compression_level = c.compression_level;
    w.overwrite = c.force;
    datasets::write_ogb(ds, c.destination, w);
  } else {
    datasets::write_dataset_dir(ds, c.destination, c.force, datasets::FeatureValues::check,
                                datasets::feature_dtype_from_string(c.feature_dtype));
  }
  nlohmann::json summary = describe_dataset(ds);
  summary["feature_dtype"] = c.feature_dtype;
  add_disk_usage(summary, c.destination);
  summary["layout"] = c.layout;
  summary["generate_seconds"] = generate_seconds;
  summary["total_seconds"] = timer.elapsed_seconds();
  log_info(fmt::format("wrote {} in {:.1f} s", c.destination, timer.elapsed_seconds()));
  if (!c.json.empty()) write_json(c.json, summary);
  return 0;
}

}  // namespace halo::tools
