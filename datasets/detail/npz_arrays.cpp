// OGB's binary arrays: each member streamed once through NpzReader::for_each_chunk (or read in
// place when its dtype is already the one kept), converted and checked chunk by chunk.
#include "datasets/detail/npz_arrays.hpp"

#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <type_traits>

#include "graph/base/error.hpp"
#include "graph/base/parallel.hpp"

namespace halo::datasets::detail {

namespace {

// A float16 element, read as the float it widens to.
struct Float16Element {
  std::uint16_t bits;
  operator float() const { return float16_to_float(bits); }  // NOLINT(google-explicit-constructor): read as a float
};

// Calls fn(static_cast<const S*>(elements)) with S the C++ type of `dtype` (Float16Element for
// float16).
template <class F>
void with_type(DType dtype, const void* elements, F&& fn) {
  switch (dtype) {
    case DType::float32:
      return fn(static_cast<const float*>(elements));
    case DType::float64:
      return fn(static_cast<const double*>(elements));
    case DType::int32:
      return fn(static_cast<const std::int32_t*>(elements));
    case DType::int64:
      return fn(static_cast<const std::int64_t*>(elements));
    case DType::uint8:
      return fn(static_cast<const std::uint8_t*>(elements));
    case DType::boolean:
      return fn(static_cast<const std::uint8_t*>(elements));
    case DType::float16:
      return fn(static_cast<const Float16Element*>(elements));
    case DType::uint16:
      return fn(static_cast<const std::uint16_t*>(elements));
    case DType::bfloat16:
      break;  // never a .npy header's dtype
  }
  throw InvalidArgument(std::string("with_type: no C++ type for ") + to_string(dtype));
}

bool is_integer_dtype(DType d) { return d == DType::int32 || d == DType::int64; }

void require_integer(const NpzReader& npz, const std::string& key, const NpyHeader& h) {
  if (!is_integer_dtype(h.dtype))
    throw IoError(npz.where(key), std::string("dtype is ") + npy_descr(h.dtype) + " (" + to_string(h.dtype) +
                                      "), expected integers (<i8, as OGB writes, or <i4)");
}

template <class I>
Array<I> edge_ids(const NpzReader& npz, const std::string& key, const NpyHeader& h, std::int64_t num_edges,
                  const IdColumn& src, const IdColumn& dst) {
  Array<I> ids = Array<I>::vector(2 * num_edges);
  I* out = ids.data();
  const std::string where = npz.where(key);
  npz.for_each_chunk(key, h, [&](const void* elements, std::int64_t first, std::int64_t count) {
    with_type(h.dtype, elements, [&](const auto* in) {
      // Each chunk lies in the source row, the destination row, or spans both.
      for (std::int64_t part = first; part < first + count;) {
        const bool sources = part < num_edges;
        const std::int64_t end = sources ? std::min(first + count, num_edges) : first + count;
        const IdColumn& column = sources ? src : dst;
        std::int64_t low = 0, high = 0;
        for (std::int64_t i = part; i < end; ++i) {
          const auto v = static_cast<std::int64_t>(in[i - first]);
          low = std::min(low, v);
          high = std::max(high, v);
          out[i] = static_cast<I>(v);
        }
        if (low < 0 || high >= column.limit) {
          std::int64_t i = part;
          while (static_cast<std::int64_t>(in[i - first]) >= 0 &&
                 static_cast<std::int64_t>(in[i - first]) < column.limit)
            ++i;
          const std::int64_t edge = sources ? i : i - num_edges;
          throw IoError(where, "edge " + std::to_string(edge) + " (column " + std::to_string(edge) + " of row " +
                                   (sources ? "0" : "1") + "): " + column.what + " " +
                                   std::to_string(static_cast<std::int64_t>(in[i - first])) + " is out of range [0, " +
                                   std::to_string(column.limit) + ") (" + column.limit_source + ")");
        }
        part = end;
      }
    });
  });
  return ids;
}

[[noreturn]] void bad_value(const std::string& where, std::int64_t index, std::int64_t cols, const std::string& what) {
  throw IoError(where,
                "row " + std::to_string(index / cols) + ", column " + std::to_string(index % cols) + ": " + what);
}

// The header of an edge list: integers of shape (2, E) in C order.
NpyHeader edge_header(const NpzReader& npz, const std::string& key, const ExpectedRows& rows) {
  const NpyHeader h = npz.header(key);
  require_integer(npz, key, h);
  if (h.shape != std::vector<std::int64_t>{2, rows.rows})
    throw IoError(npz.where(key), "has shape " + shape_to_string(h.shape) + ", expected (2, " +
                                      std::to_string(rows.rows) + ") (" + rows.source + ")");
  npy_matrix_shape(npz.where(key), h);  // C order
  return h;
}

}  // namespace

template <class I>
Array<I> read_npz_edge_ids(const NpzReader& npz, const std::string& key, const ExpectedRows& rows, const IdColumn& src,
                           const IdColumn& dst) {
  return edge_ids<I>(npz, key, edge_header(npz, key, rows), rows.rows, src, dst);
}
template Array<std::int32_t> read_npz_edge_ids<std::int32_t>(const NpzReader&, const std::string&, const ExpectedRows&,
                                                             const IdColumn&, const IdColumn&);
template Array<std::int64_t> read_npz_edge_ids<std::int64_t>(const NpzReader&, const std::string&, const ExpectedRows&,
                                                             const IdColumn&, const IdColumn&);

std::int64_t read_npz_count(const NpzReader& npz, const std::string& key) {
  const NpyHeader h = npz.header(key);
  require_integer(npz, key, h);
  if (h.shape.size() != 1 || h.shape[0] == 0)
    throw IoError(npz.where(key), "has shape " + shape_to_string(h.shape) + ", expected one count per graph: (1,)");
  if (h.shape[0] > 1)
    throw UnsupportedError("read_ogb: " + npz.where(key) + " lists " + std::to_string(h.shape[0]) +
                           " graphs; node-property datasets have one (multi-graph files are not supported)");
  std::int64_t value = -1;
  npz.for_each_chunk(key, h, [&](const void* elements, std::int64_t, std::int64_t) {
    with_type(h.dtype, elements, [&](const auto* in) { value = static_cast<std::int64_t>(in[0]); });
  });
  if (value < 0) throw IoError(npz.where(key), "holds the count " + std::to_string(value) + ", which is negative");
  return value;
}

graph::CsrGraph read_npz_edge_csr(const NpzReader& npz, const std::string& key, const ExpectedRows& rows,
                                  const IdColumn& src, const IdColumn& dst, graph::CooToCsrOptions coo) {
  coo.index_type = graph::index_type_for(src.limit);
  const std::int64_t e = rows.rows;
  if (std::max(src.limit, dst.limit) <= std::numeric_limits<std::int32_t>::max()) {
    const Array<std::int32_t> ids = read_npz_edge_ids<std::int32_t>(npz, key, rows, src, dst);
    return graph::csr_from_coo<std::int32_t>(dst.limit, src.limit, ids.data() + e, ids.data(), nullptr, e, coo);
  }
  const Array<std::int64_t> ids = read_npz_edge_ids<std::int64_t>(npz, key, rows, src, dst);
  return graph::csr_from_coo<std::int64_t>(dst.limit, src.limit, ids.data() + e, ids.data(), nullptr, e, coo);
}

Array<float> read_npz_features(const NpzReader& npz, const std::string& key, const ExpectedRows& rows) {
  const NpyHeader h = npz.header(key);
  const std::string where = npz.where(key);
  if (h.dtype == DType::boolean || h.dtype == DType::uint8 || h.dtype == DType::uint16)
    throw IoError(where, std::string("dtype is ") + npy_descr(h.dtype) +
                             ", expected float32 (as OGB writes), float64, float16 "
                             "or integers");
  const NpyMatrixShape shape = npy_matrix_shape(where, h, rows.rows);
  const std::int64_t cols = shape.cols;
  Array<float> x;
  if (h.dtype == DType::float32) {
    x = npz.read<float>(key, rows.rows);
    if (shape.ndim == 1) x = Array<float>::from_buffer(std::move(x).release(), rows.rows, 1, 2);
  } else {
    x = Array<float>::matrix(rows.rows, cols);
    float* out = x.data();
    npz.for_each_chunk(key, h, [&](const void* elements, std::int64_t first, std::int64_t count) {
      with_type(h.dtype, elements, [&](const auto* in) {
        for (std::int64_t i = 0; i < count; ++i) out[first + i] = static_cast<float>(in[i]);
      });
    });
  }
  const float* values = x.data();
  const std::int64_t bad = parallel_find_first(0, x.size(), [&](std::int64_t i) { return !std::isfinite(values[i]); });
  if (bad < x.size())
    bad_value(where, bad, cols,
              fmt::format("feature {} is not finite{}", values[bad], h.dtype == DType::float32 ? "" : " as float32"));
  return x;
}

Array<std::int64_t> read_npz_labels(const NpzReader& npz, const std::string& key, const ExpectedRows& rows,
                                    const LabelSpec& spec) {
  const NpyHeader h = npz.header(key);
  const std::string where = npz.where(key);
  if (h.dtype == DType::boolean || h.dtype == DType::uint8 || h.dtype == DType::float16 || h.dtype == DType::uint16)
    throw IoError(where, std::string("dtype is ") + npy_descr(h.dtype) +
                             ", expected integers or float32/float64 (NaN = no label)");
  const NpyMatrixShape shape = npy_matrix_shape(where, h, rows.rows, spec.columns);
  const std::int64_t cols = shape.cols;
  Array<std::int64_t> y = Array<std::int64_t>::matrix(rows.rows, cols);
  std::int64_t* out = y.data();
  const std::string limit = spec.limit >= 0 ? " (" + spec.limit_source + ")" : "";
  npz.for_each_chunk(key, h, [&](const void* elements, std::int64_t first, std::int64_t count) {
    with_type(h.dtype, elements, [&](const auto* in) {
      using S = std::remove_cv_t<std::remove_pointer_t<decltype(in)>>;
      for (std::int64_t i = 0; i < count; ++i) {
        const S v = in[i];
        std::int64_t label = -1;
        if constexpr (std::is_floating_point_v<S>) {
          if (!std::isnan(v)) {
            if (!(v >= -1 && v < 9.2e18 && v == std::floor(v)))
              bad_value(where, first + i, cols, fmt::format("label {} is not an integer >= -1 or NaN", v));
            label = static_cast<std::int64_t>(v);
          }
        } else {
          label = static_cast<std::int64_t>(v);
          if (label < -1) bad_value(where, first + i, cols, "label " + std::to_string(label) + " is below -1");
        }
        if (spec.limit >= 0 && label >= spec.limit)
          bad_value(where, first + i, cols,
                    "label " + std::to_string(label) + " is not below " + std::to_string(spec.limit) + limit);
        out[first + i] = label;
      }
    });
  });
  return y;
}

}  // namespace halo::datasets::detail
