// partition.json: writing it in a fixed key order, and reading it back with every key checked.
#include "partition/detail/partition_json.hpp"

#include <nlohmann/json.hpp>

#include "graph/base/error.hpp"

namespace halo::partition::detail {

namespace {

using ordered_json = nlohmann::ordered_json;
constexpr const char* format_name = "halo-partition";

ordered_json imbalance_json(const Imbalance& im) { return {{"max", im.max}, {"mean", im.mean}, {"ratio", im.ratio()}}; }

Imbalance imbalance_from(const ordered_json& j) { return {j.at("max").get<double>(), j.at("mean").get<double>()}; }

ordered_json file_json(const datasets::DatasetFileEntry& f) {
  return {{"path", f.path}, {"dtype", datasets::to_string(f.dtype)}, {"shape", f.shape}, {"bytes", f.bytes}, {"crc32", f.crc32}};
}

datasets::DatasetFileEntry file_from(const ordered_json& j) {
  datasets::DatasetFileEntry f;
  f.path = j.at("path").get<std::string>();
  f.dtype = datasets::dtype_from_string(j.at("dtype").get<std::string>());
  f.shape = j.at("shape").get<std::vector<std::int64_t>>();
  f.bytes = j.at("bytes").get<std::uint64_t>();
  f.crc32 = j.at("crc32").get<std::string>();
  return f;
}

}  // namespace

std::string partition_info_to_json(const PartitionDirInfo& info) {
  ordered_json j;
  j["format"] = format_name;
  j["format_version"] = info.format_version;
  j["source"] = {{"path", info.source_path}, {"dataset_json_crc32", info.source_checksum}};
  const datasets::DatasetMeta& m = info.meta;
  j["meta"] = {{"name", m.name},
               {"task", datasets::to_string(m.task)},
               {"num_classes", m.num_classes},
               {"num_tasks", m.num_tasks},
               {"split_name", m.split_name},
               {"is_hetero", m.is_hetero},
               {"target_type", m.target_type},
               {"directed", m.directed},
               {"source", m.source}};
  j["num_vertices"] = info.quality.num_vertices;
  j["num_edges"] = info.quality.num_edges;
  j["node_types"] = ordered_json::array();
  for (std::size_t t = 0; t < info.node_types.size(); ++t) {
    const datasets::NodeTypeInfo& nt = info.node_types[t];
    j["node_types"].push_back(
        {{"name", nt.name}, {"count", nt.count}, {"offset", info.type_offsets[t]}, {"feature_dim", nt.feature_dim}});
  }
  j["relations"] = ordered_json::array();
  for (const datasets::RelationInfo& r : info.relations)
    j["relations"].push_back({{"src", r.type.src},
                              {"rel", r.type.rel},
                              {"dst", r.type.dst},
                              {"num_edges", r.num_edges},
                              {"sorted", r.properties.sorted},
                              {"symmetric", r.properties.symmetric}});
  j["method"] = to_string(info.method);
  j["objective"] = to_string(info.objective);
  j["num_parts"] = info.num_parts;
  j["seed"] = info.seed;
  j["balance"] = ordered_json::array();
  for (BalanceKey k : info.balance) j["balance"].push_back(to_string(k));
  j["imbalance"] = info.imbalance;
  j["metis_objective"] = info.metis_objective;
  const PartitionQuality& q = info.quality;
  j["metrics"] = {{"edge_cut", q.edge_cut},
                  {"edge_cut_fraction", q.edge_cut_fraction},
                  {"halo_total", q.halo_total},
                  {"replication_factor", q.replication_factor},
                  {"imbalance",
                   {{"vertices", imbalance_json(q.vertices)},
                    {"edges", imbalance_json(q.edges)},
                    {"train", imbalance_json(q.train)}}}};
  j["parts"] = ordered_json::array();
  for (const PartInfo& p : info.parts) {
    const PartQuality& pq = q.parts[static_cast<std::size_t>(p.rank)];
    ordered_json part = {{"rank", p.rank},   {"owned", pq.owned}, {"halo", pq.halo},   {"edges", pq.edges},
                         {"train", pq.train}, {"valid", p.valid},  {"test", p.test},    {"owned_per_type", p.owned_per_type},
                         {"bytes", p.total_bytes()}};
    part["files"] = ordered_json::array();
    for (const datasets::DatasetFileEntry& f : p.files) part["files"].push_back(file_json(f));
    j["parts"].push_back(std::move(part));
  }
  return j.dump(2) + "\n";
}

PartitionDirInfo partition_info_from_json(const std::string& text, const std::string& path) {
  ordered_json j;
  try {
    j = ordered_json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw IoError(path, std::string("is not valid JSON: ") + e.what());
  }
  try {
    if (!j.is_object() || j.value("format", std::string()) != format_name)
      throw IoError(path, std::string("is not a halo partition (\"format\" is not \"") + format_name + "\")");
    PartitionDirInfo info;
    info.format_version = j.at("format_version").get<int>();
    if (info.format_version != partition_format_version)
      throw IoError(path, "has format_version " + std::to_string(info.format_version) + ", this build reads " +
                              std::to_string(partition_format_version));
    info.source_path = j.at("source").at("path").get<std::string>();
    info.source_checksum = j.at("source").at("dataset_json_crc32").get<std::string>();
    const ordered_json& m = j.at("meta");
    info.meta.name = m.at("name").get<std::string>();
    info.meta.task = datasets::task_from_string(m.at("task").get<std::string>());
    info.meta.num_classes = m.at("num_classes").get<std::int64_t>();
    info.meta.num_tasks = m.at("num_tasks").get<std::int64_t>();
    info.meta.split_name = m.at("split_name").get<std::string>();
    info.meta.is_hetero = m.at("is_hetero").get<bool>();
    info.meta.target_type = m.at("target_type").get<std::string>();
    info.meta.directed = m.at("directed").get<bool>();
    info.meta.source = m.at("source").get<std::string>();
    info.quality.num_vertices = j.at("num_vertices").get<std::int64_t>();
    info.quality.num_edges = j.at("num_edges").get<std::int64_t>();
    for (const ordered_json& t : j.at("node_types")) {
      info.node_types.push_back({t.at("name").get<std::string>(), t.at("count").get<std::int64_t>(),
                                 t.at("feature_dim").get<std::int64_t>()});
      info.type_offsets.push_back(t.at("offset").get<std::int64_t>());
    }
    info.type_offsets.push_back(info.quality.num_vertices);
    for (const ordered_json& r : j.at("relations")) {
      datasets::RelationInfo rel;
      rel.type = {r.at("src").get<std::string>(), r.at("rel").get<std::string>(), r.at("dst").get<std::string>()};
      rel.num_edges = r.at("num_edges").get<std::int64_t>();
      rel.properties.sorted = r.at("sorted").get<bool>();
      rel.properties.symmetric = r.at("symmetric").get<bool>();
      info.relations.push_back(rel);
    }
    info.method = method_from_string(j.at("method").get<std::string>());
    info.objective = objective_from_string(j.at("objective").get<std::string>());
    info.num_parts = j.at("num_parts").get<std::int32_t>();
    info.seed = j.at("seed").get<std::uint64_t>();
    for (const ordered_json& k : j.at("balance")) info.balance.push_back(balance_key_from_string(k.get<std::string>()));
    info.imbalance = j.at("imbalance").get<double>();
    info.metis_objective = j.at("metis_objective").get<std::int64_t>();
    const ordered_json& metrics = j.at("metrics");
    PartitionQuality& q = info.quality;
    q.num_parts = info.num_parts;
    q.edge_cut = metrics.at("edge_cut").get<std::int64_t>();
    q.edge_cut_fraction = metrics.at("edge_cut_fraction").get<double>();
    q.halo_total = metrics.at("halo_total").get<std::int64_t>();
    q.replication_factor = metrics.at("replication_factor").get<double>();
    q.vertices = imbalance_from(metrics.at("imbalance").at("vertices"));
    q.edges = imbalance_from(metrics.at("imbalance").at("edges"));
    q.train = imbalance_from(metrics.at("imbalance").at("train"));
    for (const ordered_json& p : j.at("parts")) {
      PartInfo part;
      part.rank = p.at("rank").get<std::int32_t>();
      if (part.rank != static_cast<std::int32_t>(info.parts.size()))
        throw IoError(path, "lists part " + std::to_string(part.rank) + " at position " + std::to_string(info.parts.size()));
      part.valid = p.at("valid").get<std::int64_t>();
      part.test = p.at("test").get<std::int64_t>();
      part.owned_per_type = p.at("owned_per_type").get<std::vector<std::int64_t>>();
      if (part.owned_per_type.size() != info.node_types.size())
        throw IoError(path, "part " + std::to_string(part.rank) + " lists " + std::to_string(part.owned_per_type.size()) +
                                " owned counts for " + std::to_string(info.node_types.size()) + " vertex types");
      for (const ordered_json& f : p.at("files")) part.files.push_back(file_from(f));
      q.parts.push_back({p.at("owned").get<std::int64_t>(), p.at("halo").get<std::int64_t>(),
                         p.at("edges").get<std::int64_t>(), p.at("train").get<std::int64_t>()});
      info.parts.push_back(std::move(part));
    }
    if (static_cast<std::int32_t>(info.parts.size()) != info.num_parts)
      throw IoError(path, "lists " + std::to_string(info.parts.size()) + " parts, num_parts is " + std::to_string(info.num_parts));
    return info;
  } catch (const nlohmann::json::exception& e) {
    throw IoError(path, std::string("is malformed: ") + e.what());
  } catch (const InvalidArgument& e) {
    throw IoError(path, std::string("is malformed: ") + e.what());
  }
}

}  // namespace halo::partition::detail
