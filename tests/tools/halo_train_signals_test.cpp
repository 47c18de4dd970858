// halo-train under SIGINT and SIGTERM (issue #24): the first signal ends the epoch, saves a
// checkpoint when --checkpoint is set, says what was saved and how to resume, and exits 130 / 143;
// a second signal ends the process at once; a resumed run goes on from the saved epoch.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>

#include <nlohmann/json.hpp>

#include "tests/support/test_paths.hpp"
#include "tests/tools/run_program.hpp"

using halo::test::ScratchDir;
using Result = halo::test::ProgramResult;

namespace {

std::string make_dataset(const ScratchDir& scratch, int nodes = 500) {
  const std::string dir = scratch / "sbm";
  const Result r = halo::test::run_program(
      "halo-convert", "synth sbm " + dir + " --nodes " + std::to_string(nodes) + " --features 16 -q", scratch);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  return dir;
}

// Starts halo-train `args` in the background, waits until it has printed `line`, sends `signals`
// (e.g. "INT", or "INT TERM": two kinds, which the kernel cannot merge into one), and returns its exit code (as the shell reports it: 128 + N when
// signal N ended it) with what it printed on stderr.
Result signal_training(const ScratchDir& scratch, const std::string& args, const std::string& line,
                       const std::string& signals) {
  const std::string err = scratch / "train.err";
  const std::string script = scratch / "signal.sh";
  // The log of an earlier call is removed first: the wait below must see this run's line, not
  // signal a process that has not yet opened its log (let alone set its handlers).
  std::ofstream(script) << "rm -f " + err + "\n"
                        << halo::test::binary_dir() + "/bin/halo-train " + args + " 2>" + err + " &\n"
                        << "pid=$!\n"
                        << "while ! grep -q '" + line + "' " + err + " && kill -0 $pid 2>/dev/null; do sleep 0.02; done\n"
                        << "for s in " + signals + "; do kill -$s $pid; done\n"
                        << "wait $pid\n"
                        << "exit $?\n";
  const int status = std::system(("sh " + script).c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, "", halo::test::slurp(err)};
}

}  // namespace

TEST_CASE("halo-train stops at the end of the epoch on SIGINT, saves a checkpoint and resumes from it", "[tools]") {
  ScratchDir scratch;
  const std::string data = make_dataset(scratch);
  const std::string checkpoints = scratch / "ckpt";
  const std::string args = "--dataset " + data + " --epochs 100000 --eval-every 1000 --threads 1 --checkpoint " + checkpoints;
  const Result stopped = signal_training(scratch, args, "epoch 3 |", "INT");
  INFO(stopped.err);
  CHECK(stopped.exit_code == 130);
  std::smatch m;
  REQUIRE(std::regex_search(stopped.err, m, std::regex("halo-train: stopped: SIGINT after epoch (\\d+) of 100000 of run 0; "
                                                        "the checkpoint of epoch (\\d+) is in ")));
  CHECK(m[1] == m[2]);
  CHECK(stopped.err.find("--resume to go on") != std::string::npos);
  CHECK(stopped.err.find("stopping at the end of this epoch, after a checkpoint") != std::string::npos);
  const int epoch = std::stoi(m[1]);
  std::ifstream manifest(checkpoints + "/run-0000/manifest.json");
  CHECK(nlohmann::json::parse(manifest)["epoch"] == epoch);

  const Result resumed = signal_training(scratch, args + " --resume", "epoch " + std::to_string(epoch + 2) + " |", "TERM");
  INFO(resumed.err);
  CHECK(resumed.exit_code == 143);
  CHECK(resumed.err.find("resumed from " + checkpoints + "/run-0000 after epoch " + std::to_string(epoch)) !=
        std::string::npos);
  CHECK(resumed.err.find("halo-train: stopped: SIGTERM after epoch ") != std::string::npos);
}

TEST_CASE("halo-train without --checkpoint says nothing was kept, and a second signal ends it at once", "[tools]") {
  ScratchDir scratch;
  // Epochs of tens of milliseconds: both signals arrive within one.
  const std::string data = make_dataset(scratch, 20000);
  const std::string args = "--dataset " + data + " --epochs 100000 --hidden 256 --eval-every 1000 --threads 1";
  const Result stopped = signal_training(scratch, args, "epoch 2 |", "TERM");
  INFO(stopped.err);
  CHECK(stopped.exit_code == 143);
  CHECK(stopped.err.find("no checkpoint was written (--checkpoint DIR keeps one that --resume continues)") !=
        std::string::npos);
  const Result twice = signal_training(scratch, args, "epoch 2 |", "INT TERM");
  INFO(twice.err);
  // The default action of whichever came second ended it.
  CHECK((twice.exit_code == 130 || twice.exit_code == 143));
  CHECK(twice.err.find("stopping at the end of this epoch") != std::string::npos);
  CHECK(twice.err.find("stopped:") == std::string::npos);
}
