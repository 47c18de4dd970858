// inflate benchmark: decompresses the given (gzipped) files at once, one thread per file (per
// array of an .npz archive), through the same GzipReader (NpzReader) and in the same pieces as the
// OGB readers, and throws the bytes away. No read of those files can finish sooner (each gzip
// member or deflate stream inflates on one thread), so the wall time is the floor of
// halo-convert's read, measured beside the peer in the same run.
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
#include "datasets/npz.hpp"
#include "graph/base/log.hpp"
#include "tools/common/program.hpp"

namespace halo::tools {
namespace {

// One stream to inflate: a gzipped (or plain) file, or one array of an .npz archive.
struct Stream {
  std::string path;
  std::string key;  // the array of an .npz; "" for a gzipped file
};

struct FileResult {
  std::uint64_t compressed_bytes = 0;
  std::uint64_t text_bytes = 0;
  double seconds = 0;
  std::exception_ptr error;
};

void inflate_file(const Stream& stream, FileResult& r) {
  constexpr std::size_t piece = datasets::detail::inflate_piece_bytes;  // as the OGB readers
  const auto start = std::chrono::steady_clock::now();
  try {
    if (!stream.key.empty()) {
      const datasets::NpzReader npz(stream.path);
      r.compressed_bytes = npz.stored_bytes(stream.key);
      const datasets::NpyHeader h = npz.header(stream.key);
      npz.for_each_chunk(stream.key, h, [](const void*, std::int64_t, std::int64_t) {});
      r.text_bytes = h.data_bytes();
    } else {
      r.compressed_bytes = datasets::detail::file_bytes(stream.path);
      datasets::detail::GzipReader reader(stream.path);
      const std::unique_ptr<char[]> text(new char[piece]);
      for (std::size_t n; (n = reader.read(text.get(), piece)) != 0;) r.text_bytes += n;
    }
  } catch (...) {
    r.error = std::current_exception();
  }
  r.seconds = seconds_since(start);
}

bool is_npz(const std::string& path) { return path.size() > 4 && path.compare(path.size() - 4, 4, ".npz") == 0; }

std::vector<Stream> streams_of(const std::vector<std::string>& files) {
  std::vector<Stream> out;
  for (const std::string& path : files) {
    if (!is_npz(path)) {
      out.push_back({path, ""});
      continue;
    }
    for (const std::string& key : datasets::NpzReader(path).keys()) out.push_back({path, key});
  }
  return out;
}

}  // namespace

int run_inflate_bench(const InflateBench& o) {
  const std::vector<Stream> streams = streams_of(o.files);
  std::vector<FileResult> results(streams.size());
  const double cpu_start = cpu_seconds();
  const auto start = std::chrono::steady_clock::now();
  {
    std::vector<std::thread> threads;
    for (std::size_t i = 0; i < streams.size(); ++i)
      threads.emplace_back([&, i] { inflate_file(streams[i], results[i]); });
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
  for (std::size_t i = 0; i < streams.size(); ++i) {
    const FileResult& r = results[i];
    text_bytes += r.text_bytes;
    nlohmann::json file = {{"path", streams[i].path},
                           {"compressed_bytes", r.compressed_bytes},
                           {"text_bytes", r.text_bytes},
                           {"seconds", r.seconds}};
    if (!streams[i].key.empty()) file["array"] = streams[i].key;
    result["files"].push_back(file);
    const std::string name = streams[i].path + (streams[i].key.empty() ? "" : ": " + streams[i].key);
    log_info(fmt::format("{}: {} inflated in {:.2f} s ({:.0f} MB/s)", name, human_bytes(r.text_bytes), r.seconds,
                         static_cast<double>(r.text_bytes) / r.seconds / 1e6));
  }
  result["text_bytes"] = text_bytes;
  log_info(fmt::format("all {} streams: {} in {:.2f} s, {:.2f} s of CPU", streams.size(), human_bytes(text_bytes),
                       wall, cpu));
  if (!o.json.empty()) write_json(o.json, result);
  return 0;
}

}  // namespace halo::tools
