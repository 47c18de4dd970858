// COO edge lists to CSR: a stable parallel counting sort by row (per-thread histograms, a scan, a
// scatter; in two levels, blocks of rows then rows), columns sorted within each row (by a radix
// sort of the blocks that need it, or row by row), then the optional merging of duplicates and
// adding of self loops (rebuild_rows, shared with with_self_loops).
#include "graph/detail/coo_to_csr.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "graph/base/parallel.hpp"
#include "graph/build.hpp"
#include "graph/detail/radix_by_column.hpp"

namespace halo::graph {
namespace {

// The edge list that gets sorted: the input edges, then, when symmetrising, every input edge
// reversed, in the order OGB's add_inverse_edge concatenates them. Sorting this list stably keeps
// that order among the copies of a repeated edge.
template <class I>
struct EdgeList {
  const I* rows;
  const I* cols;
  const float* weights;  // nullptr when unweighted
  std::int64_t num_input;
  std::int64_t size;  // num_input, or 2 * num_input when symmetrising

  // Calls fn(v, row, col, input_edge) for the edges v in [begin, end) of the list.
  template <class F>
  void for_each(std::int64_t begin, std::int64_t end, F&& fn) const {
    for (std::int64_t v = begin; v < std::min(end, num_input); ++v) fn(v, rows[v], cols[v], v);
    for (std::int64_t v = std::max(begin, num_input); v < end; ++v) {
      const std::int64_t e = v - num_input;
      fn(v, cols[e], rows[e], e);
    }
  }
};

template <class I>
[[noreturn]] void throw_bad_edge(std::int64_t num_rows, std::int64_t num_cols, const I* rows, const I* cols,
                                 std::int64_t e) {
  const std::int64_t r = rows[e], c = cols[e];
  if (r < 0 || r >= num_rows)
    throw InvalidArgument("csr_from_coo: edge " + std::to_string(e) + " has row " + std::to_string(r) +
                          ", expected 0 <= row < " + std::to_string(num_rows));
  throw InvalidArgument("csr_from_coo: edge " + std::to_string(e) + " has column " + std::to_string(c) +
                        ", expected 0 <= column < " + std::to_string(num_cols));
}

// Per-thread scratch space of sort_row: the other side of its merges, and its runs' bounds.
template <class O>
struct RowSortScratch {
  std::vector<O> cols;
  std::vector<float> weights;
  std::vector<std::int64_t> bounds, next_bounds;
};

// Merges the sorted runs [a, b) and [b, c) of (cols, weights) into out (stable: on equal columns
// the left run's entry goes first). Branch-free choice of the next entry, since the runs of a
// row (its edges as listed, then its reversed edges) interleave at random.
template <class O>
void merge_runs(const O* cols, const float* weights, std::int64_t a, std::int64_t b, std::int64_t c, O* out_cols,
                float* out_w) {
  std::int64_t i = a, j = b, k = a;
  while (i < b && j < c) {
    const bool right = cols[j] < cols[i];
    const std::int64_t from = right ? j : i;
    out_cols[k] = cols[from];
    if (weights != nullptr) out_w[k] = weights[from];
    j += right;
    i += !right;
    ++k;
  }
  const std::int64_t rest = i < b ? i : j;
  const std::int64_t count = c - k;
  std::copy(cols + rest, cols + rest + count, out_cols + k);
  if (weights != nullptr) std::copy(weights + rest, weights + rest + count, out_w + k);
}

// Sorts one row by column, carrying the weights; stable, so copies of an edge keep their order.
// A natural merge sort: the row's ascending runs are merged in pairs, back and forth with the
// scratch arrays, until one is left. The rows sent here are nearly sorted, most often two runs:
// an edge list sorted by row, symmetrised, gives each row its listed edges and then its reversed
// ones, each run in ascending order.
template <class O>
void sort_row(O* cols, float* weights, std::int64_t n, RowSortScratch<O>& s) {
  s.bounds.assign(1, 0);
  for (std::int64_t i = 1; i < n; ++i)
    if (cols[i] < cols[i - 1]) s.bounds.push_back(i);
  if (s.bounds.size() == 1) return;
  s.bounds.push_back(n);
  s.cols.resize(static_cast<std::size_t>(n));
  if (weights != nullptr) s.weights.resize(static_cast<std::size_t>(n));
  O* from_cols = cols;
  float* from_w = weights;
  O* to_cols = s.cols.data();
  float* to_w = weights != nullptr ? s.weights.data() : nullptr;
  while (s.bounds.size() > 2) {
    s.next_bounds.assign(1, 0);
    std::size_t r = 0;
    for (; r + 2 < s.bounds.size(); r += 2) {
      merge_runs(from_cols, from_w, s.bounds[r], s.bounds[r + 1], s.bounds[r + 2], to_cols, to_w);
      s.next_bounds.push_back(s.bounds[r + 2]);
    }
    if (r + 1 < s.bounds.size()) {  // an odd run out: carried over as it is
      const std::int64_t a = s.bounds[r], c = s.bounds[r + 1];
      std::copy(from_cols + a, from_cols + c, to_cols + a);
      if (weights != nullptr) std::copy(from_w + a, from_w + c, to_w + a);
      s.next_bounds.push_back(c);
    }
    std::swap(s.bounds, s.next_bounds);
    std::swap(from_cols, to_cols);
    std::swap(from_w, to_w);
  }
  if (from_cols != cols) {
    std::copy(from_cols, from_cols + n, cols);
    if (weights != nullptr) std::copy(from_w, from_w + n, weights);
  }
}

// Scratch space of sort_block, reused from block to block of a run.
template <class O, class R>
struct BlockScratch {
  std::vector<std::int64_t> cursor;    // per row of the block: its count, then its next free position
  std::vector<std::int64_t> last_col;  // per row of the block: the column of its latest edge
  std::vector<O> cols, cols_sorted;
  std::vector<R> rows, rows_sorted;
  std::vector<float> weights, weights_sorted;
  std::vector<std::int64_t> digit_count;
  RowSortScratch<O> row_sort;
};

// One block of the counting sort: rows [r0, r1), whose edges fill positions [begin, end).
struct BlockSpan {
  std::int64_t r0, r1, begin, end;
};

// Scatters a block's list to its rows in list order (stable), from each row's first position.
template <class O, class R>
void scatter_to_rows(const BlockSpan& span, const detail::ColumnRowList<O, R>& list, const std::int64_t* indptr,
                     O* out_cols, float* out_w, std::vector<std::int64_t>& cursor) {
  cursor.assign(indptr + span.r0, indptr + span.r1);
  const std::int64_t n = span.end - span.begin;
  for (std::int64_t i = 0; i < n; ++i) {
    const std::int64_t pos = cursor[static_cast<std::size_t>(list.rows[i])]++;
    out_cols[pos] = list.cols[i];
    if (out_w != nullptr) out_w[pos] = list.weights[i];
  }
}

// Pass 3 of the counting sort for one block, whose edges sit at [begin, end) of the output in
// list order with their rows-in-block in row_of: counts its rows, writes their offsets, and
// scatters the edges to their rows (stable again). The count notes each edge whose column is
// below the one before it in its row. With none, the scatter alone leaves every row sorted by
// column (an input sorted by row gives that, and so does its reverse when symmetrising). With
// many, the block is first radix-sorted by column (stable), which sorts every row in a few passes
// over data in cache; with a few, the rows are sorted one by one after the scatter.
template <class O, class R>
void sort_block(const BlockSpan& span, R* row_of, O* out_cols, float* out_w, std::int64_t* indptr, int col_bits,
                BlockScratch<O, R>& s) {
  const std::int64_t n = span.end - span.begin;
  const R* rows = row_of + span.begin;
  const O* cols = out_cols + span.begin;
  const auto num_rows = static_cast<std::size_t>(span.r1 - span.r0);
  s.cursor.assign(num_rows, 0);
  s.last_col.assign(num_rows, 0);
  std::int64_t descents = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    const R r = rows[i];
    descents += cols[i] < s.last_col[r];
    s.last_col[r] = cols[i];
    ++s.cursor[r];
  }
  std::int64_t run = span.begin;
  for (std::int64_t r = span.r0; r < span.r1; ++r) {
    indptr[r] = run;
    run += s.cursor[static_cast<std::size_t>(r - span.r0)];
  }
  // The scatter writes over the block, so it reads the radix sort's output or else a copy.
  const bool radix = descents > 0 && 8 * descents >= n;
  detail::ColumnRowList<O, R> list{};
  if (radix) {
    s.cols.resize(static_cast<std::size_t>(n));
    s.rows.resize(static_cast<std::size_t>(n));
    s.cols_sorted.resize(static_cast<std::size_t>(n));
    s.rows_sorted.resize(static_cast<std::size_t>(n));
    if (out_w != nullptr) {
      s.weights.resize(static_cast<std::size_t>(n));
      s.weights_sorted.resize(static_cast<std::size_t>(n));
    }
    const detail::ColumnRowList<O, R> in{out_cols + span.begin, row_of + span.begin,
                                         out_w != nullptr ? out_w + span.begin : nullptr};
    const detail::ColumnRowList<O, R> a{s.cols.data(), s.rows.data(), out_w != nullptr ? s.weights.data() : nullptr};
    const detail::ColumnRowList<O, R> b{s.cols_sorted.data(), s.rows_sorted.data(),
                                        out_w != nullptr ? s.weights_sorted.data() : nullptr};
    list = detail::radix_sort_by_column(n, in, a, b, col_bits, s.digit_count);
    HALO_ASSERT(list.cols != in.cols);  // a descent needs two columns, so col_bits > 0
  } else {
    s.cols.assign(cols, cols + n);
    if (out_w != nullptr) s.weights.assign(out_w + span.begin, out_w + span.end);
    list = {s.cols.data(), row_of + span.begin, out_w != nullptr ? s.weights.data() : nullptr};
  }
  scatter_to_rows(span, list, indptr, out_cols, out_w, s.cursor);
  if (radix || descents == 0) return;
  for (std::int64_t r = span.r0; r < span.r1; ++r) {
    const std::int64_t end = r + 1 < span.r1 ? indptr[r + 1] : span.end;
    sort_row(out_cols + indptr[r], out_w != nullptr ? out_w + indptr[r] : nullptr, end - indptr[r], s.row_sort);
  }
}

// Rows are cut into blocks of 2^shift consecutive rows: as many blocks as give each about
// block_edges edges of the list, so that pass 3 sorts a block in the core's cache, but at most
// max_row_blocks, so that pass 2's write fronts stay in cache too. On a products-scale list
// (2.4 M rows, 123 M entries: 2392 blocks of 1024 rows) the build of shuffled edges took 1.8-2.3 s
// against 2.3-3.0 s with the earlier 1024 blocks of 4096 rows (2-core Xeon).
constexpr std::int64_t block_edges = std::int64_t{1} << 15;
constexpr std::int64_t max_row_blocks = 4096;

// The block shift for a list of list_size entries over num_rows rows; at most 32, so that the
// rows within a block fit 32 bits.
int block_shift(std::int64_t num_rows, std::int64_t list_size) {
  const std::int64_t wanted = std::clamp<std::int64_t>(list_size / block_edges, 1, max_row_blocks);
  int shift = 0;
  while (shift < 32 && num_rows > 0 && ((num_rows - 1) >> shift) >= wanted) ++shift;
  return shift;
}

// The counting sort, in two stable levels so that no pass writes all over memory: edges are first
// scattered into blocks of rows (few enough blocks for the write fronts to stay in cache), then each
// block, small enough to stay in cache, is counting-sorted by row on its own. The output arrays
// double as the blocks' storage; one extra array holds each edge's row within its block in
// between, as R (16 bits while blocks hold at most 2^16 rows, halving that array).
// I: input id type, O: output index type, R: row-in-block type.
template <class I, class O, class R>
CsrGraph sort_by_row(std::int64_t num_rows, std::int64_t num_cols, const EdgeList<I>& edges, bool drop_self_loops,
                     bool symmetric, int shift) {
  const std::int64_t num_blocks = num_rows == 0 ? 0 : ((num_rows - 1) >> shift) + 1;
  const auto row_in_block = static_cast<std::int64_t>((std::int64_t{1} << shift) - 1);
  const auto block_of = [shift](I row) { return static_cast<std::size_t>(static_cast<std::int64_t>(row) >> shift); };

  // Pass 1, per thread over a contiguous share of the list: count edges per block and find the
  // first malformed input edge (reported after the pass, so no thread has to stop early).
  const int max_t = max_threads();
  std::vector<std::vector<std::int64_t>> hist(static_cast<std::size_t>(max_t));
  std::vector<std::int64_t> share_begin(static_cast<std::size_t>(max_t), 0);
  std::vector<std::int64_t> share_end(static_cast<std::size_t>(max_t), 0);
  std::vector<std::int64_t> first_bad(static_cast<std::size_t>(max_t), edges.num_input);
  int shares = 1;
  parallel_for_each_thread(0, edges.size, [&](int t, int threads, std::int64_t b, std::int64_t e) {
    HALO_ASSERT(threads <= max_t);
    const auto ts = static_cast<std::size_t>(t);
    if (t == 0) shares = threads;
    share_begin[ts] = b;
    share_end[ts] = e;
    std::vector<std::int64_t>& count = hist[ts];
    count.assign(static_cast<std::size_t>(num_blocks), 0);
    std::int64_t bad = edges.num_input;
    edges.for_each(b, e, [&](std::int64_t, I row, I col, std::int64_t input_edge) {
      if (row < 0 || row >= num_rows || col < 0 || col >= num_cols) {
        bad = std::min(bad, input_edge);
        return;
      }
      if (drop_self_loops && row == col) return;
      ++count[block_of(row)];
    });
    first_bad[ts] = bad;
  });
  const std::int64_t bad = *std::min_element(first_bad.begin(), first_bad.end());
  if (bad < edges.num_input) throw_bad_edge(num_rows, num_cols, edges.rows, edges.cols, bad);

  // Scan, block-major: hist[t][k] becomes where share t starts writing inside block k.
  std::vector<std::int64_t> block_begin(static_cast<std::size_t>(num_blocks) + 1, 0);
  std::int64_t num_edges = 0;
  for (std::size_t k = 0; k < static_cast<std::size_t>(num_blocks); ++k) {
    block_begin[k] = num_edges;
    for (int t = 0; t < shares; ++t) num_edges += std::exchange(hist[static_cast<std::size_t>(t)][k], num_edges);
  }
  block_begin[static_cast<std::size_t>(num_blocks)] = num_edges;

  // Pass 2: each share scatters its edges into the blocks in list order, which keeps the sort
  // stable. Shares are replayed by index, so this pass does not need the same team size again.
  auto indices = Array<O>::vector(num_edges);
  Array<float> weights = edges.weights != nullptr ? Array<float>::vector(num_edges) : Array<float>();
  auto row_array = Array<R>::vector(num_edges);
  R* row_of = row_array.data();
  O* out_cols = indices.data();
  float* out_w = edges.weights != nullptr ? weights.data() : nullptr;
  parallel_for(
      0, shares,
      [&](std::int64_t t) {
        std::int64_t* cursor = hist[static_cast<std::size_t>(t)].data();
        edges.for_each(share_begin[static_cast<std::size_t>(t)], share_end[static_cast<std::size_t>(t)],
                       [&](std::int64_t, I row, I col, std::int64_t input_edge) {
                         if (drop_self_loops && row == col) return;
                         const std::int64_t pos = cursor[block_of(row)]++;
                         row_of[pos] = static_cast<R>(row & row_in_block);
                         out_cols[pos] = static_cast<O>(col);
                         if (out_w != nullptr) out_w[pos] = edges.weights[input_edge];
                       });
      },
      1);
  hist = {};

  // Pass 3, per block (see sort_block), in runs of blocks that share their scratch space.
  auto indptr = Array<std::int64_t>::vector(num_rows + 1);
  indptr[num_rows] = num_edges;
  const int col_bits = detail::column_bits(num_cols);
  parallel_for_ranges(
      0, num_blocks,
      [&](std::int64_t kb, std::int64_t ke) {
        BlockScratch<O, R> scratch;
        for (std::int64_t k = kb; k < ke; ++k) {
          const BlockSpan span{k << shift, std::min(num_rows, (k + 1) << shift),
                               block_begin[static_cast<std::size_t>(k)], block_begin[static_cast<std::size_t>(k) + 1]};
          sort_block(span, row_of, out_cols, out_w, indptr.data(), col_bits, scratch);
        }
      },
      std::max<std::int64_t>(1, num_blocks / (8 * max_t)));

  CsrProperties props;
  props.sorted = true;
  props.symmetric = symmetric;
  return CsrGraph(num_rows, num_cols, std::move(indptr), std::move(indices), std::move(weights), props);
}

// Sum of a run of duplicate weights in a canonical order (ascending, in double), so that the two
// mirrored runs of a symmetric multigraph, which hold the same weights in different orders,
// merge to the same float.
float merged_weight(const float* w, std::int64_t n, std::vector<float>& scratch) {
  if (n == 1) return w[0];
  scratch.assign(w, w + n);
  std::sort(scratch.begin(), scratch.end());
  double sum = 0.0;
  for (float x : scratch) sum += x;
  return static_cast<float>(sum);
}

template <class O>
CsrGraph rebuild_rows_typed(const CsrGraph& g, const CsrView<O> v, const detail::RowRebuild& what) {
  const bool sorted = g.properties().sorted;
  HALO_EXPECTS(sorted || !what.drop_duplicates, "merging duplicate edges needs rows sorted by column");
  const std::int64_t loop_rows = what.add_self_loops ? std::min(v.num_rows, v.num_cols) : 0;
  auto has_loop = [&](std::int64_t r) {
    const O* b = v.indices + v.indptr[r];
    const O* e = v.indices + v.indptr[r + 1];
    return sorted ? std::binary_search(b, e, static_cast<O>(r)) : std::find(b, e, static_cast<O>(r)) != e;
  };

  auto indptr = Array<std::int64_t>::vector(v.num_rows + 1);
  parallel_for(0, v.num_rows, [&](std::int64_t r) {
    std::int64_t n = v.degree(r);
    if (what.drop_duplicates)
      for (std::int64_t p = v.indptr[r] + 1; p < v.indptr[r + 1]; ++p) n -= v.indices[p] == v.indices[p - 1];
    if (r < loop_rows && !has_loop(r)) ++n;
    indptr[r] = n;
  });
  const std::int64_t num_edges = exclusive_scan_in_place(indptr.data(), v.num_rows);
  indptr[v.num_rows] = num_edges;

  auto indices = Array<O>::vector(num_edges);
  Array<float> weights = v.weights != nullptr ? Array<float>::vector(num_edges) : Array<float>();
  O* out_cols = indices.data();
  float* out_w = v.weights != nullptr ? weights.data() : nullptr;
  parallel_for_ranges(
      0, v.num_rows,
      [&](std::int64_t rb, std::int64_t re) {
        std::vector<float> scratch;
        for (std::int64_t r = rb; r < re; ++r) {
          std::int64_t out = indptr[r];
          bool loop_pending = r < loop_rows && !has_loop(r);
          auto emit = [&](O col, float w) {
            out_cols[out] = col;
            if (out_w != nullptr) out_w[out] = w;
            ++out;
          };
          std::int64_t p = v.indptr[r];
          while (p < v.indptr[r + 1]) {
            const O col = v.indices[p];
            if (loop_pending && sorted && col > r) {
              emit(static_cast<O>(r), 1.0f);
              loop_pending = false;
            }
            std::int64_t run = 1;
            if (what.drop_duplicates)
              while (p + run < v.indptr[r + 1] && v.indices[p + run] == col) ++run;
            emit(col, v.weights != nullptr ? merged_weight(v.weights + p, run, scratch) : 1.0f);
            p += run;
          }
          if (loop_pending) emit(static_cast<O>(r), 1.0f);
          HALO_ASSERT(out == indptr[r + 1]);
        }
      },
      1024);
  return CsrGraph(v.num_rows, v.num_cols, std::move(indptr), std::move(indices), std::move(weights), g.properties());
}

}  // namespace

namespace detail {

CsrGraph rebuild_rows(const CsrGraph& g, const RowRebuild& what) {
  return visit(g, [&](auto v) { return rebuild_rows_typed(g, v, what); });
}

template <class I>
CsrGraph sort_coo_by_row(std::int64_t num_rows, std::int64_t num_cols, const I* rows, const I* cols,
                         const float* weights, std::int64_t num_edges, bool symmetrize, bool drop_self_loops,
                         IndexType index_type, bool symmetric) {
  // Named after the public entry point, which is where callers' mistakes come from.
  auto expects = [](bool ok, const std::string& message) {
    if (!ok) throw InvalidArgument("csr_from_coo: " + message);
  };
  expects(num_rows >= 0 && num_cols >= 0,
          "negative shape " + std::to_string(num_rows) + " x " + std::to_string(num_cols));
  expects(num_edges >= 0, "negative edge count " + std::to_string(num_edges));
  expects(num_edges == 0 || (rows != nullptr && cols != nullptr), "rows and cols must not be null");
  expects(!symmetrize || num_rows == num_cols,
          "symmetrize needs a square graph, got " + std::to_string(num_rows) + " x " + std::to_string(num_cols));
  expects(num_edges <= std::numeric_limits<std::int64_t>::max() / 2, "too many edges: " + std::to_string(num_edges));

  const EdgeList<I> edges{rows, cols, weights, num_edges, symmetrize ? 2 * num_edges : num_edges};
  const int shift = block_shift(num_rows, edges.size);
  expects(num_rows == 0 || ((num_rows - 1) >> shift) < max_row_blocks,
          "too many rows: " + std::to_string(num_rows) + ", at most 2^44");
  const bool wide = index_type == IndexType::i64 || index_type_for(num_cols) == IndexType::i64;
  if (shift <= 16)
    return wide ? sort_by_row<I, std::int64_t, std::uint16_t>(num_rows, num_cols, edges, drop_self_loops, symmetric, shift)
                : sort_by_row<I, std::int32_t, std::uint16_t>(num_rows, num_cols, edges, drop_self_loops, symmetric, shift);
  return wide ? sort_by_row<I, std::int64_t, std::uint32_t>(num_rows, num_cols, edges, drop_self_loops, symmetric, shift)
              : sort_by_row<I, std::int32_t, std::uint32_t>(num_rows, num_cols, edges, drop_self_loops, symmetric, shift);
}

template CsrGraph sort_coo_by_row<std::int32_t>(std::int64_t, std::int64_t, const std::int32_t*, const std::int32_t*,
                                                const float*, std::int64_t, bool, bool, IndexType, bool);
template CsrGraph sort_coo_by_row<std::int64_t>(std::int64_t, std::int64_t, const std::int64_t*, const std::int64_t*,
                                                const float*, std::int64_t, bool, bool, IndexType, bool);

}  // namespace detail

template <class I>
CsrGraph csr_from_coo(std::int64_t num_rows, std::int64_t num_cols, const I* rows, const I* cols, const float* weights,
                      std::int64_t num_edges, const CooToCsrOptions& options) {
  CsrGraph g = detail::sort_coo_by_row(num_rows, num_cols, rows, cols, weights, num_edges, options.symmetrize,
                                       options.drop_self_loops, options.index_type, options.symmetrize);
  if (!options.drop_duplicates && !options.add_self_loops) return g;
  return detail::rebuild_rows(g, {options.drop_duplicates, options.add_self_loops});
}

template CsrGraph csr_from_coo<std::int32_t>(std::int64_t, std::int64_t, const std::int32_t*, const std::int32_t*,
                                             const float*, std::int64_t, const CooToCsrOptions&);
template CsrGraph csr_from_coo<std::int64_t>(std::int64_t, std::int64_t, const std::int64_t*, const std::int64_t*,
                                             const float*, std::int64_t, const CooToCsrOptions&);

}  // namespace halo::graph
