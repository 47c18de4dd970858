#!/usr/bin/env bash
# The one-call GPU check of halo (issue #6): builds halo with CUDA for sm_90, runs the GPU tests
# and the GPU benchmarks, and writes what it found as JSON to $OUT, in under 8 minutes on an H200.
#
#   tools/device-check.sh --prepare   on a machine with Debian's package archive (a developer's):
#                                     fills .device-prep/ (git-ignored) with what the GPU machine's
#                                     build lacks: header-only libraries (nlohmann-json, CLI11,
#                                     fmt used header-only, Catch2 v2) and zlib's headers with its
#                                     static library, unpacked from Debian .debs, plus ISA-L (its
#                                     shared library needs nothing but glibc 2.14).
#   tools/device-check.sh             on the GPU machine (no network, no Debian packages; nvcc,
#                                     CMake, ninja, PyTorch and PyG): configure with the prepared
#                                     prefix and without METIS, MPI and OpenBLAS, with NCCL where
#                                     one is found (the system's, else the nvidia-nccl wheel that
#                                     PyTorch installed; without one the build leaves NCCL out and
#                                     device-check.json says so), build the
#                                     kernel and trainer tests and the programs, run `ctest -L gpu`
#                                     with HALO_REQUIRE_GPU=1 (a missing GPU fails instead of
#                                     skipping), time `halo-train --device cuda` (GCN on a
#                                     generated graph), train R-GCN on the GPU (tables resident,
#                                     then streamed) and on the CPU on a generated
#                                     ogbn-mag-shaped graph (per-epoch losses to 1e-4 relative,
#                                     the epoch times), `halo-bench gpu-feature-streaming` (features
#                                     streamed past a GPU budget against a pinned cudaMemcpy, and
#                                     a streamed GCN epoch against the in-memory one, issue #7),
#                                     then bench/gpu_spmm.py and bench/gpu_gcn.py.
#                                     Without a GPU (e.g. here) the same steps run, the GPU tests
#                                     skip, the timing is skipped and the benchmarks say so.
#
# Results in $OUT (default ./device-check-out): device-check.json (every step with its status and
# time, the machine), device-check.log, gpu-tests.xml (JUnit), gpu_train.json (halo-train's
# summary; its epoch_time_median_s is the time of one epoch), gpu_rgcn.json (the R-GCN losses on
# the CPU, on the GPU and on the GPU with streamed tables, the largest relative differences and the
# epoch times), gpu_feature_streaming.json,
# gpu_spmm.json, gpu_gcn.json.
# Environment: HALO_CHECK_BUDGET_S (default 420) is the time after which the benchmarks are not
# started; HALO_CHECK_JOBS the build's parallelism (default: all cores).
set -uo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
prep="$root/.device-prep"

prepare() {
  set -e
  local packages=(nlohmann-json3-dev libcli11-dev libfmt-dev catch2 libisal-dev libisal2 zlib1g-dev)
  rm -rf "$prep"
  mkdir -p "$prep/debs" "$prep/root"
  if ! (cd "$prep/debs" && apt-get download "${packages[@]}" >/dev/null 2>&1); then
    apt-get update >/dev/null
    (cd "$prep/debs" && apt-get download "${packages[@]}" >/dev/null)
  fi
  for deb in "$prep"/debs/*.deb; do dpkg -x "$deb" "$prep/root"; done
  # zlib is linked statically from libz.a; its libz.so points at a file that only Debian has.
  rm -f "$prep/root/usr/lib/x86_64-linux-gnu/libz.so"
  rm -rf "$prep/root/usr/share/doc" "$prep/root/usr/share/man"
  (cd "$prep/debs" && ls) >"$prep/packages.txt"
  rm -rf "$prep/debs"
  echo "device-check: prepared $(du -sh "$prep" | cut -f1) in .device-prep/ from: $(tr '\n' ' ' <"$prep/packages.txt")"
  echo "device-check: on the GPU machine run tools/device-check.sh with .device-prep carried along"
}

if [ "${1:-}" = "--prepare" ]; then
  prepare
  exit 0
fi
if [ $# -gt 0 ]; then
  echo "usage: tools/device-check.sh [--prepare]" >&2
  exit 2
fi

out="${OUT:-$root/device-check-out}"
mkdir -p "$out"
log="$out/device-check.log"
: >"$log"
exec > >(tee -a "$log") 2>&1
budget=${HALO_CHECK_BUDGET_S:-420}
jobs=${HALO_CHECK_JOBS:-$(nproc)}
start=$(date +%s)
steps_file=$(mktemp)
nccl_file=$(mktemp)
echo "not configured" >"$nccl_file"
build="$root/build-device"

elapsed() { echo $(($(date +%s) - start)); }

# step NAME COMMAND...: runs the command, records its status and seconds.
step() {
  local name=$1
  shift
  local t0 status
  t0=$(date +%s)
  echo "=== device-check: $name (at $(elapsed) s)"
  "$@"
  status=$?
  echo "{\"step\": \"$name\", \"status\": $status, \"seconds\": $(($(date +%s) - t0))}" >>"$steps_file"
  echo "=== device-check: $name: exit $status after $(($(date +%s) - t0)) s"
  return $status
}

skip_step() {
  echo "{\"step\": \"$1\", \"status\": \"skipped\", \"reason\": \"$2\"}" >>"$steps_file"
  echo "=== device-check: $1 skipped: $2"
}

describe_machine() {
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv 2>&1 || echo "nvidia-smi: not available"
  nvcc --version 2>&1 | tail -2 || echo "nvcc: not found"
  cmake --version | head -1
  ninja --version
  g++ --version | head -1
  echo "cores: $(nproc)"
  ls /usr/local/cuda/lib64 2>/dev/null | grep -E '^lib(cublas|cusparse|cudart)\.so$' || echo "no cuBLAS/cuSPARSE in /usr/local/cuda/lib64"
  python3 -c 'import torch, torch_geometric; print("torch", torch.__version__, "cuda", torch.version.cuda, "pyg", torch_geometric.__version__)' 2>&1 | tail -1
  return 0
}

# The first libnccl.so* under DIR's library folders (the unversioned name sorts first).
nccl_library() {
  local pattern
  for pattern in "$1"/lib/libnccl.so* "$1"/lib64/libnccl.so* "$1"/lib/*-linux-gnu/libnccl.so*; do
    if [ -e "$pattern" ]; then
      echo "$pattern"
      return 0
    fi
  done
  return 1
}

# NCCL's folder (holding include/nccl.h and a libnccl.so*) on stdout: $NCCL_HOME, the CUDA
# toolkit's or the system's, else the nvidia-nccl-cu* wheel PyTorch depends on (its library is
# only libnccl.so.2). Nothing when there is none.
find_nccl() {
  local dir
  for dir in "${NCCL_HOME:-}" /usr/local/cuda /usr /usr/local; do
    if [ -n "$dir" ] && [ -f "$dir/include/nccl.h" ] && nccl_library "$dir" >/dev/null; then
      echo "$dir"
      return 0
    fi
  done
  dir=$(python3 -c 'import nvidia.nccl as m; print(list(m.__path__)[0])' 2>/dev/null) || return 0
  if [ -f "$dir/include/nccl.h" ] && nccl_library "$dir" >/dev/null; then echo "$dir"; fi
}

configure() {
  local args=(-S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DHALO_WITH_CUDA=ON
    -DCMAKE_CUDA_ARCHITECTURES=90 -DHALO_WITH_MPI=OFF -DHALO_WITH_METIS=OFF
    -DHALO_WITH_BLAS=OFF -DHALO_FMT_HEADER_ONLY=ON -DHALO_BUILD_BENCHMARKS=OFF)
  local nccl_dir library
  nccl_dir=$(find_nccl)
  if [ -n "$nccl_dir" ]; then
    library=$(nccl_library "$nccl_dir")
    args+=(-DHALO_WITH_NCCL=ON "-DNCCL_INCLUDE_DIR=$nccl_dir/include" "-DNCCL_LIBRARY=$library")
    echo "$library" >"$nccl_file"
    echo "device-check: NCCL from $nccl_dir ($library)"
  else
    args+=(-DHALO_WITH_NCCL=OFF)
    echo "not found: built without NCCL (its GPU tests skip)" >"$nccl_file"
    echo "device-check: no NCCL found (no nccl.h with a libnccl.so in NCCL_HOME, the CUDA toolkit, the system" \
      "or PyTorch's nvidia-nccl wheel): building without it"
  fi
  if [ -d "$prep/root/usr" ]; then
    args+=("-DCMAKE_PREFIX_PATH=$prep/root/usr")
    if [ -f "$prep/root/usr/lib/x86_64-linux-gnu/libz.a" ]; then
      args+=("-DZLIB_INCLUDE_DIR=$prep/root/usr/include" "-DZLIB_LIBRARY=$prep/root/usr/lib/x86_64-linux-gnu/libz.a")
    fi
  else
    echo "device-check: no .device-prep/ (run tools/device-check.sh --prepare where Debian's archive is reachable); using this machine's libraries"
  fi
  cmake "${args[@]}"
}

build_targets() {
  cmake --build "$build" -j "$jobs" --target halo_kernels_tests halo_train_tests halo_train_layers_tests halo_train_features_tests halo_train_dist_tests halo-bench halo-convert halo-train
}

# halo-train --device cuda: a 2-layer GCN on a generated 100 000-vertex SBM graph (128 features,
# mean degree 16), 20 epochs; its JSON summary holds the median epoch time.
gpu_train_timing() {
  local data="$build/gpu-train-sbm"
  rm -rf "$data"
  "$build/bin/halo-convert" synth sbm "$data" --nodes 100000 --avg-degree 16 --features 128 --classes 8 \
    --homophily 0.8 -q || return 1
  "$build/bin/halo-train" --dataset "$data" --device cuda --model gcn --hidden 128 --epochs 20 -q \
    --json "$out/gpu_train.json" || return 1
  python3 -c 'import json, sys; j = json.load(open(sys.argv[1])); print("halo-train --device cuda: one epoch", j["epoch_time_median_s"], "s, test accuracy", j["test_acc_mean"])' "$out/gpu_train.json"
}

# R-GCN on the GPU against the CPU: ogbn-mag's shape at 1/100 scale (bench/rgcn_vs_pyg.py's
# generator: 4 vertex types, 4 relations and their reverses, features on papers only, so three
# types train embedding tables), OGB's R-GCN settings with 2 bases and dropout, 10 epochs on each
# device with one seed, and on the GPU once more with the tables streamed from host memory through
# 1 MB of staging (--feature-memory-budget). Fails unless every epoch's loss of both GPU runs agrees
# with the CPU's to 1e-4 relative.
gpu_rgcn_check() {
  local ogb="$build/gpu-rgcn-mag" data="$build/gpu-rgcn-mag-halo"
  rm -rf "$ogb" "$data"
  python3 -c 'import sys; sys.path.insert(0, sys.argv[1]); import rgcn_vs_pyg; rgcn_vs_pyg.generate_mag_like(sys.argv[2], 0.01)' \
    "$root/bench" "$ogb" || return 1
  "$build/bin/halo-convert" ogb "$ogb" "$data" --split time --add-reverse-relations -q || return 1
  local run device extra
  for run in cpu cuda cuda_streamed; do
    device=${run%_streamed}
    extra=()
    [ "$run" = cuda_streamed ] && extra=(--feature-memory-budget 1M)
    "$build/bin/halo-train" --dataset "$data" --device "$device" --model rgcn --layers 2 --hidden 64 --dropout 0.5 \
      --embedding-dim 128 --bases 2 --lr 0.01 --epochs 10 --seed 0 "${extra[@]}" -q \
      --json "$out/gpu_rgcn_$run.json" || return 1
  done
  python3 - "$out/gpu_rgcn_cpu.json" "$out/gpu_rgcn_cuda.json" "$out/gpu_rgcn_cuda_streamed.json" "$out/gpu_rgcn.json" <<'PY'
import json, sys
cpu, gpu, streamed = (json.load(open(p)) for p in sys.argv[1:4])
losses = lambda summary: [e["loss"] for e in summary["runs"][0]["epochs"]]
cpu_losses, gpu_losses, streamed_losses = losses(cpu), losses(gpu), losses(streamed)
def worst(other):
    if not cpu_losses or len(other) != len(cpu_losses):
        return float("inf")
    return max(abs(g - c) / abs(c) for c, g in zip(cpu_losses, other))
ok = worst(gpu_losses) <= 1e-4 and worst(streamed_losses) <= 1e-4
result = {"dataset": "mag-like 0.01", "epochs": len(cpu_losses), "cpu_losses": cpu_losses, "gpu_losses": gpu_losses,
          "gpu_streamed_tables_losses": streamed_losses, "max_relative_difference": worst(gpu_losses),
          "streamed_max_relative_difference": worst(streamed_losses), "tolerance": 1e-4, "ok": ok,
          "cpu_epoch_time_median_s": cpu["epoch_time_median_s"], "gpu_epoch_time_median_s": gpu["epoch_time_median_s"],
          "gpu_streamed_tables_epoch_time_median_s": streamed["epoch_time_median_s"],
          "gpu_test_acc": gpu["test_acc_mean"], "cpu_test_acc": cpu["test_acc_mean"]}
json.dump(result, open(sys.argv[4], "w"), indent=2)
print("R-GCN on the GPU: losses within %.2g (tables streamed: %.2g) of the CPU's (tolerance 1e-4): %s; one epoch %.4f s "
      "on the GPU (%.4f s with streamed tables), %.4f s on the CPU"
      % (worst(gpu_losses), worst(streamed_losses), "ok" if ok else "MISMATCH", result["gpu_epoch_time_median_s"],
         result["gpu_streamed_tables_epoch_time_median_s"], result["cpu_epoch_time_median_s"]))
sys.exit(0 if ok else 1)
PY
}

# halo-bench gpu-feature-streaming: 2 GiB of features streamed through a budget of 1/8 of them
# (page-locked and pageable), against a pinned host->device cudaMemcpy timed in the same call
# (goal: >= 80 %), then a GCN epoch streamed at a 25 % budget against the same epoch in memory.
gpu_feature_streaming() {
  "$build/bin/halo-bench" gpu-feature-streaming --json "$out/gpu_feature_streaming.json" || return 1
  python3 -c 'import json, sys; j = json.load(open(sys.argv[1])); p = j["page_locked"]; t = j["train"]; print("gpu-feature-streaming: %.1f %% of the pinned copy rate (page-locked, copies only), %.1f %% with X.W; streamed epoch %.2fx the in-memory one" % (100 * p["copies_only_vs_pinned_memcpy"], 100 * p["forward_vs_pinned_memcpy"], t["epoch_ratio"]))' "$out/gpu_feature_streaming.json"
}

gpu_tests() {
  HALO_REQUIRE_GPU=$([ "$gpu" = 1 ] && echo 1 || echo 0) \
    ctest --test-dir "$build" -L gpu --no-tests=error --output-on-failure --timeout 300 -j 2 \
      --output-junit "$out/gpu-tests.xml"
}

# CMake finds nvcc on PATH; CUDA's default install folder is not always on it.
if ! command -v nvcc >/dev/null 2>&1 && [ -x /usr/local/cuda/bin/nvcc ]; then export PATH="/usr/local/cuda/bin:$PATH"; fi
gpu=0
if nvidia-smi -L >/dev/null 2>&1; then gpu=1; fi
step machine describe_machine
step configure configure || { echo "device-check: configure failed"; }
if step build build_targets; then
  step gpu-tests gpu_tests
  if [ "$gpu" = 1 ]; then
    step gpu-train-timing gpu_train_timing
    step gpu-rgcn gpu_rgcn_check
  else
    skip_step gpu-train-timing "no GPU visible"
    skip_step gpu-rgcn "no GPU visible"
  fi
  if [ "$gpu" = 1 ] && [ "$(elapsed)" -lt "$((budget - 60))" ]; then
    step gpu-feature-streaming gpu_feature_streaming
  elif [ "$gpu" = 1 ]; then
    skip_step gpu-feature-streaming "less than 60 s of the ${budget} s budget left"
  else
    skip_step gpu-feature-streaming "no GPU visible"
  fi
  if [ "$(elapsed)" -lt "$budget" ]; then
    step gpu-spmm-bench python3 bench/gpu_spmm.py --bin "$build/bin" --out "$out/gpu_spmm.json"
  else
    skip_step gpu-spmm-bench "past the ${budget} s budget"
  fi
  if [ "$(elapsed)" -lt "$((budget - 120))" ]; then
    # Each side (halo, PyG) gets half of what is left of 9 minutes, so the call ends in time.
    step gpu-gcn-bench python3 bench/gpu_gcn.py --bin "$build/bin" --out "$out/gpu_gcn.json" \
      --timeout $(((540 - $(elapsed)) / 2))
  else
    skip_step gpu-gcn-bench "less than 120 s of the ${budget} s budget left"
  fi
else
  skip_step gpu-tests "the build failed"
fi

python3 - "$steps_file" "$out/device-check.json" "$gpu" "$(elapsed)" "$(cat "$nccl_file")" <<'EOF'
import json, platform, subprocess, sys
steps = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
def run(cmd):
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=30).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""
summary = {
    "gpu_visible": sys.argv[3] == "1",
    "seconds": int(sys.argv[4]),
    "gpu": run(["nvidia-smi", "--query-gpu=name,driver_version,memory.total", "--format=csv,noheader"]),
    "nvcc": run(["nvcc", "--version"]).splitlines()[-1:] ,
    "platform": platform.platform(),
    "nccl": sys.argv[5],
    "steps": steps,
    "ok": all(s["status"] in (0, "skipped") for s in steps),
}
with open(sys.argv[2], "w") as f:
    json.dump(summary, f, indent=2)
    f.write("\n")
print("device-check:", "all steps passed" if summary["ok"] else "some steps failed", f"in {summary['seconds']} s")
sys.exit(0 if summary["ok"] else 1)
EOF
