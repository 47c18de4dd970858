// Tests of datasets/ogb_meta.*: the built-in ogbn-* table, master.csv and meta.json parsing,
// and which source wins for a dataset folder.
#include "datasets/ogb_meta.hpp"

#include <catch2/catch.hpp>

#include <filesystem>

#include "graph/base/error.hpp"
#include "tests/datasets/ogb_fixture.hpp"
#include "tests/support/test_paths.hpp"

using namespace halo;
using namespace halo::datasets;
using Catch::Contains;
using halo::test::ScratchDir;
using halo::test::write_file;

TEST_CASE("builtin_ogb_meta knows the five ogbn node sets as OGB's master.csv lists them", "[datasets]") {
  const OgbMeta arxiv = builtin_ogb_meta("ogbn-arxiv").value();
  CHECK(arxiv.num_classes == 40);
  CHECK(arxiv.num_tasks == 1);
  CHECK(arxiv.add_inverse_edge == false);
  CHECK(arxiv.split == "time");
  CHECK(arxiv.task_type == "multiclass classification");
  CHECK(arxiv.additional_node_files == std::vector<std::string>{"node_year"});
  CHECK(arxiv.url == "http://snap.stanford.edu/ogb/data/nodeproppred/arxiv.zip");

  const OgbMeta proteins = builtin_ogb_meta("ogbn-proteins").value();
  CHECK(proteins.num_tasks == 112);
  CHECK(proteins.num_classes == 2);
  CHECK(proteins.eval_metric == "rocauc");
  CHECK(proteins.task_type == "binary classification");
  CHECK(proteins.add_inverse_edge == true);
  CHECK(proteins.has_node_attr == false);
  CHECK(proteins.has_edge_attr == true);
  CHECK(proteins.split == "species");

  const OgbMeta products = builtin_ogb_meta("ogbn-products").value();
  CHECK(products.num_classes == 47);
  CHECK(products.add_inverse_edge == true);
  CHECK(products.split == "sales_ranking");
  CHECK(products.additional_node_files == std::vector<std::string>{});

  const OgbMeta mag = builtin_ogb_meta("ogbn-mag").value();
  CHECK(mag.is_hetero == true);
  CHECK(mag.num_classes == 349);
  CHECK(mag.version == "2");
  CHECK(mag.additional_edge_files == std::vector<std::string>{"edge_reltype"});

  const OgbMeta papers = builtin_ogb_meta("ogbn-papers100M").value();
  CHECK(papers.binary == true);
  CHECK(papers.num_classes == 172);
  CHECK(papers.download_name == "papers100M-bin");

  CHECK_FALSE(builtin_ogb_meta("cora").has_value());
  CHECK(builtin_ogb_names().size() == 5);
}

TEST_CASE("ogb_folder_name turns dashes into underscores", "[datasets]") {
  CHECK(ogb_folder_name("ogbn-arxiv") == "ogbn_arxiv");
  CHECK(ogb_folder_name("cora") == "cora");
}

TEST_CASE("parse_master_csv reads one OgbMeta per column, quoted lists included", "[datasets]") {
  const std::string text =
      ",acm,cora\n"
      "num classes,3,7\n"
      "add_inverse_edge,False,True\n"
      "additional node files,\"node_year,node_venue\",None\n"
      "is hetero,True,False\n"
      "some future key,x,y\n";
  const std::vector<OgbMeta> metas = parse_master_csv(text, "master.csv");
  REQUIRE(metas.size() == 2);
  CHECK(metas[0].name == "acm");
  CHECK(metas[0].num_classes == 3);
  CHECK(metas[0].is_hetero == true);
  CHECK(metas[0].additional_node_files == std::vector<std::string>{"node_year", "node_venue"});
  CHECK(metas[1].name == "cora");
  CHECK(metas[1].add_inverse_edge == true);
  CHECK(metas[1].additional_node_files == std::vector<std::string>{});
  CHECK(metas[1].split.empty());
  CHECK_FALSE(metas[1].num_tasks.has_value());
}

TEST_CASE("parse_master_csv names the line of a malformed value", "[datasets]") {
  CHECK_THROWS_AS(parse_master_csv(",a\nnum classes,7\nadd_inverse_edge,maybe\n", "m.csv"), IoError);
  CHECK_THROWS_WITH(parse_master_csv(",a\nnum classes,7\nadd_inverse_edge,maybe\n", "m.csv"),
                    Contains("m.csv:3:") && Contains("'maybe'"));
  CHECK_THROWS_WITH(parse_master_csv(",a,b\nnum classes,7\n", "m.csv"), Contains("m.csv:2:"));
}

TEST_CASE("parse_meta_json reads OGB's string values and plain JSON numbers and booleans", "[datasets]") {
  const OgbMeta m = parse_meta_json(
      R"({"name": "x", "num classes": 5, "add_inverse_edge": true, "split": "s", "num_nodes_dict": {"a": 1}})", "m.json");
  CHECK(m.name == "x");
  CHECK(m.num_classes == 5);
  CHECK(m.add_inverse_edge == true);
  CHECK(m.split == "s");
  CHECK_THROWS_WITH(parse_meta_json("{\"num tasks\": \"many\"}", "m.json"), Contains("m.json") && Contains("'many'"));
  CHECK_THROWS_WITH(parse_meta_json("{oops", "m.json"), Contains("m.json") && Contains("invalid JSON"));
}

TEST_CASE("find_ogb_meta prefers meta.json, then master.csv beside the folder, then the built-in table",
          "[datasets]") {
  ScratchDir scratch;
  write_file(scratch / "master.csv", ",ogbn-arxiv,other\nnum classes,41,2\nsplit,from_master,x\n");
  write_file(scratch / "ogbn_arxiv/meta.json", R"({"split": "from_json"})");
  const OgbMeta m = find_ogb_meta(scratch / "ogbn_arxiv");
  CHECK(m.name == "ogbn-arxiv");
  CHECK(m.split == "from_json");
  CHECK(m.num_classes == 41);
  CHECK(m.eval_metric == "acc");
  CHECK(m.add_inverse_edge == false);
  CHECK(find_ogb_meta(scratch / "ogbn_arxiv/").name == "ogbn-arxiv");
}

TEST_CASE("find_ogb_meta falls back to the folder name, or takes the name it is given", "[datasets]") {
  ScratchDir scratch;
  std::filesystem::create_directories(scratch / "my_set");
  const OgbMeta plain = find_ogb_meta(scratch / "my_set");
  CHECK(plain.name == "my_set");
  CHECK_FALSE(plain.num_classes.has_value());
  const OgbMeta named = find_ogb_meta(scratch / "my_set", "ogbn-products");
  CHECK(named.name == "ogbn-products");
  CHECK(named.num_classes == 47);
}
