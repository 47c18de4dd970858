// GPU test of train/layers/hgt_conv.*: the layer on a GPU against the same layer on the CPU
// (outputs, input gradients and every parameter's gradient), on the small ogbn-mag-like graph.
#include "train/layers/hgt_conv.hpp"

#include <catch2/catch.hpp>
#include <cstdint>
#include <utility>
#include <vector>

#include "tests/kernels/kernel_test_util.hpp"
#include "tests/support/gpu.hpp"
#include "tests/train/layers/hetero_test_graphs.hpp"
#include "train/layers/rgcn_graph.hpp"

using namespace halo;
using namespace halo::train;
using kernels::ConstTensorView;
using kernels::Device;
using kernels::Tensor;

TEST_CASE("HgtConv on a GPU gives the CPU layer's outputs and gradients", "[train][gpu]") {
  HALO_SKIP_WITHOUT_GPU();
  const std::int64_t heads = GENERATE(1, 4);
  CAPTURE(heads);
  const graph::HeteroGraph g = test::random_mag(41);
  const RgcnGraph graph(g);
  const std::vector<std::int64_t> in_dims{8, 5, 11, 3};
  HgtConv cpu(graph, in_dims, 8, {heads, {}}, "conv", Device::cpu());
  HgtConv gpu(graph, in_dims, 8, {heads, {}}, "conv", Device::cuda());
  RandomStream rng(42, static_cast<std::uint64_t>(heads));
  const std::vector<Parameter*> cpu_params = cpu.parameters(), gpu_params = gpu.parameters();
  REQUIRE(cpu_params.size() == gpu_params.size());
  for (std::size_t i = 0; i < cpu_params.size(); ++i) {
    cpu_params[i]->value.copy_from(
        test::random_tensor(rng, cpu_params[i]->value.rows(), cpu_params[i]->value.cols()).view());
    gpu_params[i]->value.copy_from(cpu_params[i]->value.view());
  }
  std::vector<Tensor> x, x_gpu, grad_y, grad_y_gpu;
  std::vector<ConstTensorView> x_views, x_gpu_views;
  for (int t = 0; t < graph.num_vertex_types(); ++t) {
    x.push_back(test::random_tensor(rng, graph.num_inputs(t), in_dims[static_cast<std::size_t>(t)]));
    x_gpu.push_back(test::on_gpu(x.back()));
    x_views.push_back(x.back().view());
    x_gpu_views.push_back(x_gpu.back().view());
    grad_y.push_back(test::random_tensor(rng, graph.num_outputs(t), 8));
    grad_y_gpu.push_back(test::on_gpu(grad_y.back()));
  }
  const Step step;
  const std::vector<Tensor> y = cpu.forward(x_views, step), y_gpu = gpu.forward(x_gpu_views, step);
  const std::vector<Tensor> gx = cpu.backward(std::move(grad_y), step);
  const std::vector<Tensor> gx_gpu = gpu.backward(std::move(grad_y_gpu), step);
  for (std::size_t t = 0; t < y.size(); ++t) {
    CAPTURE(t);
    CHECK(test::difference(test::on_host(y_gpu[t]).view(), test::to_dense(y[t].view()), 1e-4, 1e-5) == "");
    CHECK(test::difference(test::on_host(gx_gpu[t]).view(), test::to_dense(gx[t].view()), 1e-4, 1e-5) == "");
  }
  for (std::size_t i = 0; i < cpu_params.size(); ++i) {
    CAPTURE(cpu_params[i]->name);
    CHECK(test::difference(test::on_host(gpu_params[i]->grad).view(), test::to_dense(cpu_params[i]->grad.view()),
                           1e-4, 1e-5) == "");
  }
}
