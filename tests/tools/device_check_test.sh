#!/usr/bin/env bash
# Tests of tools/device-check.sh that need no GPU and no build: it refuses before any step without
# its prepared dependencies (naming --prepare), records every step as skipped when the budget is
# spent (JSON complete, not ok), and leaves the JSON of its finished steps when killed with
# SIGKILL in the middle of a step.
set -uo pipefail
source_dir=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
json() { python3 -c "import json, sys; d = json.load(open(sys.argv[1])); print(($2))" "$1"; }
script="$source_dir/tools/device-check.sh"

# A stand-in for .device-prep holding the files the script looks for (no real content).
prep="$work/prep"
mkdir -p "$prep/root/usr/include/nlohmann" "$prep/sanitizer" "$prep/rgcn-dataset" "$prep/gat-dataset"
touch "$prep/prepared" "$prep/root/usr/include/nlohmann/json.hpp" "$prep/rgcn-cpu.json" "$prep/hgt-cpu.json" \
  "$prep/rgat-cpu.json" "$prep/gat-cpu.json" "$prep/gat-dataset/dataset.json" \
  "$prep/sanitizer/nvidia_cuda_sanitizer_api-0-py3-none-any.whl" "$prep/rgcn-dataset/dataset.json"
export PATH="$work/no-gpu:$PATH"
mkdir -p "$work/no-gpu"
printf '#!/bin/sh\nexit 9\n' >"$work/no-gpu/nvidia-smi"  # no GPU visible, even on a machine with one
chmod +x "$work/no-gpu/nvidia-smi"

# Refused before any step: no build folder, one "prepared" step in the JSON. (Not timed: a wall-clock
# bound failed here once on a machine loaded past its cores.)
echo "--- without the prepared folder: refused before any step"
HALO_CHECK_PREP="$work/absent" OUT="$work/out1" HALO_CHECK_BUILD="$work/build" "$script" >"$work/out1.txt" 2>&1
status=$?
cat "$work/out1.txt"
[ "$status" = 2 ] || fail "exit $status, expected 2"
grep -q "tools/device-check.sh --prepare" "$work/out1.txt" || fail "the refusal does not name --prepare"
[ "$(json "$work/out1/device-check.json" 'd["ok"], d["finished"], [(x["step"], x["status"]) for x in d["steps"]]')" = \
  "(False, True, [('prepared', 'failed')])" ] || fail "device-check.json of the refusal"
[ ! -e "$work/build" ] || fail "a refused run created its build folder"

echo "--- a budget of 1 s: every step skipped, the JSON complete"
HALO_CHECK_PREP="$prep" OUT="$work/out2" HALO_CHECK_BUILD="$work/build" "$script" --budget 1 >"$work/out2.txt" 2>&1
status=$?
cat "$work/out2.txt"
[ "$status" = 1 ] || fail "exit $status, expected 1"
expected="machine configure build gpu-tests memcheck racecheck synccheck gpu-train-timing gpu-rgcn gpu-hgt gpu-rgat gpu-gat gpu-gcn-bench gpu-gat-bench gpu-memory-plan gpu-hetero-bench gpu-feature-streaming gpu-spmm-bench gpu-gat-rmat"
[ "$(json "$work/out2/device-check.json" '" ".join(s["step"] for s in d["steps"])')" = "$expected" ] ||
  fail "the steps recorded: $(json "$work/out2/device-check.json" 'd["steps"]')"
[ "$(json "$work/out2/device-check.json" 'all(s["status"] == "skipped" for s in d["steps"]), d["ok"], d["passed"], d["finished"]')" = \
  "(True, False, [], True)" ] || fail "a skipped step counted as passed, or the run not finished"
[ "$(json "$work/out2/device-check.json" 'd["steps"][0]["reason"].split(":")[0], d["steps"][4]["reason"]')" = \
  "('budget', 'no GPU')" ] || fail "the reasons: $(json "$work/out2/device-check.json" 'd["steps"]')"

echo "--- killed with SIGKILL during configure: the finished machine step is in the JSON"
HALO_CHECK_PREP="$prep" OUT="$work/out3" HALO_CHECK_BUILD="$work/build" setsid "$script" --budget 600 \
  >"$work/out3.txt" 2>&1 &
pid=$!
for _ in $(seq 1 300); do
  if [ -f "$work/out3/device-check.json" ] &&
    [ "$(json "$work/out3/device-check.json" 'len(d["steps"])' 2>/dev/null)" = 1 ]; then
    break
  fi
  sleep 0.05
done
kill -KILL -- "-$pid"
wait "$pid" 2>/dev/null
cat "$work/out3.txt"
[ "$(json "$work/out3/device-check.json" '[s["step"] for s in d["steps"]], d["steps"][0]["status"], d["finished"]')" = \
  "(['machine'], 'passed', False)" ] || fail "after SIGKILL: $(cat "$work/out3/device-check.json")"
[ -s "$work/out3/steps/machine.log" ] || fail "no log of the machine step"
json "$work/out3/device-check.json" 'd["machine"]["cores"] > 0' | grep -q True || fail "machine.json not merged"
echo "PASS"
