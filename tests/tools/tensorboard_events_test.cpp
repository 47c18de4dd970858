// Tests of tools/common/tensorboard_events.* and halo-train --tensorboard: the event file read
// back by a reader of this test's own (TFRecord lengths and masked CRC-32Cs checked against a
// bit-by-bit CRC, the protobuf fields decoded by wire type) holds the file-version event first,
// then every scalar with its tag, step and value; halo-train writes one folder per run whose
// losses are those of its JSON summary.
#include "tools/common/tensorboard_events.hpp"

#include <catch2/catch.hpp>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/reference/naive_crc.hpp"
#include "tests/support/test_paths.hpp"
#include "tests/tools/run_program.hpp"

namespace fs = std::filesystem;
using halo::test::ScratchDir;

namespace {

struct Scalar {
  std::int64_t step = 0;
  std::string tag;
  float value = 0.0f;
};

struct EventFile {
  std::string file_version;
  std::vector<Scalar> scalars;
};

std::uint32_t masked_reference(const void* data, std::size_t n) {
  const std::uint32_t crc = halo::test::naive_crc(data, n, halo::test::crc32c_polynomial);
  return ((crc >> 15) | (crc << 17)) + 0xa282ead8u;
}

template <class T>
T read_le(const std::string& s, std::size_t at) {
  REQUIRE(at + sizeof(T) <= s.size());
  T v;
  std::memcpy(&v, s.data() + at, sizeof(T));
  return v;
}

std::uint64_t read_varint(const std::string& s, std::size_t& at) {
  std::uint64_t v = 0;
  for (int shift = 0;; shift += 7) {
    REQUIRE(at < s.size());
    const auto b = static_cast<unsigned char>(s[at++]);
    v |= static_cast<std::uint64_t>(b & 0x7f) << shift;
    if ((b & 0x80) == 0) return v;
  }
}

// The fields of a message: field number -> raw value (varint or fixed as bytes, or the bytes of
// a length-delimited field); repeated fields keep their last value (enough here).
std::map<int, std::string> fields(const std::string& m) {
  std::map<int, std::string> out;
  std::size_t at = 0;
  while (at < m.size()) {
    const std::uint64_t key = read_varint(m, at);
    const int field = static_cast<int>(key >> 3);
    switch (key & 7) {
      case 0: out[field] = std::to_string(read_varint(m, at)); break;
      case 1: out[field] = m.substr(at, 8); at += 8; break;
      case 5: out[field] = m.substr(at, 4); at += 4; break;
      case 2: {
        const auto n = static_cast<std::size_t>(read_varint(m, at));
        out[field] = m.substr(at, n);
        at += n;
        break;
      }
      default: FAIL("unexpected wire type " << (key & 7));
    }
  }
  CHECK(at == m.size());
  return out;
}

EventFile read_events(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  const std::string s = buffer.str();
  EventFile file;
  std::size_t at = 0;
  while (at < s.size()) {
    const auto length = read_le<std::uint64_t>(s, at);
    CHECK(read_le<std::uint32_t>(s, at + 8) == masked_reference(s.data() + at, 8));
    const std::string event = s.substr(at + 12, length);
    CHECK(read_le<std::uint32_t>(s, at + 12 + length) == masked_reference(event.data(), event.size()));
    at += 12 + length + 4;
    std::map<int, std::string> e = fields(event);
    CHECK(e.count(1) == 1);  // wall_time
    if (e.count(3) != 0) {
      file.file_version = e[3];
      continue;
    }
    const std::map<int, std::string> summary = fields(e.at(5));
    std::map<int, std::string> value = fields(summary.at(1));
    Scalar sc;
    sc.step = e.count(2) != 0 ? std::stoll(e[2]) : 0;
    sc.tag = value.at(1);
    sc.value = read_le<float>(value.at(2), 0);
    file.scalars.push_back(sc);
  }
  CHECK(at == s.size());
  return file;
}

std::string only_file_in(const std::string& dir) {
  std::vector<std::string> files;
  for (const auto& entry : fs::directory_iterator(dir)) files.push_back(entry.path().string());
  REQUIRE(files.size() == 1);
  CHECK(fs::path(files[0]).filename().string().rfind("events.out.tfevents.", 0) == 0);
  return files[0];
}

}  // namespace

TEST_CASE("TensorboardWriter writes TFRecords of scalar events that read back exactly", "[tools]") {
  ScratchDir scratch;
  const std::string dir = scratch / "tb/run-0";
  {
    halo::tools::TensorboardWriter w(dir);
    w.scalar("loss/train", 1, 1.25);
    w.scalar("accuracy/valid", 300, 0.875);
    w.scalar("traffic/bytes_sent", 1 << 20, 3.0e9);
    w.flush();
  }
  const EventFile f = read_events(only_file_in(dir));
  CHECK(f.file_version == "brain.Event:2");
  REQUIRE(f.scalars.size() == 3);
  CHECK(f.scalars[0].tag == "loss/train");
  CHECK(f.scalars[0].step == 1);
  CHECK(f.scalars[0].value == 1.25f);
  CHECK(f.scalars[1].tag == "accuracy/valid");
  CHECK(f.scalars[1].step == 300);
  CHECK(f.scalars[1].value == 0.875f);
  CHECK(f.scalars[2].step == 1 << 20);
  CHECK(f.scalars[2].value == 3.0e9f);
  // A folder that cannot be made is refused, naming it.
  std::ofstream(scratch / "file") << "x";
  CHECK_THROWS_WITH(halo::tools::TensorboardWriter(scratch / "file/run-0"), Catch::Contains("file/run-0"));
}

TEST_CASE("halo-train --tensorboard writes every run's curves, with the losses of its JSON summary", "[tools]") {
  ScratchDir scratch;
  const std::string data = scratch / "sbm";
  REQUIRE(halo::test::run_program("halo-convert", "synth sbm " + data + " --nodes 300 --features 8 -q", scratch)
              .exit_code == 0);
  const auto r = halo::test::run_program(
      "halo-train",
      "--dataset " + data + " --epochs 4 --runs 2 --eval-every 2 --threads 1 -q --json - --tensorboard " +
          (scratch / "tb"),
      scratch);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const nlohmann::json summary = nlohmann::json::parse(r.out);
  for (int run = 0; run < 2; ++run) {
    const EventFile f = read_events(only_file_in(scratch / ("tb/run-" + std::to_string(run))));
    std::vector<float> losses, test_acc;
    for (const Scalar& s : f.scalars) {
      if (s.tag == "loss/train") losses.push_back(s.value);
      if (s.tag == "accuracy/test") test_acc.push_back(s.value);
    }
    const auto& epochs = summary["runs"][run]["epochs"];
    REQUIRE(losses.size() == epochs.size());
    for (std::size_t e = 0; e < losses.size(); ++e)
      CHECK(losses[e] == static_cast<float>(epochs[e]["loss"].get<double>()));
    CHECK(test_acc.size() == 2);  // epochs 2 and 4
  }
  // An unwritable folder is refused before training.
  std::ofstream(scratch / "file") << "x";
  halo::test::check_one_line_error(
      halo::test::run_program("halo-train", "--dataset " + data + " --tensorboard " + (scratch / "file/tb"), scratch),
      "halo-train", {"--tensorboard"});
}
