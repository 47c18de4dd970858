// Parallel readers of the numeric, headerless CSV files of the OGB layout (edge lists, feature
// and label matrices, split id lists): decompression overlapped with parsing (LineBlockReader),
// std::from_chars straight into preallocated arrays, and errors that name the file, the 1-based
// line and the offending value. Every reader accepts gzip (".gz") or plain files.
// Results and errors do not depend on the thread count: when a file has several faults, the one
// on the smallest line is reported.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "graph/base/array.hpp"

namespace halo::datasets::detail {

// A row count a file must have, and which file (or setting) says so, e.g.
// {5278, "num-edge-list.csv.gz"}; rows < 0 means "as many as the file has".
struct ExpectedRows {
  std::int64_t rows = -1;
  std::string source;
};

// A column of ids: every value must lie in [0, limit). `what` names the id ("source vertex")
// and `limit_source` says where the limit comes from ("num-node-list.csv.gz gives 2708").
struct IdColumn {
  std::int64_t limit = 0;
  std::string what;
  std::string limit_source;
};

// Reads a CSV of integer ids with one column per entry of `columns` and exactly rows.rows rows
// (rows.rows >= 0 required); column c comes back as its own array (a value out of [0, limit) of
// its column is an error). I is int32_t or int64_t; every limit must fit I.
// Cost: one pass, parallel; memory: the result only.
template <class I>
std::vector<Array<I>> read_id_columns(const std::string& path, const ExpectedRows& rows,
                                      const std::vector<IdColumn>& columns);

// Reads a one-column CSV of ids of any length (a split file); values must lie in [0, limit).
Array<std::int64_t> read_id_list(const std::string& path, const IdColumn& column);

// Reads rows.rows x F float32 values (F = the number of fields on line 1; rows.rows >= 0
// required). Integer files are converted. NaN and infinities are errors. When `stop` is given
// and becomes true (set by another thread) before the last block is handed out, the read ends
// early with halo::Error (or with the error of a block parsed before).
Array<float> read_float_matrix(const std::string& path, const ExpectedRows& rows,
                               const std::atomic<bool>* stop = nullptr);

// What a label file must hold.
struct LabelSpec {
  std::int64_t columns = -1;   // fields per line; -1: as many as line 1 has
  std::int64_t limit = -1;     // labels must be < limit; -1: no upper bound
  std::string limit_source;    // e.g. "num classes is 7 (meta.json)"
};

// Reads rows.rows x columns labels as int64: integers >= -1 (-1 = unlabelled), where NaN, an
// empty field or an integral float ("3.0", as pandas writes a column with NaN) are accepted
// (NaN and empty become -1). Returns a 2-D array.
Array<std::int64_t> read_label_matrix(const std::string& path, const ExpectedRows& rows, const LabelSpec& spec);

}  // namespace halo::datasets::detail
