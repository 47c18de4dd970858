// load benchmark: one way of loading a dataset directory per process, so that a driver can drop
// the page cache before each (bench/load_checks.py):
//   read    every file dataset.json lists, read once in 4 MiB pieces and thrown away: the floor
//           of any load that looks at every byte;
//   crc     every file mapped and its CRC-32 computed over the map in parallel (nothing else):
//           the floor of any load that verifies the checksums;
//   open    read_dataset_dir without the CRC-32 check: mapping, and the structural checks (CSR
//           offsets and ids, labels, split ids, finite features) that touch every array;
//   verify  read_dataset_dir as halo-train opens a dataset: the structural checks and the CRCs.
#include "tools/halo_bench/load_bench.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <memory>
#include <thread>

#include <fmt/format.h>

#include "datasets/checksum.hpp"
#include "datasets/dataset_dir.hpp"
#include "graph/base/buffer.hpp"
#include "graph/base/error.hpp"
#include "graph/base/log.hpp"
#include "graph/base/parallel.hpp"
#include "tools/common/program.hpp"

namespace halo::tools {
namespace {

// Reads the file once, sequentially, into one reused piece; returns the bytes read.
std::uint64_t read_through(const std::string& path, char* piece, std::size_t piece_bytes) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw IoError(path, std::string("cannot open: ") + std::strerror(errno));
  std::uint64_t total = 0;
  for (;;) {
    const ssize_t n = ::read(fd, piece, piece_bytes);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      ::close(fd);
      throw IoError(path, std::string("read failed: ") + std::strerror(err));
    }
    if (n == 0) break;
    total += static_cast<std::uint64_t>(n);
  }
  ::close(fd);
  return total;
}

}  // namespace

int run_load_bench(const LoadBench& o) {
  const datasets::DatasetDirInfo info = datasets::read_dataset_dir_info(o.dataset);
  const double cpu_start = cpu_seconds();
  const auto start = std::chrono::steady_clock::now();
  std::uint64_t bytes = 0;
  if (o.mode == "read") {
    constexpr std::size_t piece_bytes = std::size_t{4} << 20;
    const std::unique_ptr<char[]> piece(new char[piece_bytes]);
    for (const datasets::DatasetFileEntry& f : info.files) bytes += read_through(o.dataset + "/" + f.path, piece.get(), piece_bytes);
  } else if (o.mode == "crc") {
    for (const datasets::DatasetFileEntry& f : info.files) {
      const std::string path = o.dataset + "/" + f.path;
      const Buffer map = Buffer::map_file(path, 0, static_cast<std::size_t>(f.bytes));
      if (datasets::crc32_hex(datasets::crc32_of(map.data(), map.size())) != f.crc32)
        throw IoError(path, "CRC-32 differs from dataset.json's");
      bytes += f.bytes;
    }
  } else {
    datasets::DatasetDirOptions options;
    options.verify_checksums = o.mode == "verify";
    const datasets::Dataset ds = datasets::read_dataset_dir(o.dataset, options);
    bytes = info.total_bytes();
  }
  const double wall = seconds_since(start);
  const double cpu = cpu_seconds() - cpu_start;
  log_info(fmt::format("{} {}: {} in {:.3f} s ({:.2f} GB/s), {:.3f} s of CPU on {} threads", o.mode, o.dataset,
                       human_bytes(bytes), wall, static_cast<double>(bytes) / wall / 1e9, cpu, max_threads()));
  nlohmann::json result;
  result["benchmark"] = "load";
  result["mode"] = o.mode;
  result["dataset"] = o.dataset;
  result["bytes"] = bytes;
  result["seconds"] = wall;
  result["cpu_seconds"] = cpu;
  result["threads"] = max_threads();
  if (!o.json.empty()) write_json(o.json, result);
  return 0;
}

}  // namespace halo::tools
