// The METIS graph file writer: rows formatted in parallel blocks, written in order.
#include "partition/metis_graph_file.hpp"

#include <algorithm>
#include <charconv>
#include <string>
#include <vector>

#include "datasets/atomic_output.hpp"
#include "graph/base/error.hpp"
#include "graph/base/parallel.hpp"

namespace halo::partition {

namespace {

void append_number(std::string& out, std::int64_t value) {
  char text[24];
  const auto end = std::to_chars(text, text + sizeof text, value).ptr;
  out.append(text, static_cast<std::size_t>(end - text));
}

}  // namespace

void write_metis_graph(const graph::CsrGraph& g, const std::string& path) {
  HALO_EXPECTS(g.properties().symmetric && g.num_rows() == g.num_cols(),
               "a METIS graph file holds a symmetric graph; this one does not claim to be");
  const std::int64_t n = g.num_rows();
  datasets::write_file_atomically(path, [&](datasets::FileWriter& file) {
    std::string header;
    append_number(header, n);
    header += ' ';
    append_number(header, g.num_edges() / 2);
    header += '\n';
    file.write(header);
    graph::visit(g, [&](auto v) {
      // Blocks of rows are formatted by all threads at once, then written in row order.
      constexpr std::int64_t rows_per_piece = 4096;
      const std::int64_t pieces_per_block = 64;
      std::vector<std::string> pieces(static_cast<std::size_t>(pieces_per_block));
      for (std::int64_t block = 0; block < n; block += rows_per_piece * pieces_per_block) {
        parallel_for(0, pieces_per_block, [&](std::int64_t piece) {
          std::string& out = pieces[static_cast<std::size_t>(piece)];
          out.clear();
          const std::int64_t b = block + piece * rows_per_piece;
          for (std::int64_t i = b; i < std::min(n, b + rows_per_piece); ++i) {
            for (std::int64_t k = v.indptr[i]; k < v.indptr[i + 1]; ++k) {
              if (k > v.indptr[i]) out += ' ';
              append_number(out, static_cast<std::int64_t>(v.indices[k]) + 1);
            }
            out += '\n';
          }
        }, 1);
        for (const std::string& piece : pieces) file.write(piece);
      }
    });
  });
}

}  // namespace halo::partition
