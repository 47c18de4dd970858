// What a folder given on a command line is (a halo dataset directory, a partition directory, an
// OGB dataset folder), and the one-line refusal that says which command or flag fits it when a
// program was given the wrong kind.
#pragma once

#include <string>

namespace halo::tools {

enum class FolderKind {
  missing,         // no such folder
  halo_dataset,    // dataset.json (halo-convert's output)
  halo_partition,  // partition.json (halo-partition's output)
  ogb_dataset,     // raw/ (an OGB node-property dataset folder as OGB unpacks it)
  other,
};

// Looks at the folder's top-level names only; reads no file.
FolderKind folder_kind(const std::string& dir);

// Throws InvalidArgument when `dir` is a folder of another kind than `wanted`, naming what it is
// and the command or flag that takes it (`flag` is how the program was given it, e.g.
// "--dataset", or "the source"); returns when it is of the kind wanted, missing or unknown (the reader then says
// what is wrong with it).
void require_folder_kind(const std::string& dir, FolderKind wanted, const std::string& flag);

}  // namespace halo::tools
