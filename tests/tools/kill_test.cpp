// SIGKILL at random moments of halo-convert and halo-partition, each replacing its previous
// output with --force, and of halo-train writing a checkpoint every epoch (issue #24): after every
// kill the destination is the old output or the new one, whole (its CRC-32s verify), never a mix;
// and the next run, once it has finished, leaves no temporary behind, the killed run's included.
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "tests/support/test_paths.hpp"
#include "tests/tools/run_program.hpp"

using halo::test::ScratchDir;
using Result = halo::test::ProgramResult;
namespace fs = std::filesystem;

namespace {

constexpr int trials = 20;

// Runs `command` (a shell command line) in the background and SIGKILLs it after `delay_s`; its
// stderr goes to `err`.
void kill_after(const ScratchDir& scratch, const std::string& command, double delay_s,
                const std::string& err = "/dev/null") {
  const std::string script = scratch / "kill.sh";
  std::ofstream(script) << command << " >/dev/null 2>" << err << " &\npid=$!\nsleep " << delay_s
                        << "\nkill -9 $pid 2>/dev/null\nwait $pid\nexit 0\n";
  REQUIRE(std::system(("sh " + script).c_str()) == 0);
}

std::vector<std::string> entries(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

// True when a killed run left something beside the destination (a temporary of its own name).
bool left_temporaries(const std::string& dir, const std::string& name) {
  const std::vector<std::string> names = entries(dir);
  return std::any_of(names.begin(), names.end(), [&](const std::string& n) { return n != name; });
}

// The destination, when it exists, is a whole output: `verify` (a halo program's check of every
// file's CRC-32) passes on it.
void check_whole(const ScratchDir& scratch, const std::string& destination, const std::string& program,
                 const std::string& verify) {
  if (!fs::exists(destination)) return;
  const Result r = halo::test::run_program(program, verify, scratch);
  INFO(r.err);
  CHECK(r.exit_code == 0);
}

// `trials` runs of `command(i)`, each writing out/`name` and SIGKILLed after a seeded random delay
// within the time one whole run takes here and now (measured first: the machine may be busy),
// each followed by check_whole with `program` `verify`; returns how many kills landed mid-write.
// When none did (the load changed after the measurement: under ctest -j with oversubscribed MPI
// tests starting, every kill once landed before the writing began), up to two more rounds of
// `trials`, each with the run's time measured again, until one does.
template <class Command>
int kill_trials(const ScratchDir& scratch, const std::string& out, const std::string& name, Command command,
                const std::string& program, const std::string& verify) {
  std::mt19937 random(24);
  int caught_writing = 0;
  for (int round = 0; round < 3 && (round == 0 || caught_writing == 0); ++round) {
    const auto start = std::chrono::steady_clock::now();
    REQUIRE(std::system((command(3 * trials + round) + " >/dev/null 2>&1").c_str()) == 0);
    const double whole = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::uniform_real_distribution<double> delay(0.0, whole);
    for (int i = round * trials; i < (round + 1) * trials; ++i) {
      INFO("trial " << i << " (a run takes " << whole << " s)");
      kill_after(scratch, command(i), delay(random));
      check_whole(scratch, out + "/" + name, program, verify);
      caught_writing += left_temporaries(out, name) ? 1 : 0;
    }
  }
  return caught_writing;
}

}  // namespace

TEST_CASE("halo-convert killed at random moments leaves the old dataset or the new one, and the next run cleans up",
          "[tools][slow]") {
  ScratchDir scratch;
  const std::string out = scratch / "out";
  fs::create_directories(out);
  const std::string destination = out + "/ds";
  const std::string bin = halo::test::binary_dir() + "/bin/";
  const int caught_writing = kill_trials(
      scratch, out, "ds",
      [&](int i) {
        return bin + "halo-convert synth sbm " + destination + " --nodes 300000 --seed " + std::to_string(i) + " --force -q";
      },
      "halo-convert", "info " + destination + " --verify --json " + (scratch / "i.json"));
  CHECK(caught_writing > 0);  // some kills did land while the output was being written
  const Result last = halo::test::run_program("halo-convert", "synth sbm " + destination + " --nodes 1000 --force -q", scratch);
  INFO(last.err);
  REQUIRE(last.exit_code == 0);
  CHECK(entries(out) == std::vector<std::string>{"ds"});
}

TEST_CASE("halo-partition killed at random moments leaves the old partition or the new one, and the next run cleans up",
          "[tools][slow]") {
  ScratchDir scratch;
  const std::string data = scratch / "sbm";
  REQUIRE(halo::test::run_program("halo-convert", "synth sbm " + data + " --nodes 100000 -q", scratch).exit_code == 0);
  const std::string out = scratch / "out";
  fs::create_directories(out);
  const std::string destination = out + "/parts";
  const std::string bin = halo::test::binary_dir() + "/bin/";
  const int caught_writing = kill_trials(
      scratch, out, "parts",
      [&](int i) {
        return bin + "halo-partition " + data + " --parts " + std::to_string(2 + i % 2) + " -o " + destination + " --force -q";
      },
      "halo-partition", "info " + destination + " --verify --json " + (scratch / "i.json"));
  CHECK(caught_writing > 0);
  const Result last = halo::test::run_program("halo-partition", data + " --parts 2 -o " + destination + " --force -q", scratch);
  INFO(last.err);
  REQUIRE(last.exit_code == 0);
  CHECK(entries(out) == std::vector<std::string>{"parts"});
}

TEST_CASE("halo-train killed at random moments resumes from a whole checkpoint every time and cleans up",
          "[tools][slow]") {
  ScratchDir scratch;
  const std::string data = scratch / "sbm";
  REQUIRE(halo::test::run_program("halo-convert", "synth sbm " + data + " --nodes 20000 --features 64 -q", scratch).exit_code ==
          0);
  const std::string checkpoints = scratch / "ckpt";
  // Every epoch writes a checkpoint (replacing the last), so kills land in writes as well.
  const std::string command = halo::test::binary_dir() + "/bin/halo-train --dataset " + data +
                              " --epochs 100000 --hidden 256 --eval-every 1000 --threads 1 --checkpoint " + checkpoints +
                              " --checkpoint-every 1 --resume";
  std::mt19937 random(24);
  std::uniform_real_distribution<double> delay(0.4, 1.2);
  int last_resumed = 0;
  for (int i = 0; i < trials; ++i) {
    INFO("trial " << i);
    kill_after(scratch, command, delay(random), scratch / "train.err");
    const std::string err = halo::test::slurp(scratch / "train.err");
    INFO(err);
    CHECK(err.find("error") == std::string::npos);  // no checkpoint was ever refused as damaged
    const std::size_t at = err.find("after epoch ");
    if (at == std::string::npos) continue;  // killed before it had read the checkpoint
    const int resumed = std::stoi(err.substr(at + 12));
    CHECK(resumed >= last_resumed);  // never an older state than a run before it had reached
    last_resumed = resumed;
  }
  CHECK(last_resumed > 0);
  // A last run, stopped cleanly, leaves only the checkpoint: the killed runs' temporaries are gone.
  const std::string script = scratch / "stop.sh";
  std::ofstream(script) << command << " 2>/dev/null &\npid=$!\nsleep 1\nkill -TERM $pid\nwait $pid\n";
  CHECK(WEXITSTATUS(std::system(("sh " + script).c_str())) == 143);
  CHECK(entries(checkpoints) == std::vector<std::string>{"run-0000"});
}
