// Checkpoints: tensors as .npy files and a JSON manifest, in a directory committed atomically.
#include "train/checkpoint.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <type_traits>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "datasets/atomic_output.hpp"
#include "datasets/checksum.hpp"
#include "datasets/npy.hpp"
#include "graph/base/error.hpp"

namespace halo::train {
namespace {

using nlohmann::json;

constexpr const char* checkpoint_format = "halo-checkpoint";
// Version 2 adds manifest.crc32, the CRC-32 of manifest.json's bytes; version 1 checkpoints are
// read without it.
constexpr int checkpoint_format_version = 2;

// NaN (an epoch without evaluation) is written as null, which JSON can hold.
json number_or_null(double v) { return std::isnan(v) ? json(nullptr) : json(v); }
double number_or_nan(const json& v) { return v.is_null() ? std::numeric_limits<double>::quiet_NaN() : v.get<double>(); }

json record_to_json(const EpochRecord& r) {
  return json{{"epoch", r.epoch},
              {"loss", r.loss},
              {"evaluated", r.evaluated},
              {"train_acc", number_or_null(r.train_acc)},
              {"valid_acc", number_or_null(r.valid_acc)},
              {"test_acc", number_or_null(r.test_acc)},
              {"valid_loss", number_or_null(r.valid_loss)},
              {"time_s", r.time_s},
              {"eval_time_s", r.eval_time_s},
              {"bytes_sent", r.bytes_sent},
              {"bytes_received", r.bytes_received},
              {"halo_s", r.halo_s},
              {"all_reduce_s", r.all_reduce_s}};
}

EpochRecord record_from_json(const json& j) {
  EpochRecord r;
  r.epoch = j.at("epoch").get<int>();
  r.loss = j.at("loss").get<double>();
  r.evaluated = j.at("evaluated").get<bool>();
  r.train_acc = number_or_nan(j.at("train_acc"));
  r.valid_acc = number_or_nan(j.at("valid_acc"));
  r.test_acc = number_or_nan(j.at("test_acc"));
  r.valid_loss = number_or_nan(j.at("valid_loss"));
  r.time_s = j.at("time_s").get<double>();
  r.eval_time_s = j.at("eval_time_s").get<double>();
  r.bytes_sent = j.at("bytes_sent").get<std::int64_t>();
  // Absent from checkpoints written before distributed training existed: nothing was exchanged.
  r.bytes_received = j.value("bytes_received", std::int64_t{0});
  r.halo_s = j.value("halo_s", 0.0);
  r.all_reduce_s = j.value("all_reduce_s", 0.0);
  return r;
}

void check_file_name(const std::string& name) {
  bool ok = !name.empty() && name != "." && name != "..";
  for (char c : name) ok = ok && (std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-');
  HALO_EXPECTS(ok, "tensor name '" + name + "' cannot be a checkpoint file name (allowed: A-Z a-z 0-9 . _ -)");
}

// The first key (as a dotted path) where two JSON values differ, with both values.
std::string first_difference(const json& saved, const json& now, const std::string& path) {
  if (saved.is_object() && now.is_object()) {
    for (auto it = saved.begin(); it != saved.end(); ++it) {
      const std::string key = path.empty() ? it.key() : path + "." + it.key();
      if (!now.contains(it.key())) return key + " is " + it.value().dump() + " there and absent now";
      if (it.value() != now.at(it.key())) return first_difference(it.value(), now.at(it.key()), key);
    }
    for (auto it = now.begin(); it != now.end(); ++it) {
      if (!saved.contains(it.key())) {
        return (path.empty() ? it.key() : path + "." + it.key()) + " is absent there and " + it.value().dump() + " now";
      }
    }
  }
  return (path.empty() ? std::string("the configuration") : path) + " is " + saved.dump() + " there and " + now.dump() +
         " now";
}

class CheckpointWriter {
 public:
  explicit CheckpointWriter(datasets::AtomicDirectory& out) : out_(out) {}

  void write(const std::string& relative, const kernels::Tensor& t) {
    Array<float> host = Array<float>::matrix(t.rows(), t.cols());
    const std::vector<float> values = t.to_vector();
    if (!values.empty()) std::memcpy(host.data(), values.data(), values.size() * sizeof(float));
    write_array(relative, host, json{t.rows(), t.cols()});
  }
  void write(const std::string& relative, const Array<std::int64_t>& counts) {
    write_array(relative, counts, json{counts.size()});
  }
  const json& files() const { return files_; }

 private:
  template <class T>
  void write_array(const std::string& relative, const Array<T>& array, const json& shape) {
    const datasets::WrittenFile w =
        out_.write_file(relative, [&](datasets::FileWriter& f) { datasets::write_npy(f, array); });
    files_.push_back(json{{"path", relative}, {"shape", shape}, {"bytes", w.bytes}, {"crc32", datasets::crc32_hex(w.crc32)}});
  }

  datasets::AtomicDirectory& out_;
  json files_ = json::array();
};

// The path of a listed file of the checkpoint after checking its listing, its shape against
// `expected`, its size and CRC-32.
std::string checked_file(const std::string& root, const json& files, const std::string& relative,
                         const std::vector<std::int64_t>& expected) {
  const std::string path = root + "/" + relative;
  const json* entry = nullptr;
  for (const json& f : files) {
    if (f.at("path") == relative) entry = &f;
  }
  if (entry == nullptr) throw IoError(root + "/manifest.json", "lists no file " + relative);
  const auto shape = entry->at("shape").get<std::vector<std::int64_t>>();
  if (shape != expected) {
    throw InvalidArgument(fmt::format("load_checkpoint: {} has shape ({}), the model's is ({})", path,
                                      fmt::join(shape, ", "), fmt::join(expected, ", ")));
  }
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  if (ec) throw IoError(path, "missing from the checkpoint");
  if (size != entry->at("bytes").get<std::uint64_t>()) {
    throw IoError(path, fmt::format("is {} bytes, the manifest says {}", size, entry->at("bytes").get<std::uint64_t>()));
  }
  const std::string crc = datasets::file_checksum(path);
  if (crc != entry->at("crc32").get<std::string>()) {
    throw IoError(path, "CRC-32 is " + crc + ", the manifest says " + entry->at("crc32").get<std::string>());
  }
  return path;
}

// Reads one listed tensor file into `target` after checked_file's checks.
void read_tensor(const std::string& root, const json& files, const std::string& relative, kernels::Tensor& target) {
  const std::string path = checked_file(root, files, relative, {target.rows(), target.cols()});
  const Array<float> values = datasets::read_npy<float>(path, target.rows(), target.cols());
  target.copy_from(kernels::ConstTensorView(values.data(), target.rows(), target.cols(), target.cols(),
                                            kernels::Device::cpu()));
}

// Reads one listed counter file into `target` (same length) after checked_file's checks.
void read_counter(const std::string& root, const json& files, const std::string& relative,
                  Array<std::int64_t>& target) {
  const std::string path = checked_file(root, files, relative, {target.size()});
  const Array<std::int64_t> values = datasets::read_npy<std::int64_t>(path, target.size());
  std::copy(values.begin(), values.end(), target.begin());
}

// Reads the arrays of one folder ("params", "buffers", "optimizer", "counters"), whose names the
// manifest lists under the same key (a checkpoint without "counters" has none), into `group`
// after checking that the names agree.
template <class T>
void read_group(const std::string& root, const json& manifest, const json& files, const std::string& folder,
                const std::vector<std::pair<std::string, T*>>& group) {
  std::vector<std::string> names;
  for (const auto& entry : group) names.push_back(entry.first);
  const auto saved = manifest.value(folder, json::array()).template get<std::vector<std::string>>();
  if (saved != names) {
    throw InvalidArgument(fmt::format("load_checkpoint: {} holds {} [{}], the model and optimizer have [{}]", root,
                                      folder, fmt::join(saved, ", "), fmt::join(names, ", ")));
  }
  for (const auto& [name, array] : group) {
    const std::string relative = folder + "/" + name + ".npy";
    if constexpr (std::is_same_v<T, kernels::Tensor>)
      read_tensor(root, files, relative, *array);
    else
      read_counter(root, files, relative, *array);
  }
}

// The bytes of a file, or IoError naming it.
std::string read_bytes(const std::string& path, const std::string& missing) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw IoError(path, "cannot open (" + missing + ")");
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw IoError(path, "read failed");
  return bytes;
}

// manifest.json parsed, after checking its bytes against manifest.crc32 (which version 2 and later
// write; a manifest of version 1 has none).
json read_manifest(const std::string& root, int run) {
  const std::string path = root + "/manifest.json";
  const std::string bytes = read_bytes(path, "no checkpoint of run " + std::to_string(run));
  const std::string crc_path = root + "/manifest.crc32";
  std::error_code ec;
  const bool has_crc = std::filesystem::exists(crc_path, ec);
  if (has_crc) {
    std::string stored = read_bytes(crc_path, "the manifest's checksum");
    while (!stored.empty() && (stored.back() == '\n' || stored.back() == '\r')) stored.pop_back();
    const std::string actual = datasets::buffer_checksum(bytes.data(), bytes.size());
    if (stored != actual)
      throw IoError(path, "CRC-32 is " + actual + ", manifest.crc32 says '" + stored + "': the manifest is corrupted or was edited");
  }
  json m;
  try {
    m = json::parse(bytes);
  } catch (const json::exception& e) {
    throw IoError(path, std::string("malformed JSON: ") + e.what());
  }
  if (!has_crc && m.is_object() && m.value("format_version", 0) >= 2)
    throw IoError(crc_path, "is missing (a version " + std::to_string(m.value("format_version", 0)) + " checkpoint has one)");
  return m;
}

// The records must be the epochs 1..epoch in order, so that a resumed run starts where the saved
// one stopped.
void check_records(const std::string& manifest_path, const CheckpointState& s) {
  if (s.epoch < 0) throw IoError(manifest_path, "epoch is " + std::to_string(s.epoch) + ", expected >= 0");
  if (static_cast<std::int64_t>(s.records.size()) != s.epoch)
    throw IoError(manifest_path, fmt::format("epoch is {} but {} epoch records are listed", s.epoch, s.records.size()));
  for (std::size_t i = 0; i < s.records.size(); ++i) {
    if (s.records[i].epoch != static_cast<int>(i) + 1)
      throw IoError(manifest_path, fmt::format("epoch record {} is for epoch {}, expected {}", i, s.records[i].epoch, i + 1));
  }
}

}  // namespace

std::string checkpoint_path(const std::string& dir, int run) { return fmt::format("{}/run-{:04d}", dir, run); }

bool checkpoint_exists(const std::string& dir, int run) {
  datasets::recover_interrupted_output(checkpoint_path(dir, run));
  std::error_code ec;
  return std::filesystem::is_regular_file(checkpoint_path(dir, run) + "/manifest.json", ec);
}

void save_checkpoint(const std::string& dir, const CheckpointState& state, const CheckpointTensors& model,
                     Optimizer& optimizer) {
  const std::vector<Parameter*> parameters = model.parameters;
  datasets::AtomicDirectory out(checkpoint_path(dir, state.run), /*force=*/true);
  CheckpointWriter writer(out);
  auto write_group = [&](const std::string& folder, const auto& group) {
    json names = json::array();
    for (const auto& [name, array] : group) {
      check_file_name(name);
      writer.write(folder + "/" + name + ".npy", *array);
      names.push_back(name);
    }
    return names;
  };
  std::vector<std::pair<std::string, kernels::Tensor*>> values;
  for (Parameter* p : parameters) values.emplace_back(p->name, &p->value);
  const json parameter_names = write_group("params", values);
  const json buffer_names = write_group("buffers", model.buffers);
  const json counter_names = write_group("counters", model.counters);
  const json state_names = write_group("optimizer", optimizer.state(parameters));
  json records = json::array();
  for (const EpochRecord& r : state.records) records.push_back(record_to_json(r));
  const json manifest{{"format", checkpoint_format},
                      {"format_version", checkpoint_format_version},
                      {"run", state.run},
                      {"seed", state.seed},
                      {"epoch", state.epoch},
                      {"finished", state.finished},
                      {"optimizer_steps", optimizer.steps()},
                      {"config", json::parse(state.config)},
                      {"params", parameter_names},
                      {"buffers", buffer_names},
                      {"counters", counter_names},
                      {"optimizer", state_names},
                      {"records", records},
                      {"files", writer.files()}};
  const datasets::WrittenFile written =
      out.write_file("manifest.json", [&](datasets::FileWriter& f) { f.write(manifest.dump(2) + "\n"); });
  out.write_file("manifest.crc32", [&](datasets::FileWriter& f) { f.write(datasets::crc32_hex(written.crc32) + "\n"); });
  out.commit();
}

CheckpointState load_checkpoint(const std::string& dir, int run, const std::string& expected_config,
                                const CheckpointTensors& model,
                                Optimizer& optimizer) {
  const std::string root = checkpoint_path(dir, run);
  const std::string manifest_path = root + "/manifest.json";
  datasets::recover_interrupted_output(root);
  const json m = read_manifest(root, run);
  try {
    if (m.value("format", "") != checkpoint_format) throw IoError(manifest_path, "is not a halo checkpoint manifest");
    const int version = m.at("format_version").get<int>();
    if (version < 1 || version > checkpoint_format_version) {
      throw IoError(manifest_path, fmt::format("format_version is {}, this build reads 1 to {}", version,
                                               checkpoint_format_version));
    }
    if (m.at("run").get<int>() != run) {
      throw IoError(manifest_path, fmt::format("belongs to run {}, expected {}", m.at("run").get<int>(), run));
    }
    const json expected = json::parse(expected_config);
    if (m.at("config") != expected) {
      throw InvalidArgument("load_checkpoint: " + root + " was written for another configuration: " +
                            first_difference(m.at("config"), expected, ""));
    }
    const std::vector<Parameter*> parameters = model.parameters;
    std::vector<std::pair<std::string, kernels::Tensor*>> values;
    for (Parameter* p : parameters) values.emplace_back(p->name, &p->value);
    const json& files = m.at("files");
    read_group(root, m, files, "params", values);
    read_group(root, m, files, "buffers", model.buffers);
    read_group(root, m, files, "counters", model.counters);
    read_group(root, m, files, "optimizer", optimizer.state(parameters));
    optimizer.set_steps(m.at("optimizer_steps").get<std::int64_t>());

    CheckpointState s;
    s.run = run;
    s.seed = m.at("seed").get<std::uint64_t>();
    s.epoch = m.at("epoch").get<int>();
    s.finished = m.at("finished").get<bool>();
    s.config = m.at("config").dump();
    for (const json& r : m.at("records")) s.records.push_back(record_from_json(r));
    check_records(manifest_path, s);
    return s;
  } catch (const json::exception& e) {
    throw IoError(manifest_path, std::string("missing or mistyped key: ") + e.what());
  }
}

}  // namespace halo::train
