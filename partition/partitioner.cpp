// Method, objective and balance names, the checks on partition options, and the dispatch.
#include "partition/partitioner.hpp"

#include <algorithm>
#include <limits>

#include "graph/base/error.hpp"

namespace halo::partition {

const char* to_string(Method method) {
  switch (method) {
    case Method::metis: return "metis";
    case Method::random: return "random";
    case Method::stream: return "stream";
  }
  return "?";
}

const char* to_string(Objective objective) { return objective == Objective::cut ? "cut" : "vol"; }

const char* to_string(BalanceKey key) {
  switch (key) {
    case BalanceKey::vertices: return "vertices";
    case BalanceKey::edges: return "edges";
    case BalanceKey::train: return "train";
  }
  return "?";
}

Method method_from_string(const std::string& name) {
  for (Method m : {Method::metis, Method::random, Method::stream})
    if (name == to_string(m)) return m;
  throw InvalidArgument("unknown partition method '" + name + "' (expected metis, random or stream)");
}

Objective objective_from_string(const std::string& name) {
  if (name == "cut") return Objective::cut;
  if (name == "vol") return Objective::vol;
  throw InvalidArgument("unknown partition objective '" + name + "' (expected cut or vol)");
}

BalanceKey balance_key_from_string(const std::string& name) {
  for (BalanceKey k : {BalanceKey::vertices, BalanceKey::edges, BalanceKey::train})
    if (name == to_string(k)) return k;
  throw InvalidArgument("unknown balance key '" + name + "' (expected vertices, edges or train)");
}

std::vector<BalanceKey> balance_from_string(const std::string& list) {
  std::vector<BalanceKey> keys;
  std::size_t begin = 0;
  while (true) {
    const std::size_t comma = list.find(',', begin);
    const std::string name = list.substr(begin, comma == std::string::npos ? std::string::npos : comma - begin);
    if (name.empty()) throw InvalidArgument("balance list '" + list + "' has an empty key (expected e.g. vertices,edges)");
    const BalanceKey key = balance_key_from_string(name);
    if (std::find(keys.begin(), keys.end(), key) != keys.end())
      throw InvalidArgument("balance list '" + list + "' names '" + name + "' twice");
    keys.push_back(key);
    if (comma == std::string::npos) return keys;
    begin = comma + 1;
  }
}

std::string balance_to_string(const std::vector<BalanceKey>& keys) {
  std::string s;
  for (BalanceKey k : keys) s += (s.empty() ? "" : ",") + std::string(to_string(k));
  return s;
}

std::vector<BalanceKey> default_balance(Method method) {
  if (method == Method::stream) return {BalanceKey::vertices, BalanceKey::edges};
  return {BalanceKey::vertices};
}

void check_partition_options(const PartitionOptions& o, std::int64_t num_vertices) {
  if (o.num_parts < 1) throw InvalidArgument("the number of parts must be at least 1, got " + std::to_string(o.num_parts));
  if (o.num_parts > num_vertices)
    throw InvalidArgument("cannot cut " + std::to_string(num_vertices) + " vertices into " + std::to_string(o.num_parts) +
                          " parts (at most one part per vertex)");
  if (o.num_parts > std::numeric_limits<std::int32_t>::max())
    throw InvalidArgument("the number of parts must be below 2^31, got " + std::to_string(o.num_parts));
  if (!(o.imbalance >= 0.001 && o.imbalance < 10))
    throw InvalidArgument("the imbalance must be in [0.001, 10), got " + std::to_string(o.imbalance));
  for (std::size_t i = 0; i < o.balance.size(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      if (o.balance[i] == o.balance[j])
        throw InvalidArgument(std::string("the balance key '") + to_string(o.balance[i]) + "' is given twice");
}

PartitionResult partition_vertices(const PartitionInput& input, const PartitionOptions& options) {
  check_partition_options(options, input.num_vertices);
  switch (options.method) {
    case Method::metis: return metis_partition(input, options);
    case Method::stream: return {stream_partition(input, options), -1};
    case Method::random: return {random_partition(input.num_vertices, options.num_parts, options.seed), -1};
  }
  throw InvalidArgument("partition_vertices: unknown method");
}

}  // namespace halo::partition
