// Tests of partition/partitioner.*: the names of methods, objectives and balance keys, and the
// checks every partitioner applies to its options.
#include "partition/partitioner.hpp"

#include <catch2/catch.hpp>

using namespace halo;
using namespace halo::partition;

TEST_CASE("Method, objective and balance names round-trip, unknown ones are refused by name", "[partition]") {
  for (Method m : {Method::metis, Method::random, Method::stream}) CHECK(method_from_string(to_string(m)) == m);
  CHECK(objective_from_string("vol") == Objective::vol);
  CHECK_THROWS_WITH(method_from_string("kahip"), "unknown partition method 'kahip' (expected metis, random or stream)");
  CHECK_THROWS_WITH(objective_from_string("time"), Catch::Contains("unknown partition objective 'time'"));
  CHECK(balance_from_string("edges,vertices,train") ==
        std::vector<BalanceKey>{BalanceKey::edges, BalanceKey::vertices, BalanceKey::train});
  CHECK(balance_to_string({BalanceKey::vertices, BalanceKey::train}) == "vertices,train");
  CHECK_THROWS_WITH(balance_from_string("vertices,degree"), Catch::Contains("unknown balance key 'degree'"));
  CHECK_THROWS_WITH(balance_from_string("vertices,,edges"), Catch::Contains("has an empty key"));
  CHECK_THROWS_WITH(balance_from_string("edges,edges"), Catch::Contains("names 'edges' twice"));
}

TEST_CASE("Each method has its default balance", "[partition]") {
  CHECK(default_balance(Method::metis) == std::vector<BalanceKey>{BalanceKey::vertices});
  CHECK(default_balance(Method::random) == std::vector<BalanceKey>{BalanceKey::vertices});
  CHECK(default_balance(Method::stream) == std::vector<BalanceKey>{BalanceKey::vertices, BalanceKey::edges});
}

TEST_CASE("check_partition_options refuses part counts and tolerances out of range, with the numbers", "[partition]") {
  PartitionOptions o;
  o.num_parts = 0;
  CHECK_THROWS_WITH(check_partition_options(o, 10), "the number of parts must be at least 1, got 0");
  o.num_parts = 11;
  CHECK_THROWS_WITH(check_partition_options(o, 10), "cannot cut 10 vertices into 11 parts (at most one part per vertex)");
  o.num_parts = 10;
  CHECK_NOTHROW(check_partition_options(o, 10));
  o.imbalance = 0;
  CHECK_THROWS_WITH(check_partition_options(o, 10), Catch::Contains("imbalance must be in [0.001, 10)"));
  o.imbalance = 0.05;
  o.balance = {BalanceKey::train, BalanceKey::train};
  CHECK_THROWS_WITH(check_partition_options(o, 10), Catch::Contains("'train' is given twice"));
}

TEST_CASE("partition_vertices dispatches on the method", "[partition]") {
  PartitionInput input;
  input.num_vertices = 9;
  PartitionOptions o;
  o.method = Method::random;
  o.num_parts = 3;
  o.seed = 4;
  const PartitionResult r = partition_vertices(input, o);
  CHECK(r.objective == -1);
  CHECK(r.parts.to_vector() == random_partition(9, 3, 4).to_vector());
}
