// Tests of kernels/tensor.*: allocation and alignment, byte accounting, moves and copies, strided
// views, and the refusal of CUDA tensors where no GPU can serve them.
#include "kernels/tensor.hpp"

#include <catch2/catch.hpp>
#include <cstdint>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "graph/base/array.hpp"
#include "graph/base/buffer.hpp"
#include "graph/base/error.hpp"
#include "tests/kernels/kernel_test_util.hpp"
#include "tests/support/test_paths.hpp"

using namespace halo;
using namespace halo::kernels;

TEST_CASE("Tensor::empty gives 64-byte aligned host memory of rows x cols floats", "[kernels]") {
  for (const std::int64_t cols : {1, 3, 17, 64}) {
    const Tensor t = Tensor::empty(5, cols);
    CHECK(t.rows() == 5);
    CHECK(t.cols() == cols);
    CHECK(t.bytes() == static_cast<std::size_t>(5 * cols) * sizeof(float));
    CHECK(reinterpret_cast<std::uintptr_t>(t.data()) % 64 == 0);
    CHECK(t.device() == Device::cpu());
  }
  const Tensor none = Tensor::empty(0, 7);
  CHECK(none.empty());
  CHECK_THROWS_WITH(Tensor::empty(-1, 2), Catch::Contains("non-negative") && Catch::Contains("-1 x 2"));
}

TEST_CASE("Tensor byte counters follow allocations, moves and frees, and keep the peak", "[kernels]") {
  const Device cpu = Device::cpu();
  const std::int64_t base = tensor_bytes_in_use(cpu);
  reset_tensor_peak_bytes(cpu);
  CHECK(tensor_peak_bytes(cpu) == base);
  {
    Tensor a = Tensor::zeros(10, 10);  // 400 bytes
    CHECK(tensor_bytes_in_use(cpu) == base + 400);
    Tensor b = std::move(a);
    CHECK(tensor_bytes_in_use(cpu) == base + 400);
    CHECK(a.data() == nullptr);
    {
      const Tensor c = b.clone();
      CHECK(tensor_bytes_in_use(cpu) == base + 800);
    }
    CHECK(tensor_bytes_in_use(cpu) == base + 400);
    b = Tensor::zeros(1, 25);  // the old 400 bytes go, 100 come
    CHECK(tensor_bytes_in_use(cpu) == base + 100);
  }
  CHECK(tensor_bytes_in_use(cpu) == base);
  CHECK(tensor_peak_bytes(cpu) == base + 800);
  reset_tensor_peak_bytes(cpu);
  CHECK(tensor_peak_bytes(cpu) == base);
}

TEST_CASE("Tensor values survive from_vector, clone, to, fill and to_vector", "[kernels]") {
  RandomStream rng(11, 0);
  const Tensor a = test::random_tensor(rng, 7, 5);
  const std::vector<float> values = a.to_vector();
  CHECK(Tensor::from_vector(7, 5, values).to_vector() == values);
  CHECK(a.clone().to_vector() == values);
  CHECK(a.to(Device::cpu()).to_vector() == values);
  Tensor b = Tensor::empty(7, 5);
  b.copy_from(a.view());
  CHECK(b.to_vector() == values);
  b.fill(2.5f);
  CHECK(b.to_vector() == std::vector<float>(35, 2.5f));
  CHECK(Tensor::full(2, 3, -1.0f).to_vector() == std::vector<float>(6, -1.0f));
  CHECK_THROWS_WITH(Tensor::from_vector(2, 3, {1.0f}), Catch::Contains("needs 6 values, got 1"));
}

TEST_CASE("Tensor::from_array turns a 1-D array into one column and keeps a matrix's shape", "[kernels]") {
  const Array<float> column = Array<float>::from_vector({1.0f, 2.0f, 3.0f});
  const Tensor c = Tensor::from_array(column);
  CHECK(c.rows() == 3);
  CHECK(c.cols() == 1);
  CHECK(c.to_vector() == std::vector<float>{1.0f, 2.0f, 3.0f});
  Array<float> matrix = Array<float>::matrix(2, 2);
  for (std::int64_t i = 0; i < 4; ++i) matrix[i] = static_cast<float>(i) + 0.5f;
  const Tensor m = Tensor::from_array(matrix);
  CHECK(m.rows() == 2);
  CHECK(m.to_vector() == std::vector<float>{0.5f, 1.5f, 2.5f, 3.5f});
}

namespace {

// The process's resident pages that map files (RssFile of /proc/self/status) in bytes, or -1.
std::int64_t resident_file_bytes() {
  std::ifstream status("/proc/self/status");
  std::string key;
  std::int64_t kib = -1;
  while (status >> key) {
    if (key == "RssFile:" && status >> kib) return kib * 1024;
    status.ignore(std::numeric_limits<std::streamsize>::max(), '\n');
  }
  return -1;
}

}  // namespace

TEST_CASE("Tensor::from_array copies a file map whole and leaves its pages dropped", "[kernels]") {
  // 70 001 x 33 floats (9.2 MB): several 4 MiB windows, none ending on a row or page boundary,
  // mapped at an offset that is not a page's.
  const std::int64_t rows = 70001, cols = 33, offset = 128;
  std::vector<float> values(static_cast<std::size_t>(rows * cols));
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i % 9973) * 0.25f - 7.0f;
  test::ScratchDir dir;
  {
    std::ofstream out(dir / "x.bin", std::ios::binary);
    out << std::string(static_cast<std::size_t>(offset), 'h');
    out.write(reinterpret_cast<const char*>(values.data()), static_cast<std::streamsize>(values.size() * 4));
  }
  const Array<float> mapped =
      Array<float>::from_buffer(Buffer::map_file(dir / "x.bin", offset, values.size() * 4), rows, cols, 2);
  REQUIRE(mapped.buffer().is_mapped());
  const std::int64_t before = resident_file_bytes();
  const Tensor t = Tensor::from_array(mapped);
  CHECK(t.rows() == rows);
  CHECK(t.cols() == cols);
  CHECK(t.to_vector() == values);
  // Every page was read (above), yet the map holds at most a window of them: not the 9.2 MB.
  if (before >= 0) CHECK(resident_file_bytes() - before < (std::int64_t{5} << 20));
}

TEST_CASE("copy moves a window between strided views without touching the padding", "[kernels]") {
  RandomStream rng(12, 0);
  const Tensor a = test::random_tensor(rng, 6, 4);
  test::Strided s = test::strided_copy(a, 3, -7.0f);
  CHECK(s.padding_intact(-7.0f));
  CHECK(test::identical(s.view, a.view()));
  Tensor back = Tensor::empty(3, 4);
  copy(ConstTensorView(s.view).slice_rows(2, 5), back.view());
  CHECK(test::identical(back.view(), a.view().slice_rows(2, 5)));
  CHECK_THROWS_WITH(copy(a.view(), back.view()), Catch::Contains("destination must be 6 x 4, got 3 x 4"));
  CHECK_THROWS_WITH(
      copy(a.view().slice_rows(0, 3), TensorView{const_cast<float*>(a.data()) + 4, 3, 4, 4, Device::cpu()}),
      Catch::Contains("overlap"));
}

TEST_CASE("A CUDA tensor request names the reason when no GPU can serve it", "[kernels]") {
  if (cuda_device_count() > 0) {
    SUCCEED("a GPU is visible; the GPU tests cover CUDA tensors");
    return;
  }
  CHECK_THROWS_AS(Tensor::empty(2, 2, Device::cuda()), UnsupportedError);
  CHECK_THROWS_WITH(Tensor::zeros(2, 2, Device::cuda()), Catch::Contains("cuda:0 requested"));
  const Tensor host = Tensor::zeros(2, 2);
  CHECK_THROWS_AS(host.to(Device::cuda()), UnsupportedError);
  CHECK_THROWS_AS(require_device(Device::cuda(1)), UnsupportedError);
}

TEST_CASE("Tensor memory on a GPU round-trips values through to() and copy()", "[kernels][gpu]") {
  if (cuda_device_count() == 0) {
    SUCCEED("no GPU visible");
    return;
  }
  RandomStream rng(13, 0);
  const Tensor a = test::random_tensor(rng, 33, 9);
  const std::int64_t before = tensor_bytes_in_use(Device::cuda());
  Tensor g = a.to(Device::cuda());
  CHECK(g.device() == Device::cuda());
  CHECK(tensor_bytes_in_use(Device::cuda()) == before + static_cast<std::int64_t>(a.bytes()));
  CHECK(g.to_vector() == a.to_vector());
  const Tensor g2 = g.clone();
  CHECK(g2.to(Device::cpu()).to_vector() == a.to_vector());
  test::Strided s(33, 9, 5, -3.0f);
  copy(g2.view(), s.view);
  CHECK(test::identical(s.view, a.view()));
  CHECK(s.padding_intact(-3.0f));
  g.fill(4.0f);
  CHECK(g.to_vector() == std::vector<float>(33 * 9, 4.0f));
  Tensor z = Tensor::zeros(4, 3, Device::cuda());
  CHECK(z.to_vector() == std::vector<float>(12, 0.0f));
}
