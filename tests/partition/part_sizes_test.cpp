// Tests of partition/part_sizes.*: the counts estimated by partitioning in memory equal those of
// the partition directory written from the same options (read back from partition.json), and
// equal what the parts themselves hold once read (rows, halo, sent rows, entries, splits).
#include "partition/part_sizes.hpp"

#include <catch2/catch.hpp>

#include "datasets/checksum.hpp"
#include "datasets/dataset_dir.hpp"
#include "datasets/synth.hpp"
#include "partition/partition_dir.hpp"
#include "tests/support/test_paths.hpp"

using namespace halo;

TEST_CASE("estimate_part_sizes gives the counts of the parts halo-partition writes", "[partition]") {
  datasets::SbmOptions o;
  o.nodes = 3000;
  o.avg_degree = 10;
  o.features = 4;
  const datasets::Dataset ds = datasets::generate_sbm(o);
  for (partition::Method method : {partition::Method::random, partition::Method::stream}) {
    INFO(partition::to_string(method));
    partition::PartitionOptions options;
    options.method = method;
    options.num_parts = 4;
    partition::PartitionQuality quality;
    const std::vector<partition::PartSizes> estimated = partition::estimate_part_sizes(ds, options, &quality);

    test::ScratchDir scratch;
    datasets::write_dataset_dir(ds, scratch / "dataset", false);
    partition::PartitionDirWriter writer(scratch / "parts", false);
    const partition::PartitionInput input = partition::build_partition_input(ds, options);
    writer.write(ds, {scratch / "dataset", datasets::file_checksum(scratch / "dataset/dataset.json")}, options,
                 input.balance, partition::partition_vertices(input, options));
    const partition::PartitionDirInfo info = partition::read_partition_info(scratch / "parts");
    const std::vector<partition::PartSizes> listed = partition::part_sizes(info);
    CHECK(quality.halo_total == info.quality.halo_total);
    REQUIRE(estimated.size() == 4);
    REQUIRE(listed.size() == 4);
    std::int64_t owned = 0;
    for (std::int32_t r = 0; r < 4; ++r) {
      const partition::PartSizes& e = estimated[static_cast<std::size_t>(r)];
      const partition::PartSizes& l = listed[static_cast<std::size_t>(r)];
      const partition::Part part = partition::read_part(scratch / "parts", r);
      CHECK(e.owned == part.graph.num_owned);
      CHECK(e.halo == part.graph.num_halo);
      CHECK(e.send_rows == part.graph.send_rows.size());
      CHECK(e.entries == part.graph.graph().num_edges());
      CHECK(e.train == part.split.train.size());
      CHECK(e.valid == part.split.valid.size());
      CHECK(e.test == part.split.test.size());
      CHECK((l.owned == e.owned && l.halo == e.halo && l.send_rows == e.send_rows && l.entries == e.entries &&
             l.train == e.train && l.valid == e.valid && l.test == e.test));
      owned += e.owned;
    }
    CHECK(owned == ds.num_vertices());
  }
}
