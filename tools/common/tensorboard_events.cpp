// TFRecord framing and the few protobuf fields of a scalar Event, for TensorBoard.
#include "tools/common/tensorboard_events.hpp"

#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "datasets/checksum.hpp"
#include "graph/base/error.hpp"

namespace halo::tools {
namespace {

void put_varint(std::string& out, std::uint64_t v) {
  while (v >= 0x80) {
    out += static_cast<char>((v & 0x7f) | 0x80);
    v >>= 7;
  }
  out += static_cast<char>(v);
}

template <class T>
void put_little_endian(std::string& out, T value) {
  char bytes[sizeof(T)];
  std::memcpy(bytes, &value, sizeof(T));  // x86-64 and aarch64 store little-endian
  out.append(bytes, sizeof(T));
}

// A length-delimited field (wire type 2).
void put_bytes(std::string& out, int field, const std::string& bytes) {
  put_varint(out, static_cast<std::uint64_t>(field) << 3 | 2);
  put_varint(out, bytes.size());
  out += bytes;
}

std::string event_head(double wall_time, std::int64_t step) {
  std::string e;
  e += static_cast<char>(1 << 3 | 1);  // wall_time, 64-bit
  put_little_endian(e, wall_time);
  if (step != 0) {
    e += static_cast<char>(2 << 3 | 0);  // step, varint
    put_varint(e, static_cast<std::uint64_t>(step));
  }
  return e;
}

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

}  // namespace

std::uint32_t masked_crc32c(const void* data, std::size_t bytes) {
  const std::uint32_t crc = datasets::crc32c_of(data, bytes);
  return ((crc >> 15) | (crc << 17)) + 0xa282ead8u;
}

std::string tfrecord(const std::string& payload) {
  std::string r;
  const auto length = static_cast<std::uint64_t>(payload.size());
  put_little_endian(r, length);
  put_little_endian(r, masked_crc32c(r.data(), r.size()));
  r += payload;
  put_little_endian(r, masked_crc32c(payload.data(), payload.size()));
  return r;
}

std::string scalar_event(double wall_time, std::int64_t step, const std::string& tag, float value) {
  std::string v;
  put_bytes(v, 1, tag);
  v += static_cast<char>(2 << 3 | 5);  // simple_value, 32-bit
  put_little_endian(v, value);
  std::string summary;
  put_bytes(summary, 1, v);
  std::string e = event_head(wall_time, step);
  put_bytes(e, 5, summary);
  return e;
}

std::string file_version_event(double wall_time) {
  std::string e = event_head(wall_time, 0);
  put_bytes(e, 3, "brain.Event:2");
  return e;
}

TensorboardWriter::TensorboardWriter(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw IoError(dir, "cannot create the TensorBoard folder: " + ec.message());
  char host[256] = "localhost";
  static_cast<void>(gethostname(host, sizeof host - 1));
  const double now = now_seconds();
  path_ = dir + "/events.out.tfevents." + std::to_string(static_cast<long long>(now)) + "." + host;
  out_.open(path_, std::ios::binary | std::ios::trunc);
  if (!out_) throw IoError(path_, "cannot open for writing");
  out_ << tfrecord(file_version_event(now));
  flush();
}

void TensorboardWriter::scalar(const std::string& tag, std::int64_t step, double value) {
  out_ << tfrecord(scalar_event(now_seconds(), step, tag, static_cast<float>(value)));
}

void TensorboardWriter::flush() {
  out_.flush();
  if (!out_) throw IoError(path_, "write failed");
}

}  // namespace halo::tools
