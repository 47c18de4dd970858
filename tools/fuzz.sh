#!/usr/bin/env bash
# Builds the libFuzzer targets of halo's parsers (fuzz/, the fuzz preset: clang with
# AddressSanitizer and UBSan, in build-fuzz/), makes their seed corpora and runs each for a bounded
# time. A crash, a sanitizer report, or an exception other than halo::Error escaping a parser is a
# finding: its input is kept in build-fuzz/findings/ and the script exits 1.
#
#   tools/fuzz.sh [--seconds N] [--jobs J] [--only A,B]
#                                            N seconds per target (default 20, what tools/test.sh
#                                            runs; run 600 or more by hand), J targets at once
#                                            (default: the cores), only the targets named
#
# Seeds: the real datasets of ../shared/datasets when present (OGB's master.csv, meta.json and the
# first lines of the raw CSV files, plain and gzip; the .npy files, dataset.json, partition.json
# and a checkpoint's manifest.json halo writes for cora), else a generated graph's, so the seeds
# never enter the repository; tools/configs/*.json for --config; tests/data/npz/'s archives. The corpora grow in
# build-fuzz/corpus/ from run to run.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
seconds=20
jobs=$(nproc)
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) seconds=$2; shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    --only) only=$2; shift 2 ;;
    *) echo "usage: tools/fuzz.sh [--seconds N] [--jobs J] [--only A,B]" >&2; exit 2 ;;
  esac
done
targets=(npy npz csv dataset_json ogb_meta partition_json checkpoint_manifest train_config)
all_targets=("${targets[@]}")
if [ -n "${only:-}" ]; then IFS=, read -r -a targets <<<"$only"; fi
build="$root/build-fuzz"
shared="$root/../shared/datasets"

if ! command -v clang++ >/dev/null 2>&1; then
  echo "fuzz: clang++ not found (tools/install-deps.sh installs it)" >&2
  exit 1
fi
cmake --preset fuzz >/dev/null
cmake --build "$build" -j "$(nproc)" --target "${targets[@]/%/_fuzzer}" >/dev/null

# Seeds, made once (the programs of the release build write halo's files; without them the .npy,
# dataset.json and partition.json seeds are left out).
seeds="$build/seeds"
if [ ! -d "$seeds" ]; then
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  for t in "${all_targets[@]}"; do mkdir -p "$tmp/$t"; done
  data="$tmp/data"
  if [ -d "$shared/cora/raw" ]; then
    cp "$shared/master.csv" "$tmp/ogb_meta/master.csv" 2>/dev/null || true
    for name in cora citeseer actor acm dblp; do
      [ -f "$shared/$name/meta.json" ] && cp "$shared/$name/meta.json" "$tmp/ogb_meta/$name-meta.json"
      for csv in "$shared/$name"/raw/*.csv.gz "$shared/$name"/split/*/*.csv.gz; do
        [ -f "$csv" ] || continue
        base="$name-$(basename "$(dirname "$csv")")-$(basename "$csv" .csv.gz)"
        zcat "$csv" | head -40 >"$tmp/csv/$base.csv" || true
        gzip -c "$tmp/csv/$base.csv" >"$tmp/csv/$base.csv.gz.seed"
      done
    done
    source_dataset="$shared/cora"
  else
    source_dataset=""
  fi
  if [ -x "$root/build/bin/halo-convert" ] && [ -x "$root/build/bin/halo-partition" ]; then
    if [ -n "$source_dataset" ]; then
      "$root/build/bin/halo-convert" ogb "$source_dataset" "$data" -q
    else
      "$root/build/bin/halo-convert" synth sbm "$data" --nodes 200 --features 8 -q
    fi
    "$root/build/bin/halo-partition" "$data" --parts 2 -o "$tmp/parts" -q >/dev/null
    cp "$data/dataset.json" "$tmp/dataset_json/"
    cp "$tmp/parts/partition.json" "$tmp/partition_json/"
    "$root/build/bin/halo-train" --dataset "$data" --epochs 2 --checkpoint "$tmp/checkpoint" -q >/dev/null
    cp "$tmp/checkpoint/run-0000/manifest.json" "$tmp/checkpoint_manifest/"
    # Whole small arrays, and the first 4 KiB of large ones (their headers and first rows).
    find "$data" "$tmp/parts/part-0000" -name '*.npy' | while read -r npy; do
      head -c 4096 "$npy" >"$tmp/npy/$(basename "$(dirname "$npy")")-$(basename "$npy")"
    done
  fi
  cp "$root"/tools/configs/*.json "$tmp/train_config/"
  mkdir -p "$build"
  mv "$tmp" "$seeds"
  trap - EXIT
fi

# The .npz seeds are the repository's fixtures (numpy's and OGB's DatasetSaver's own archives).
mkdir -p "$seeds/npz"
find "$root/tests/data/npz" -name '*.npz' | while read -r npz; do
  cp "$npz" "$seeds/npz/$(basename "$(dirname "$npz")")-$(basename "$npz")"
done

mkdir -p "$build/findings"
echo "fuzz: ${#targets[@]} targets, ${seconds} s each, ${jobs} at once"
status=0
run_one() {
  local t=$1 corpus="$build/corpus/$1"
  mkdir -p "$corpus"
  "$build/fuzz/${t}_fuzzer" "$corpus" "$seeds/$t" -max_total_time="$seconds" -max_len=65536 -timeout=10 \
    -rss_limit_mb=4096 -artifact_prefix="$build/findings/$t-" -print_final_stats=1 >"$build/findings/$t.log" 2>&1
}
pids=()
names=()
for t in "${targets[@]}"; do
  run_one "$t" &
  pids+=($!)
  names+=("$t")
  if [ ${#pids[@]} -ge "$jobs" ]; then
    if ! wait "${pids[0]}"; then status=1; echo "fuzz: ${names[0]}: FINDING (build-fuzz/findings/${names[0]}.log)"; fi
    pids=("${pids[@]:1}")
    names=("${names[@]:1}")
  fi
done
for i in "${!pids[@]}"; do
  if ! wait "${pids[$i]}"; then status=1; echo "fuzz: ${names[$i]}: FINDING (build-fuzz/findings/${names[$i]}.log)"; fi
done
for t in "${targets[@]}"; do
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$build/findings/$t.log")
  echo "fuzz: $t: ${runs:-?} inputs, corpus $(ls "$build/corpus/$t" | wc -l) files"
done
exit $status
