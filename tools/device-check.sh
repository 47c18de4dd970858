#!/usr/bin/env bash
# The one-call GPU check of halo (issues #6 and #25): builds halo with CUDA for sm_90, runs the
# GPU tests against their CPU twins, compute-sanitizer over the GPU kernels, then the GPU timings,
# all inside one time budget, and leaves in $OUT a complete JSON after every step, so a run cut
# off at any point still brings back every step it finished.
#
#   tools/device-check.sh --prepare   here (Debian's package archive and PyPI reachable, halo
#                                     built by the release preset): fills .device-prep/ (ignored
#                                     by git) with everything the bare GPU machine lacks:
#                                     - header-only libraries (nlohmann-json, CLI11, fmt, Catch2
#                                       v2), zlib's headers and static library, ISA-L, unpacked
#                                       from Debian .debs into root/;
#                                     - the nvidia-cuda-sanitizer-api wheel of this toolkit's
#                                       version (compute-sanitizer; unpacked there, 14 MB carried);
#                                     - the heterogeneous baseline: an ogbn-mag-shaped graph at
#                                       1/100 (bench/rgcn_vs_pyg.py's generator) converted to
#                                       halo's layout, and the per-epoch CPU losses of R-GCN, HGT
#                                       and RGAT from this machine;
#                                     - the GAT baseline: a 20 000-vertex SBM graph and the GAT
#                                       paper's model's CPU losses on it.
#   tools/device-check.sh [--budget SECONDS]
#                                     on the GPU machine, .device-prep carried (refused at once,
#                                     naming --prepare, without it). Steps, in this order:
#                                     machine (GPU, driver, CUDA, cuSPARSE, cuBLAS, NCCL
#                                     versions), configure, build (only the targets below, sm_90,
#                                     every core), gpu-tests (`ctest -L gpu`, HALO_REQUIRE_GPU=1),
#                                     memcheck (compute-sanitizer, the toolkit's or else the
#                                     carried wheel's, over the GPU kernel and layer tests), racecheck and
#                                     synccheck (over the tests of the kernels that use shared
#                                     memory or warp shuffles), gpu-train-timing,
#                                     gpu-rgcn (GPU losses, tables resident and streamed, against
#                                     the prepared CPU losses to 1e-4), gpu-hgt, gpu-rgat and
#                                     gpu-gat (the same for HGT, RGAT and GAT), gpu-gcn-bench,
#                                     gpu-gat-bench (GAT against PyG's GATConv), gpu-memory-plan
#                                     (the plan against the bytes halo held on the GPU),
#                                     gpu-hetero-bench (HGT and RGAT against PyG on the same GPU),
#                                     gpu-feature-streaming, gpu-spmm-bench, gpu-gat-rmat (GAT
#                                     against GATConv on the 1 M-vertex power-law graph). The
#                                     checks of open issues come first; the last three repeat
#                                     figures already measured or add a graph to them, so a short
#                                     budget drops them first.
#
# The budget (default 540 s: every step's estimate with the build, within the 600 s of one call of a
# lent machine) covers everything from the first step to the last. Each step has an
# estimate (what it needs to be worth starting) and a cap; it runs under `timeout` with
# min(cap, what is left) and is recorded as skipped ("budget") when less than its estimate is
# left. Without a GPU the GPU steps are recorded as skipped ("no GPU"). A skipped step is never
# counted as passed: "ok" is true only when every step passed.
#
# Results in $OUT (default ./device-check-out): device-check.json (machine, versions, budget,
# every finished step with its status, exit code, seconds and limit; "finished" once the run got
# to its end), device-check.log, steps/NAME.log for each step, gpu-tests.xml (JUnit), the
# sanitizers' reports, gpu_train.json, gpu_train_gat.json, gpu_train_gat_no_attn_dropout.json,
# gpu_rgcn.json, gpu_hgt.json, gpu_rgat.json and gpu_gat.json (+ the runs' summaries),
# gpu_feature_streaming.json, gpu_spmm.json, gpu_gcn.json, gpu_gat_vs_pyg.json,
# gpu_memory_plan.json, gpu_hetero_vs_pyg.json, gpu_gat_rmat_vs_pyg.json.
# Environment: HALO_CHECK_JOBS (build parallelism, default every core); HALO_CHECK_PREP and
# HALO_CHECK_BUILD (other prepared and build folders, for tests of this script).
set -uo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
self="$root/tools/device-check.sh"
prep="${HALO_CHECK_PREP:-$root/.device-prep}"
build="${HALO_CHECK_BUILD:-$root/build-device}"
out="${OUT:-$root/device-check-out}"
rgcn_args=(--model rgcn --layers 2 --hidden 64 --dropout 0.5 --embedding-dim 128 --bases 2 --lr 0.01 --epochs 10
  --seed 0)
hgt_args=(--model hgt --layers 2 --hidden 64 --heads 2 --dropout 0.5 --embedding-dim 128 --lr 0.005 --weight-decay 0.001
  --epochs 10 --seed 0)
rgat_args=(--model rgat --layers 2 --hidden 8 --heads 8 --dropout 0.6 --input-dropout 0.6 --attn-dropout 0.6
  --embedding-dim 64 --lr 0.005 --weight-decay 0.0005 --epochs 10 --seed 0)
gat_args=(--model gat --layers 2 --hidden 8 --heads 8 --out-heads 1 --dropout 0.6 --input-dropout 0.6 --attn-dropout 0.6
  --lr 0.005 --weight-decay 0.0005 --epochs 10 --seed 0)

# ---------------------------------------------------------------------------------------------
# --prepare (here)

prepare_debs() {
  local packages=(nlohmann-json3-dev libcli11-dev libfmt-dev catch2 libisal-dev libisal2 zlib1g-dev)
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
}

# compute-sanitizer of this toolkit's major.minor, from NVIDIA's wheel (the wheel is carried; the
# GPU machine unpacks it into its build folder).
prepare_sanitizer() {
  local version
  version=$(nvcc --version | sed -n 's/.*release \([0-9]*\.[0-9]*\).*/\1/p')
  [ -n "$version" ] || { echo "device-check: cannot read the CUDA version from nvcc --version" >&2; return 1; }
  mkdir -p "$prep/sanitizer"
  python3 -m pip download --quiet --no-deps --only-binary=:all: -d "$prep/sanitizer" \
    "nvidia-cuda-sanitizer-api==$version.*"
  ls "$prep"/sanitizer/nvidia_cuda_sanitizer_api-*.whl >/dev/null
}

# The R-GCN, HGT and RGAT input and their CPU losses, with this machine's release build of halo.
prepare_rgcn() {
  local python=python3 ogb="$prep/rgcn-ogb"
  for target in halo-convert halo-train; do
    [ -x "$root/build/bin/$target" ] || cmake --build "$root/build" --target "$target" >/dev/null
  done
  if ! python3 -c 'import numpy' 2>/dev/null; then
    [ -x "$root/bench/.venv/bin/python" ] || python3 -m venv "$root/bench/.venv"
    "$root/bench/.venv/bin/python" -c 'import numpy' 2>/dev/null || "$root/bench/.venv/bin/pip" install -q numpy
    python="$root/bench/.venv/bin/python"
  fi
  "$python" -c 'import sys; sys.path.insert(0, sys.argv[1]); import rgcn_vs_pyg; rgcn_vs_pyg.generate_mag_like(sys.argv[2], 0.01)' \
    "$root/bench" "$ogb"
  "$root/build/bin/halo-convert" ogb "$ogb" "$prep/rgcn-dataset" --split time --add-reverse-relations -q
  rm -rf "$ogb"
  "$root/build/bin/halo-train" --dataset "$prep/rgcn-dataset" --device cpu "${rgcn_args[@]}" --threads "$(nproc)" -q \
    --json "$prep/rgcn-cpu.json"
  "$root/build/bin/halo-train" --dataset "$prep/rgcn-dataset" --device cpu "${hgt_args[@]}" --threads "$(nproc)" -q \
    --json "$prep/hgt-cpu.json"
  "$root/build/bin/halo-train" --dataset "$prep/rgcn-dataset" --device cpu "${rgat_args[@]}" --threads "$(nproc)" -q \
    --json "$prep/rgat-cpu.json"
}

# The GAT input (a 20 000-vertex SBM graph, 64 features) and its CPU losses.
prepare_gat() {
  "$root/build/bin/halo-convert" synth sbm "$prep/gat-dataset" --nodes 20000 --avg-degree 16 --features 64 --classes 8 \
    --seed 3 -q
  "$root/build/bin/halo-train" --dataset "$prep/gat-dataset" --device cpu "${gat_args[@]}" --threads "$(nproc)" -q \
    --json "$prep/gat-cpu.json"
}

prepare() {
  set -e
  if [ -z "${HALO_CHECK_PREP:-}" ] && [ ! -d "$root/build" ]; then
    echo "device-check: --prepare needs halo built here first: cmake --preset release && cmake --build --preset release" >&2
    exit 2
  fi
  rm -rf "$prep"
  mkdir -p "$prep"
  prepare_debs
  prepare_sanitizer
  prepare_rgcn
  prepare_gat
  date -u +%Y-%m-%dT%H:%M:%SZ >"$prep/prepared"
  echo "device-check: prepared $(du -sh "$prep" | cut -f1) in $prep: $(tr '\n' ' ' <"$prep/packages.txt")," \
    "$(cd "$prep/sanitizer" && ls), the R-GCN, HGT, RGAT and GAT inputs and their CPU losses"
  echo "device-check: on the GPU machine run tools/device-check.sh with .device-prep carried along"
}

# What the GPU machine needs from --prepare and does not have (one line each).
missing_preparation() {
  [ -f "$prep/prepared" ] || echo "$prep/prepared (the mark of a finished --prepare)"
  [ -f "$prep/root/usr/include/nlohmann/json.hpp" ] || echo "$prep/root (Debian's header-only libraries)"
  ls "$prep"/sanitizer/nvidia_cuda_sanitizer_api-*.whl >/dev/null 2>&1 || echo "$prep/sanitizer (compute-sanitizer)"
  [ -f "$prep/rgcn-dataset/dataset.json" ] || echo "$prep/rgcn-dataset (the R-GCN input)"
  [ -f "$prep/rgcn-cpu.json" ] || echo "$prep/rgcn-cpu.json (the R-GCN CPU losses)"
  [ -f "$prep/hgt-cpu.json" ] || echo "$prep/hgt-cpu.json (the HGT CPU losses)"
  [ -f "$prep/rgat-cpu.json" ] || echo "$prep/rgat-cpu.json (the RGAT CPU losses)"
  [ -f "$prep/gat-dataset/dataset.json" ] || echo "$prep/gat-dataset (the GAT input)"
  [ -f "$prep/gat-cpu.json" ] || echo "$prep/gat-cpu.json (the GAT CPU losses)"
}

# ---------------------------------------------------------------------------------------------
# The steps (each runs as `device-check.sh --run-step NAME` under timeout)

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

# The machine and the versions of what halo runs on, into machine.json (read by write_json).
step_machine() {
  local nccl_dir nccl=""
  nccl_dir=$(find_nccl)
  [ -n "$nccl_dir" ] && nccl=$(nccl_library "$nccl_dir")
  nvidia-smi 2>&1 | head -12 || echo "nvidia-smi: not available"
  cmake --version | head -1
  g++ --version | head -1
  python3 - "$out/machine.json" "$nccl" <<'PY'
import ctypes, glob, json, os, platform, subprocess, sys

def run(cmd):
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=30).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""

def library(patterns):
    for pattern in patterns:
        for path in sorted(glob.glob(pattern)) if "/" in pattern else [pattern]:
            try:
                return ctypes.CDLL(path), os.path.realpath(path) if "/" in path else path
            except OSError:
                pass
    return None, ""

def version(patterns, call):
    lib, path = library(patterns)
    if lib is None:
        return {"library": "not found"}
    try:
        return {"library": path, "version": call(lib)}
    except (AttributeError, OSError) as e:
        return {"library": path, "error": str(e)}

def properties(function):
    def call(lib):
        parts = []
        for kind in range(3):  # MAJOR_VERSION, MINOR_VERSION, PATCH_LEVEL
            value = ctypes.c_int(0)
            if getattr(lib, function)(kind, ctypes.byref(value)) != 0:
                raise OSError(function + " failed")
            parts.append(str(value.value))
        return ".".join(parts)
    return call

def int_version(function):
    def call(lib):
        value = ctypes.c_int(0)
        if getattr(lib, function)(ctypes.byref(value)) != 0:
            raise OSError(function + " failed")
        return value.value
    return call

cuda_lib = ["/usr/local/cuda/lib64/", "/usr/local/cuda/targets/x86_64-linux/lib/"]
smi = run(["nvidia-smi", "--query-gpu=name,driver_version,memory.total,compute_cap", "--format=csv,noheader"])
info = {
    "gpu": smi or "none visible",
    "cores": os.cpu_count(),
    "platform": platform.platform(),
    "nvcc": (run(["nvcc", "--version"]).splitlines() or [""])[-1],
    "cuda_driver_api": version(["libcuda.so.1"], int_version("cuDriverGetVersion")),
    "cuda_runtime": version([d + "libcudart.so.*" for d in cuda_lib], int_version("cudaRuntimeGetVersion")),
    "cusparse": version([d + "libcusparse.so.*" for d in cuda_lib], properties("cusparseGetProperty")),
    "cublas": version([d + "libcublas.so.*" for d in cuda_lib], properties("cublasGetProperty")),
    "nccl": version([sys.argv[2]], int_version("ncclGetVersion")) if sys.argv[2] else {"library": "not found"},
    "torch_pyg": run([sys.executable, "-c", "import torch, torch_geometric; print(torch.__version__, torch.version.cuda, torch_geometric.__version__)"]),
}
with open(sys.argv[1] + ".tmp", "w") as f:
    json.dump(info, f, indent=2)
os.replace(sys.argv[1] + ".tmp", sys.argv[1])
print(json.dumps(info, indent=2))
PY
}

step_configure() {
  local args=(-S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DHALO_WITH_CUDA=ON
    -DCMAKE_CUDA_ARCHITECTURES=90 -DHALO_WITH_MPI=OFF -DHALO_WITH_METIS=OFF
    -DHALO_WITH_BLAS=OFF -DHALO_FMT_HEADER_ONLY=ON -DHALO_BUILD_BENCHMARKS=OFF
    "-DCMAKE_PREFIX_PATH=$prep/root/usr" "-DZLIB_INCLUDE_DIR=$prep/root/usr/include"
    "-DZLIB_LIBRARY=$prep/root/usr/lib/x86_64-linux-gnu/libz.a")
  local nccl_dir
  nccl_dir=$(find_nccl)
  if [ -n "$nccl_dir" ]; then
    args+=(-DHALO_WITH_NCCL=ON "-DNCCL_INCLUDE_DIR=$nccl_dir/include" "-DNCCL_LIBRARY=$(nccl_library "$nccl_dir")")
    echo "device-check: NCCL from $nccl_dir"
  else
    args+=(-DHALO_WITH_NCCL=OFF)
    echo "device-check: no NCCL found (no nccl.h with a libnccl.so in NCCL_HOME, the CUDA toolkit, the system" \
      "or PyTorch's nvidia-nccl wheel): building without it; the NCCL tests skip"
  fi
  cmake "${args[@]}"
}

step_build() {
  cmake --build "$build" -j "${HALO_CHECK_JOBS:-$(nproc)}" --target halo_kernels_tests halo_train_tests \
    halo_train_layers_tests halo_train_features_tests halo_train_dist_tests halo-bench halo-convert halo-train
}

step_gpu_tests() {
  HALO_REQUIRE_GPU=1 ctest --test-dir "$build" -L gpu --no-tests=error --output-on-failure --timeout 120 -j 4 \
    --output-junit "$out/gpu-tests.xml"
}

# compute-sanitizer: the CUDA toolkit's own where it has one, else the carried wheel's, unpacked
# into the build folder on first use.
sanitizer() {
  local dir="$build/sanitizer" installed
  for installed in /usr/local/cuda/compute-sanitizer/compute-sanitizer /usr/local/cuda/bin/compute-sanitizer; do
    if [ -x "$installed" ]; then
      echo "$installed"
      return 0
    fi
  done
  if [ ! -x "$dir/nvidia/cu13/bin/compute-sanitizer" ]; then
    rm -rf "$dir"
    python3 -m zipfile -e "$(ls "$prep"/sanitizer/nvidia_cuda_sanitizer_api-*.whl | head -1)" "$dir" || return 1
    chmod +x "$dir"/nvidia/*/bin/compute-sanitizer
    # The toolkit keeps the launcher's injection libraries beside the binary, where it looks for
    # them; the wheel puts them in lib/ (without them no target is ever instrumented).
    local bin library
    bin=$(dirname "$(ls "$dir"/nvidia/*/bin/compute-sanitizer | head -1)")
    for library in "$dir"/nvidia/*/lib/*.so; do
      [ -e "$bin/$(basename "$library")" ] || cp "$library" "$bin/" || return 1
    done
  fi
  ls "$dir"/nvidia/*/bin/compute-sanitizer | head -1
}

# Says which compute-sanitizer runs and from where, whether its launcher's injection library loads
# into a plain process, and whether it instruments a process that is not halo's (PyTorch
# allocating one tensor): on the H200 lent so far no process, PyTorch's included, ever reached its
# first instrumented call. On stderr, into the step's log.
describe_sanitizer() {
  local bin
  bin=$(dirname "$1")
  echo "compute-sanitizer: $1 ($("$1" --version | tail -1))" >&2
  ls "$bin" >&2
  ldd "$bin"/libTreeLauncherTargetInjection.so 2>&1 | grep -i "not found" >&2
  LD_PRELOAD="$bin/libTreeLauncherTargetInjection.so" /bin/echo "the injection library loads into /bin/echo" >&2
  "$1" --tool memcheck python3 -c 'import torch; print("torch on", torch.ones(4, device="cuda").device)' >&2
  # The toolkit's sanitizer folder also holds TreeLauncherSubreaper and
  # TreeLauncherTargetLdPreloadHelper, which the binary names and the wheel lacks; an explicit
  # injection path and the loopback transport it reports on, for the next attempt.
  grep -ao 'TreeLauncher[A-Za-z]*' "$1" | sort -u >&2
  ls -ld /tmp /dev/shm >&2
  "$1" --tool memcheck --injection-path "$bin" --target-processes application-only \
    python3 -c 'import torch; print("torch on", torch.ones(4, device="cuda").device, "(explicit injection path)")' >&2
}

# The Catch test spec (commas: any of them) of the tests of the kernels that use shared memory or
# warp shuffles (attention.cu, dot_attention.cu, spmm.cu, elementwise.cu's reductions, loss.cu), small enough
# for racecheck.
shared_memory_tests="attention on a GPU over fewer sources than destinations*,dot-product attention on a GPU over fewer sources*,spmm on a GPU equals the CPU twin*,spmm on a GPU reads and writes strided views*,column_sums and the sums of squares and products on a GPU*,log_softmax_nll on a GPU*,count_correct on a GPU*,batch-norm statistics on a GPU*"

step_memcheck() {
  local cs
  cs=$(sanitizer) || return 1
  describe_sanitizer "$cs"
  # Not the tests that run alone (one fills the GPU's memory), nor the one that times SpMM against
  # the wall clock;
  # then the layers' GPU tests (HgtConv, BatchNorm).
  HALO_REQUIRE_GPU=1 "$cs" --tool memcheck --error-exitcode 99 --print-limit 50 \
    "$build/tests/halo_kernels_tests" "[gpu]" "~[gpu-alone]" "~a GPU SpMM is timed*" || return 1
  HALO_REQUIRE_GPU=1 "$cs" --tool memcheck --error-exitcode 99 --print-limit 50 \
    "$build/tests/halo_train_layers_tests" "[gpu]"
}

step_racecheck() {
  local cs
  cs=$(sanitizer) || return 1
  HALO_REQUIRE_GPU=1 "$cs" --tool racecheck --racecheck-report hazard --error-exitcode 99 --print-limit 50 \
    "$build/tests/halo_kernels_tests" "$shared_memory_tests"
}

step_synccheck() {
  local cs
  cs=$(sanitizer) || return 1
  HALO_REQUIRE_GPU=1 "$cs" --tool synccheck --error-exitcode 99 --print-limit 50 \
    "$build/tests/halo_kernels_tests" "$shared_memory_tests"
}

# halo-train --device cuda on a generated 100 000-vertex SBM graph (128 features, mean degree 16),
# 20 epochs: a 2-layer GCN (gpu_train.json) and the GAT paper's model, 8 heads x 8
# (gpu_train_gat.json), and that GAT without attention dropout (gpu_train_gat_no_attn_dropout.json:
# with it, the kernels skip the dropped heads' gathers, so the two epoch times show what that
# saves); each JSON summary holds the median epoch time, and the GPU memory plan beside the
# tensors' measured peak on the GPU (issue #31: the plan's walk, unmeasured on a GPU so far).
step_gpu_train_timing() {
  local data="$build/gpu-train-sbm" run model json args
  rm -rf "$data"
  "$build/bin/halo-convert" synth sbm "$data" --nodes 100000 --avg-degree 16 --features 128 --classes 8 \
    --homophily 0.8 -q || return 1
  for run in gcn gat gat-no-attn-dropout; do
    case $run in
      gcn) model=gcn json="$out/gpu_train.json" args=(--hidden 128) ;;
      gat) model=gat json="$out/gpu_train_gat.json" args=(--hidden 8 --heads 8) ;;
      *) model=gat json="$out/gpu_train_gat_no_attn_dropout.json" args=(--hidden 8 --heads 8 --attn-dropout 0) ;;
    esac
    "$build/bin/halo-train" --dataset "$data" --device cuda --model "$model" "${args[@]}" --epochs 20 -q \
      --json "$json" || return 1
    python3 -c 'import json, sys; j = json.load(open(sys.argv[1])); p = j["memory_plan"]; print("halo-train --device cuda", sys.argv[2], ": one epoch", j["epoch_time_median_s"], "s, test accuracy", j["test_acc_mean"], "; GPU plan", p["total"], "bytes (activations", p["activations"], "), held on the GPU", j["device_peak_bytes"], "bytes (tensors", j["tensor_peak_bytes"], ")")' "$json" "$run" || return 1
  done
}

# compare_gpu_losses NAME DATASET RESULT CPU_JSON LABEL=GPU_JSON...: writes RESULT with the per-epoch losses
# of the CPU run --prepare made and of each GPU run, and fails unless every GPU run's losses agree
# with the CPU's to 1e-4 relative.
compare_gpu_losses() {
  python3 - "$@" <<'PY'
import json, sys
name, dataset, result_path, cpu_path = sys.argv[1:5]
losses = lambda summary: [e["loss"] for e in summary["runs"][0]["epochs"]]
cpu = json.load(open(cpu_path))
cpu_losses = losses(cpu)
def worst(other):
    if not cpu_losses or len(other) != len(cpu_losses):
        return float("inf")
    return max(abs(g - c) / abs(c) for c, g in zip(cpu_losses, other))
result = {"model": name, "dataset": dataset, "epochs": len(cpu_losses), "tolerance": 1e-4,
          "cpu_losses": cpu_losses, "cpu_epoch_time_median_s (the preparing machine)": cpu["epoch_time_median_s"],
          "cpu_test_acc": cpu["test_acc_mean"], "gpu_runs": {}}
for label, path in (arg.split("=", 1) for arg in sys.argv[5:]):
    gpu = json.load(open(path))
    result["gpu_runs"][label] = {"losses": losses(gpu), "max_relative_difference": worst(losses(gpu)),
                                 "epoch_time_median_s": gpu["epoch_time_median_s"], "test_acc": gpu["test_acc_mean"]}
ok = all(r["max_relative_difference"] <= 1e-4 for r in result["gpu_runs"].values())
result["ok"] = ok
json.dump(result, open(result_path, "w"), indent=2)
print("%s on the GPU: %s (tolerance 1e-4): %s" % (name, "; ".join(
    "%s losses within %.2g of the CPU's, one epoch %.4f s" % (label, r["max_relative_difference"], r["epoch_time_median_s"])
    for label, r in result["gpu_runs"].items()), "ok" if ok else "MISMATCH"))
sys.exit(0 if ok else 1)
PY
}

mag_like="ogbn-mag-like at 1/100 (prepared)"

# R-GCN on the GPU (tables resident, then streamed from host memory through 1 MB of staging)
# against the CPU losses --prepare computed on the same dataset: OGB's R-GCN settings with 2
# bases and dropout, 10 epochs, one seed.
step_gpu_rgcn() {
  local run extra
  for run in cuda cuda_streamed; do
    extra=()
    [ "$run" = cuda_streamed ] && extra=(--feature-memory-budget 1M)
    "$build/bin/halo-train" --dataset "$prep/rgcn-dataset" --device cuda "${rgcn_args[@]}" "${extra[@]}" -q \
      --json "$out/gpu_rgcn_$run.json" || return 1
  done
  cp "$prep/rgcn-cpu.json" "$out/gpu_rgcn_cpu.json"
  compare_gpu_losses R-GCN "$mag_like" "$out/gpu_rgcn.json" "$out/gpu_rgcn_cpu.json" "tables resident=$out/gpu_rgcn_cuda.json" \
    "tables streamed=$out/gpu_rgcn_cuda_streamed.json"
}

# gpu_against_cpu MODEL NAME DATASET DESCRIPTION LABEL ARGS...: trains MODEL on the GPU with ARGS
# on the prepared DATASET and holds its losses to the CPU losses --prepare computed with the same
# arguments ($prep/MODEL-cpu.json).
gpu_against_cpu() {
  local model=$1 name=$2 dataset=$3 description=$4 label=$5
  shift 5
  "$build/bin/halo-train" --dataset "$prep/$dataset" --device cuda "$@" -q --json "$out/gpu_${model}_cuda.json" ||
    return 1
  cp "$prep/$model-cpu.json" "$out/gpu_${model}_cpu.json"
  compare_gpu_losses "$name" "$description" "$out/gpu_$model.json" "$out/gpu_${model}_cpu.json" \
    "$label=$out/gpu_${model}_cuda.json"
}

# HGT: 2 layers of 2 heads, dropout 0.5, 128-wide tables, 10 epochs, one seed.
step_gpu_hgt() { gpu_against_cpu hgt HGT rgcn-dataset "$mag_like" "tables resident" "${hgt_args[@]}"; }

# RGAT: the GAT paper's recipe per relation (2 layers, 8 heads x 8, dropout 0.6 on inputs and
# attention), 64-wide tables, 10 epochs, one seed.
step_gpu_rgat() { gpu_against_cpu rgat RGAT rgcn-dataset "$mag_like" "tables resident" "${rgat_args[@]}"; }

# GAT: the GAT paper's model on the prepared 20 000-vertex SBM graph, 10 epochs, one seed.
step_gpu_gat() {
  gpu_against_cpu gat GAT gat-dataset "SBM 20 000 vertices, 64 features (prepared)" GPU "${gat_args[@]}"
}

# halo-bench gpu-feature-streaming: 2 GiB of features streamed through a budget of 1/8 of them
# (page-locked and pageable), against a pinned host->device cudaMemcpy timed in the same call
# (goal: >= 80 %), then a GCN epoch streamed at a 25 % budget against the same epoch in memory.
step_gpu_feature_streaming() {
  "$build/bin/halo-bench" gpu-feature-streaming --json "$out/gpu_feature_streaming.json" || return 1
  python3 -c 'import json, sys; j = json.load(open(sys.argv[1])); p = j["page_locked"]; t = j["train"]; print("gpu-feature-streaming: %.1f %% of the pinned copy rate (page-locked, copies only), %.1f %% with X.W; streamed epoch %.2fx the in-memory one" % (100 * p["copies_only_vs_pinned_memcpy"], 100 * p["forward_vs_pinned_memcpy"], t["epoch_ratio"]))' "$out/gpu_feature_streaming.json"
}

step_gpu_spmm_bench() {
  python3 "$root/bench/gpu_spmm.py" --bin "$build/bin" --out "$out/gpu_spmm.json"
}

# halo and PyG each get half of the step's limit.
step_gpu_gcn_bench() {
  python3 "$root/bench/gpu_gcn.py" --bin "$build/bin" --out "$out/gpu_gcn.json" --timeout $((${DEVICE_CHECK_LIMIT:-240} / 2))
}

# GAT (3 layers, 8 heads x 32) on the GPU against PyG's GATConv on the same GPU, one turn each (the
# GPU is the run's own; two turns left gpu-memory-plan and gpu-hetero-bench short of the budget):
# the 50 K SBM (mean degree 20) and the 250 K SBM (mean degree 50), epoch times and the bytes each
# held on the GPU.
step_gpu_gat_bench() {
  python3 "$root/bench/gat_vs_pyg.py" --device cuda --build "$build" --work "$build/gat-bench" --graphs sbm-small,sbm \
    --turns 1 --epochs 5 --threads 8 --output "$out/gpu_gat_vs_pyg.json"
}

# GAT as gpu-gat-bench on the 1 M-vertex R-MAT graph (power-law degrees, a maximum in the
# thousands: rows of several 512-entry chunks, each a warp's work), one turn of 3 epochs: the
# attention kernels' split of long rows at scale, and whether PyG's GATConv fits the GPU there.
step_gpu_gat_rmat() {
  python3 "$root/bench/gat_vs_pyg.py" --device cuda --build "$build" --work "$build/gat-bench" --graphs rmat \
    --turns 1 --epochs 3 --threads 8 --output "$out/gpu_gat_rmat_vs_pyg.json"
}

# The GPU memory plan against the bytes halo held on the GPU (issue #31), GCN, GraphSAGE and GAT
# on the 250 K SBM, the 1 M R-MAT and (made by gpu-gcn-bench) the products-scale graph.
step_gpu_memory_plan() {
  python3 "$root/bench/gpu_memory_plan.py" --bin "$build/bin" --out "$out/gpu_memory_plan.json"
}

# HGT and RGAT (the mag hyperparameters of bench/hgt_vs_pyg.py) on the GPU against PyG's HGTConv
# and per-relation GATConv on the same GPU (issue #29), alternating turns, on the prepared
# ogbn-mag-shaped graph at 1/100.
step_gpu_hetero_bench() {
  python3 "$root/bench/gpu_hetero_vs_pyg.py" --dataset "$prep/rgcn-dataset" --halo-train "$build/bin/halo-train" \
    --work "$build/hetero-bench" --turns 2 --epochs 5 --threads 8 --output "$out/gpu_hetero_vs_pyg.json"
}

if [ "${1:-}" = "--run-step" ] && [ $# -eq 2 ]; then
  export PATH
  "step_${2//-/_}"
  exit $?
fi

# ---------------------------------------------------------------------------------------------
# The run

budget=540
case "${1:-}" in
  --prepare)
    [ $# -eq 1 ] || { echo "usage: tools/device-check.sh --prepare" >&2; exit 2; }
    prepare
    exit 0
    ;;
  --budget)
    [ $# -eq 2 ] && [[ "$2" =~ ^[0-9]+$ ]] || { echo "usage: tools/device-check.sh [--budget SECONDS]" >&2; exit 2; }
    budget=$2
    ;;
  "") ;;
  *)
    echo "usage: tools/device-check.sh [--prepare | --budget SECONDS]" >&2
    exit 2
    ;;
esac

start=$(date +%s)
mkdir -p "$out/steps"
log="$out/device-check.log"
: >"$log"
exec > >(tee -a "$log") 2>&1
steps_file="$out/steps.jsonl"
: >"$steps_file"
rm -f "$out/machine.json"
# CMake finds nvcc on PATH; CUDA's default install folder is not always on it.
if ! command -v nvcc >/dev/null 2>&1 && [ -x /usr/local/cuda/bin/nvcc ]; then export PATH="/usr/local/cuda/bin:$PATH"; fi
gpu=0
if nvidia-smi -L >/dev/null 2>&1; then gpu=1; fi

elapsed() { echo $(($(date +%s) - start)); }

# device-check.json from what is known so far (written to a temporary name, then renamed).
write_json() {
  python3 - "$steps_file" "$out/machine.json" "$out/device-check.json" "$gpu" "$budget" "$(elapsed)" "$1" <<'PY'
import json, os, sys
steps_path, machine_path, out_path, gpu, budget, seconds, finished = sys.argv[1:8]
steps = [json.loads(line) for line in open(steps_path) if line.strip()]
try:
    machine = json.load(open(machine_path))
except (OSError, ValueError):
    machine = {}
summary = {"gpu_visible": gpu == "1", "budget_s": int(budget), "seconds": int(seconds), "finished": finished == "1",
           "machine": machine, "steps": steps,
           "passed": [s["step"] for s in steps if s["status"] == "passed"],
           "not_passed": [s["step"] for s in steps if s["status"] != "passed"],
           "ok": bool(steps) and all(s["status"] == "passed" for s in steps)}
with open(out_path + ".tmp", "w") as f:
    json.dump(summary, f, indent=2)
    f.write("\n")
os.replace(out_path + ".tmp", out_path)
PY
}

record() {
  echo "$1" >>"$steps_file"
  write_json 0
}

skip() {
  record "{\"step\": \"$1\", \"status\": \"skipped\", \"reason\": \"$2\"}"
  echo "=== device-check: $1 skipped: $2"
}

# run_step NAME NEEDS_GPU ESTIMATE_S CAP_S: runs step NAME under timeout with min(cap, what is
# left of the budget), or records why not. Returns 0 when it passed.
run_step() {
  local name=$1 needs_gpu=$2 estimate=$3 cap=$4 left limit t0 status result seconds
  if [ "$needs_gpu" = 1 ] && [ "$gpu" = 0 ]; then
    skip "$name" "no GPU"
    return 1
  fi
  left=$((budget - $(elapsed)))
  if [ "$left" -lt "$estimate" ]; then
    skip "$name" "budget: needs about $estimate s, $left s left"
    return 1
  fi
  limit=$((cap < left ? cap : left))
  echo "=== device-check: $name (at $(elapsed) s, limit $limit s)"
  t0=$(date +%s)
  DEVICE_CHECK_LIMIT=$limit OUT="$out" HALO_CHECK_PREP="$prep" HALO_CHECK_BUILD="$build" \
    timeout -k 10 "$limit" "$self" --run-step "$name" 2>&1 | tee "$out/steps/$name.log"
  status=${PIPESTATUS[0]}
  seconds=$(($(date +%s) - t0))
  case $status in
    0) result=passed ;;
    124 | 137) result=timeout ;;
    *) result=failed ;;
  esac
  record "{\"step\": \"$name\", \"status\": \"$result\", \"exit\": $status, \"seconds\": $seconds, \"limit_s\": $limit}"
  echo "=== device-check: $name: $result (exit $status) after $seconds s"
  [ "$result" = passed ]
}

missing=$(missing_preparation)
if [ -n "$missing" ]; then
  echo "device-check: refused: the prepared dependencies are missing:"
  echo "$missing" | sed 's/^/  /'
  echo "device-check: run 'tools/device-check.sh --prepare' where Debian's archive and PyPI are reachable," \
    "then carry .device-prep to this machine"
  record "{\"step\": \"prepared\", \"status\": \"failed\", \"reason\": \"missing: $(echo "$missing" | cut -d' ' -f1 | tr '\n' ' ')\"}"
  write_json 1
  exit 2
fi

echo "device-check: budget $budget s, GPU visible: $([ "$gpu" = 1 ] && echo yes || echo no)"
run_step machine 0 2 60
built=0
# Configure and build may take what is left: every later step needs them.
if run_step configure 0 10 "$budget"; then
  run_step build 0 30 "$budget" && built=1
else
  skip build "configure did not pass"
fi
gpu_steps=(gpu-tests:40:150 memcheck:40:150 racecheck:20:60 synccheck:15:30 gpu-train-timing:5:60 gpu-rgcn:10:90
  gpu-hgt:10:60 gpu-rgat:10:60 gpu-gat:10:60 gpu-gcn-bench:40:240 gpu-gat-bench:30:150 gpu-memory-plan:30:180
  gpu-hetero-bench:30:120 gpu-feature-streaming:20:90 gpu-spmm-bench:15:90 gpu-gat-rmat:40:150)
for entry in "${gpu_steps[@]}"; do
  IFS=: read -r name estimate cap <<<"$entry"
  if [ "$built" = 1 ]; then
    run_step "$name" 1 "$estimate" "$cap"
  elif [ "$gpu" = 0 ]; then
    skip "$name" "no GPU"
  else
    skip "$name" "the build failed or was skipped"
  fi
done
write_json 1
python3 -c 'import json, sys; j = json.load(open(sys.argv[1])); print("device-check:", "every step passed" if j["ok"] else "not passed: " + ", ".join(j["not_passed"]), "in", j["seconds"], "s")' \
  "$out/device-check.json"
python3 -c 'import json, sys; sys.exit(0 if json.load(open(sys.argv[1]))["ok"] else 1)' "$out/device-check.json"
