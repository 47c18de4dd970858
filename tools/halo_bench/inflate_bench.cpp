// inflate benchmark: decompresses the given (gzipped) files at once, one thread per file, through
// the same GzipReader and in the same pieces as the OGB readers, and throws the text away. No
// read of those files can finish sooner (each gzip member inflates on one thread), so the wall
// time is the floor of halo-convert's read, measured beside the peer in the same run.
#include "tools/halo_bench/inflate_bench.hpp"

#include <chrono>
#include <cstdint>
#include <exception>
#include <memory>
#include <thread>

#include <fmt/format.h>

#include "datasets/detail/gzip_reader.hpp"
#include "datasets/detail/line_blocks.hpp"
#include "datasets/detail/ogb_common.hpp"
#include "graph/base/log.hpp"
#include "tools/common/program.hpp"

namespace halo::tools {
namespace {

struct FileResult {
  std::uint64_t compressed_bytes = 0;
  std::uint64_t text_bytes = 0;
  double seconds = 0;
  std::exception_ptr error;
};

void inflate_file(const std::string& path, FileResult& r) {
  constexpr std::size_t piece = datasets::detail::inflate_piece_bytes;  // as the OGB readers
  const auto start = std::chrono::steady_clock::now();
  try {
    r.compressed_bytes = datasets::detail::file_bytes(path);
    datasets::detail::GzipReader reader(path);
    const std::unique_ptr<char[]> text(new char[piece]);
    for (std::size_t n; (n = reader.read(text.get(), piece)) != 0;) r.text_bytes += n;
  } catch (...) {
    r.error = std::current_exception();
  }
  r.seconds = seconds_since(start);
}

}  // namespace

int run_inflate_bench(const InflateBench& o) {
  std::vector<FileResult> results(o.files.size());
  const double cpu_start = cpu_seconds();
  const auto start = std::chrono::steady_clock::now();
  {
    std::vector<std::thread> threads;
    for (std::size_t i = 0; i < o.files.size(); ++i)
      threads.emplace_back([&, i] { inflate_file(o.files[i], results[i]); });
    for (std::thread& t : threads) t.join();
  }
  const double wall = seconds_since(start);
  const double cpu = cpu_seconds() - cpu_start;
  for (const FileResult& r : results)
    if (r.error) std::rethrow_exception(r.error);

  nlohmann::json result;
  result["benchmark"] = "inflate";
  result["seconds"] = wall;
  result["cpu_seconds"] = cpu;
  result["hardware_threads"] = std::thread::hardware_concurrency();
  std::uint64_t text_bytes = 0;
  result["files"] = nlohmann::json::array();
  for (std::size_t i = 0; i < o.files.size(); ++i) {
    const FileResult& r = results[i];
    text_bytes += r.text_bytes;
    result["files"].push_back({{"path", o.files[i]},
                               {"compressed_bytes", r.compressed_bytes},
                               {"text_bytes", r.text_bytes},
                               {"seconds", r.seconds}});
    log_info(fmt::format("{}: {} of text in {:.2f} s ({:.0f} MB/s)", o.files[i], human_bytes(r.text_bytes), r.seconds,
                         static_cast<double>(r.text_bytes) / r.seconds / 1e6));
  }
  result["text_bytes"] = text_bytes;
  log_info(fmt::format("all {} files: {} of text in {:.2f} s, {:.2f} s of CPU", o.files.size(), human_bytes(text_bytes),
                       wall, cpu));
  if (!o.json.empty()) write_json(o.json, result);
  return 0;
}

}  // namespace halo::tools
