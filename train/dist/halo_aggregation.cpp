// HaloAggregation (the SpMMs of the split operator around the halo exchange) and the part's GCN /
// mean operators.
#include "train/dist/halo_aggregation.hpp"

#include <algorithm>
#include <cmath>
#include <memory>
#include <numeric>
#include <type_traits>
#include <utility>
#include <vector>

#include "graph/base/error.hpp"
#include "graph/base/parallel.hpp"
#include "graph/build.hpp"
#include "kernels/spmm.hpp"
#include "train/dist/detail/row_split.hpp"
#include "train/dist/halo_attention_graph.hpp"

namespace halo::train::dist {

using kernels::Tensor;

namespace {

// Completes an exchange left in flight when the work between its begin and finish throws, before
// the tensor it moves rows of is freed (declare it after that tensor).
class InFlightGuard {
 public:
  explicit InFlightGuard(HaloExchange& exchange) : exchange_(exchange) {}
  ~InFlightGuard() { exchange_.abandon(); }
  InFlightGuard(const InFlightGuard&) = delete;
  InFlightGuard& operator=(const InFlightGuard&) = delete;

 private:
  HaloExchange& exchange_;
};

}  // namespace

HaloAggregation::HaloAggregation(graph::CsrGraph a, HaloExchange& exchange, kernels::Device device)
    : num_owned_(a.num_rows()), num_local_(a.num_cols()), device_(device), exchange_(&exchange) {
  HALO_EXPECTS(num_owned_ == exchange.num_owned() && num_local_ == exchange.num_local(),
               "the operator is " + std::to_string(num_owned_) + " x " + std::to_string(num_local_) +
                   ", the part has " + std::to_string(exchange.num_owned()) + " owned and " +
                   std::to_string(exchange.num_local()) + " local vertices");
  {
    const graph::CsrGraph transposed = graph::transpose(a);
    transposed_owned_ = CsrOperator(detail::row_range(transposed, 0, num_owned_), device_);
    transposed_halo_ = CsrOperator(detail::row_range(transposed, num_owned_, num_local_), device_);
  }
  detail::RowSplit split = detail::split_rows_by_column(a, num_owned_);
  interior_ = CsrOperator(std::move(split.interior), device_);
  boundary_ = CsrOperator(std::move(split.boundary), device_);
}

void HaloAggregation::check_device(const char* what, const Tensor& t) const {
  HALO_EXPECTS(t.device() == device_, std::string("HaloAggregation: the ") + what + " is on " +
                                          t.device().to_string() + ", the part's operator on " + device_.to_string() +
                                          " (build the operators for the device the model trains on)");
}

// While a transfer is in flight, only products that neither read what it writes nor write what
// it reads run, and all of them overwrite their own output: the one accumulating product (the
// boundary rows, forward) runs after the exchange has finished. halo's kernels leave the rows an
// accumulating product has no entries for untouched, but cuSPARSE with beta = 1 rewrites every
// row of its output; with this order the automatic choice may still take cuSPARSE for any piece.
Tensor HaloAggregation::forward(const Tensor& x) {
  HALO_EXPECTS(x.rows() == num_owned_, "input has " + std::to_string(x.rows()) + " rows, the part owns " +
                                           std::to_string(num_owned_) + " vertices");
  check_device("input", x);
  Tensor extended = Tensor::empty(num_local_, x.cols(), device_);
  kernels::copy(x.view(), extended.view().slice_rows(0, x.rows()));
  exchange_->begin_forward(extended.view());
  const InFlightGuard guard(*exchange_);
  // The interior rows read only owned rows, which the exchange leaves alone; the boundary rows
  // get 0 here, and then their whole sums, in the unsplit product's order, onto that 0.
  Tensor y = Tensor::empty(num_owned_, x.cols(), device_);
  interior_.multiply(extended.view(), y.view(), kernels::Accumulate::overwrite);
  exchange_->finish_forward();
  if (boundary_.num_edges() > 0) boundary_.multiply(extended.view(), y.view(), kernels::Accumulate::add);
  return y;
}

Tensor HaloAggregation::backward(const Tensor& grad_y) {
  HALO_EXPECTS(grad_y.rows() == num_owned_, "gradient has " + std::to_string(grad_y.rows()) +
                                                " rows, the part owns " + std::to_string(num_owned_) + " vertices");
  check_device("gradient", grad_y);
  Tensor extended = Tensor::empty(num_local_, grad_y.cols(), device_);
  const kernels::TensorView all = extended.view();
  // The halo rows first, so they can travel while the owned rows are computed; the exchange then
  // adds the gradients received onto the owned rows' sums, as the blocking one does.
  transposed_halo_.multiply(grad_y.view(), all.slice_rows(num_owned_, num_local_), kernels::Accumulate::overwrite);
  exchange_->begin_backward(all);
  const InFlightGuard guard(*exchange_);
  transposed_owned_.multiply(grad_y.view(), all.slice_rows(0, num_owned_), kernels::Accumulate::overwrite);
  exchange_->finish_backward();
  Tensor g = Tensor::empty(num_owned_, grad_y.cols(), device_);
  kernels::copy(extended.view().slice_rows(0, num_owned_), g.view());
  return g;
}

namespace {

// The owned rows of the part's CSR, with a self loop added where a row has none when
// `self_loops`, and each row's entries ordered by the global id of their column.
template <class I>
graph::CsrGraph ordered_rows(const graph::CsrView<I>& a, const partition::LocalGraph& part, bool self_loops) {
  const std::int64_t n = a.num_rows;
  auto indptr = Array<std::int64_t>::vector(n + 1);
  indptr[0] = 0;
  for (std::int64_t r = 0; r < n; ++r) {
    bool has_loop = false;
    for (std::int64_t p = a.indptr[r]; p < a.indptr[r + 1]; ++p) has_loop = has_loop || a.indices[p] == r;
    indptr[r + 1] = indptr[r] + a.degree(r) + (self_loops && !has_loop ? 1 : 0);
  }
  const std::int64_t e = indptr[n];
  auto indices = Array<I>::vector(e);
  auto weights = Array<float>::vector(e);
  const std::int64_t* global = part.local_to_global.data();
  parallel_for(
      0, n,
      [&](std::int64_t r) {
        std::int64_t out = indptr[r];
        bool has_loop = false;
        for (std::int64_t p = a.indptr[r]; p < a.indptr[r + 1]; ++p, ++out) {
          indices[out] = a.indices[p];
          weights[out] = a.weights != nullptr ? a.weights[p] : 1.0f;
          has_loop = has_loop || a.indices[p] == r;
        }
        if (self_loops && !has_loop) {
          indices[out] = static_cast<I>(r);
          weights[out] = 1.0f;
        }
        // Sort the row's (column, weight) pairs by global column id; stable keeps the order of
        // repeated entries.
        std::vector<std::int64_t> order(static_cast<std::size_t>(indptr[r + 1] - indptr[r]));
        std::iota(order.begin(), order.end(), indptr[r]);
        std::stable_sort(order.begin(), order.end(), [&](std::int64_t x, std::int64_t y) {
          return global[indices[x]] < global[indices[y]];
        });
        std::vector<I> sorted_indices(order.size());
        std::vector<float> sorted_weights(order.size());
        for (std::size_t k = 0; k < order.size(); ++k) {
          sorted_indices[k] = indices[order[k]];
          sorted_weights[k] = weights[order[k]];
        }
        std::copy(sorted_indices.begin(), sorted_indices.end(), indices.begin() + indptr[r]);
        std::copy(sorted_weights.begin(), sorted_weights.end(), weights.begin() + indptr[r]);
      },
      256);
  return graph::CsrGraph(n, a.num_cols, std::move(indptr), std::move(indices), std::move(weights));
}

// D^-1/2 (A + I) D^-1/2 on the part, as graph::gcn_normalize computes it on the whole graph:
// d = Σ of a row's weights in double, weight(r, c) = a_rc · (d_r^-1/2 · d_c^-1/2) rounded to
// float, with d_c of a halo column computed by its owner.
graph::CsrGraph part_gcn_operator(const partition::LocalGraph& part, HaloExchange& exchange) {
  graph::CsrGraph a = visit(part.graph(), [&](auto v) { return ordered_rows(v, part, true); });
  const std::int64_t n = a.num_rows();
  const Array<std::int64_t>& indptr = a.indptr();
  const Array<float>& w = a.weights();
  std::vector<double> inv_sqrt(static_cast<std::size_t>(n));
  parallel_for(0, n, [&](std::int64_t r) {
    double d = 0.0;
    for (std::int64_t p = indptr[r]; p < indptr[r + 1]; ++p) d += w[p];
    inv_sqrt[static_cast<std::size_t>(r)] = d > 0.0 ? 1.0 / std::sqrt(d) : 0.0;
  });
  std::vector<double> halo = exchange.exchange_values(inv_sqrt);
  inv_sqrt.insert(inv_sqrt.end(), halo.begin(), halo.end());
  auto weights = Array<float>::vector(a.num_edges());
  visit(a, [&](auto v) {
    parallel_for(
        0, n,
        [&](std::int64_t r) {
          const double dr = inv_sqrt[static_cast<std::size_t>(r)];
          for (std::int64_t p = v.indptr[r]; p < v.indptr[r + 1]; ++p)
            weights[p] = static_cast<float>(static_cast<double>(w[p]) * (dr * inv_sqrt[static_cast<std::size_t>(v.indices[p])]));
        },
        1024);
  });
  return std::move(a).with_weights(std::move(weights));
}

// D^-1 A on the part: graph::mean_normalize of the ordered rows (a row's weights depend on its
// own length only, which the part holds whole).
graph::CsrGraph part_mean_operator(const partition::LocalGraph& part) {
  return graph::mean_normalize(visit(part.graph(), [&](auto v) { return ordered_rows(v, part, false); }));
}

}  // namespace

GraphOperators build_part_operators(const partition::LocalGraph& part, const std::string& kind,
                                    HaloExchange& exchange, kernels::Device device) {
  GraphOperators operators;
  operators.communicator = &exchange.communicator();
  if (kind == "gcn")
    operators.gcn = std::make_unique<HaloAggregation>(part_gcn_operator(part, exchange), exchange, device);
  else if (kind == "sage")
    operators.mean = std::make_unique<HaloAggregation>(part_mean_operator(part), exchange, device);
  else if (kind == "gat")
    operators.attention = std::make_unique<HaloAttentionGraph>(
        visit(part.graph(), [&](auto v) { return ordered_rows(v, part, true); }), part, exchange, device);
  else
    throw InvalidArgument("build_part_operators: kind must be gcn, sage or gat, got '" + kind + "'");
  return operators;
}

}  // namespace halo::train::dist
