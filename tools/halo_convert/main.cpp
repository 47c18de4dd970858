// halo-convert: OGB raw folders and generated graphs to halo dataset directories, and their
// description. Subcommands: ogb, synth, info.
#include <CLI/CLI.hpp>

#include "tools/common/program.hpp"
#include "tools/halo_convert/commands.hpp"

int main(int argc, char** argv) {
  using namespace halo::tools;
  CLI::App app{"halo-convert: turns OGB datasets and generated graphs into halo dataset directories"};
  app.require_subcommand(1);
  app.fallthrough();  // -q and -v work after the subcommand too
  bool quiet = false;
  bool verbose = false;
  app.add_flag("-q,--quiet", quiet, "Print only warnings and errors");
  app.add_flag("-v,--verbose", verbose, "Print debug messages");

  OgbCommand ogb;
  add_ogb_command(app, ogb);
  SynthCommand synth;
  add_synth_command(app, synth);
  InfoCommand info;
  add_info_command(app, info);

  if (const int code = parse_command_line(app, "halo-convert", argc, argv); code >= 0) return code;
  configure_logging(quiet, verbose);
  return run_program("halo-convert", [&] {
    if (app.got_subcommand("ogb")) return run_ogb_command(ogb);
    if (app.got_subcommand("synth")) return run_synth_command(synth);
    return run_info_command(info);
  });
}
