// read_training_dataset: --dataset read as halo-train trains it.
#include "tools/halo_train/training_dataset.hpp"

#include <fmt/format.h>

#include "datasets/dataset_dir.hpp"
#include "graph/base/error.hpp"
#include "graph/base/log.hpp"
#include "tools/common/folder_hints.hpp"

namespace halo::tools {
namespace {

// --add-reverse-relations: every relation of a heterogeneous dataset gets its reverse (its
// transpose, named "rev_<rel>"), unless it has one or is one.
void add_reverse_relations(datasets::Dataset& ds) {
  if (!ds.meta.is_hetero)
    throw InvalidArgument("--add-reverse-relations is for heterogeneous datasets; '" + ds.meta.name +
                          "' is homogeneous");
  const int before = ds.hetero.num_relations();
  ds.hetero.add_reverse_relations();
  ds.meta.directed = false;
  log_info(fmt::format("--add-reverse-relations: {} relations, {} of them added", ds.hetero.num_relations(),
                       ds.hetero.num_relations() - before));
}

}  // namespace

datasets::Dataset read_training_dataset(const TrainOptions& options) {
  require_folder_kind(options.dataset, FolderKind::halo_dataset, "--dataset");
  datasets::DatasetDirOptions read_options;
  read_options.verify_checksums = options.train.verify_checksums;
  // 16-bit features are read as stored, widened as they are copied or streamed.
  read_options.keep_half_features = true;
  datasets::Dataset ds = datasets::read_dataset_dir(options.dataset, read_options);
  if (options.add_reverse_relations) add_reverse_relations(ds);
  return ds;
}

}  // namespace halo::tools
