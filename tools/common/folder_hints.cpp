// Folder kinds and the refusals that point to the command that fits.
#include "tools/common/folder_hints.hpp"

#include <filesystem>
#include <system_error>

#include "graph/base/error.hpp"

namespace halo::tools {

namespace fs = std::filesystem;

FolderKind folder_kind(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return FolderKind::missing;
  const fs::path p(dir);
  if (fs::exists(p / "dataset.json", ec)) return FolderKind::halo_dataset;
  if (fs::exists(p / "partition.json", ec)) return FolderKind::halo_partition;
  if (fs::is_directory(p / "raw", ec)) return FolderKind::ogb_dataset;
  return FolderKind::other;
}

namespace {

// What the folder is and where it goes instead.
std::string misplaced(const std::string& dir, FolderKind kind, FolderKind wanted) {
  switch (kind) {
    case FolderKind::halo_dataset:
      if (wanted == FolderKind::halo_partition)
        return dir + " is a halo dataset directory (dataset.json), not a partition: train it whole with "
                     "halo-train --dataset " + dir + ", or cut it first with halo-partition " + dir +
               " --parts P -o OUT";
      return dir + " is already a halo dataset directory (dataset.json): use it as it is (halo-train --dataset " +
             dir + ", halo-partition " + dir + " --parts P -o OUT)";
    case FolderKind::halo_partition:
      return dir + " is a partition directory (partition.json), not a dataset: train it with halo-train "
                   "--partitions " + dir + " (mpirun -np P, one rank per part); halo-partition info " + dir +
             " describes it";
    case FolderKind::ogb_dataset:
      if (wanted == FolderKind::halo_partition)
        return dir + " is an OGB dataset folder (raw/), not a partition: convert it with halo-convert ogb " + dir +
               " OUT, cut OUT with halo-partition OUT --parts P -o PARTS, then use PARTS";
      return dir + " is an OGB dataset folder (raw/), not a halo dataset directory: convert it first with "
                   "halo-convert ogb " + dir + " OUT, then use OUT";
    default:
      return std::string();
  }
}

}  // namespace

void require_folder_kind(const std::string& dir, FolderKind wanted, const std::string& flag) {
  const FolderKind kind = folder_kind(dir);
  if (kind == wanted) return;
  if (wanted == FolderKind::ogb_dataset && kind == FolderKind::other)
    throw InvalidArgument(flag + " " + dir + " has no raw/ folder: an OGB dataset folder, as OGB's loaders unpack "
                          "it, holds raw/ (edge.csv.gz and the other files) and split/<name>/ (train.csv.gz, "
                          "valid.csv.gz, test.csv.gz)");
  const std::string what = misplaced(dir, kind, wanted);
  if (!what.empty()) throw InvalidArgument(flag + " " + what);
}

}  // namespace halo::tools
