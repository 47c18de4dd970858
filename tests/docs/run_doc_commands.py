#!/usr/bin/env python3
"""Runs every command that docs/*.md shows, page by page in order, as a user following them would.

Usage: run_doc_commands.py BUILD_DIR SOURCE_DIR

The commands run from a scratch copy of the repository's root (build/ holds links to the real
build tree's entries, tools/, examples/, bench/ and docs/ link to the sources, ../shared/datasets
to the real datasets), so what they write stays in the scratch folder. Fenced blocks by info string:
  sh        run with bash -euo pipefail; a ```text output block right after it lists lines that
            the output must contain
  sh gpu    run where a GPU is visible, reported as skipped elsewhere
  sh ci     the build steps: every line must be a step of tools/test.sh, which CI runs
  sh bench  benchmarks that take hours: every bench/*.py named must exist and compile
Any other shell tag fails, so that no block is silently left out. tools/get-ogb.sh downloads from a
local mirror holding a stand-in of ogbn-arxiv (a generated graph in arxiv's raw layout and split).
Exits 77 (skipped) without ../shared/datasets, 1 when any block fails.
"""
import os
import py_compile
import re
import shutil
import subprocess
import sys
import tempfile
import time

FENCE = re.compile(r"^```(.*)$")
LINK = re.compile(r"\]\(([^)#]+\.md)\)")


def blocks_of(path):
    """(info, text, first line) of every fenced block in a markdown file."""
    blocks, info, lines, start = [], None, [], 0
    for number, line in enumerate(open(path, encoding="utf-8"), 1):
        match = FENCE.match(line.rstrip("\n"))
        if match and info is None:
            info, lines, start = match.group(1).strip(), [], number
        elif match:
            blocks.append((info, "".join(lines), start))
            info = None
        elif info is not None:
            lines.append(line)
    return blocks


def check_links(path, errors):
    for target in LINK.findall(open(path, encoding="utf-8").read()):
        if "://" not in target and not os.path.exists(os.path.join(os.path.dirname(path), target)):
            errors.append(f"{path}: link to {target}, which does not exist")


def make_scratch_root(scratch, build_dir, source_dir, datasets):
    root = os.path.join(scratch, "work")
    os.makedirs(os.path.join(root, "build"))
    for entry in os.listdir(build_dir):
        os.symlink(os.path.join(build_dir, entry), os.path.join(root, "build", entry))
    for entry in ("tools", "examples", "bench", "docs", "README.md"):
        os.symlink(os.path.join(source_dir, entry), os.path.join(root, entry))
    os.makedirs(os.path.join(scratch, "shared"))
    os.symlink(datasets, os.path.join(scratch, "shared", "datasets"))
    return root


def make_ogb_mirror(scratch, build_dir):
    """A zip laid out as OGB's arxiv.zip (arxiv/raw, arxiv/split/time), holding a generated graph."""
    mirror = os.path.join(scratch, "mirror")
    folder = os.path.join(mirror, "arxiv")
    subprocess.run([os.path.join(build_dir, "bin", "halo-convert"), "synth", "sbm", folder, "--nodes", "80",
                    "--avg-degree", "6", "--features", "16", "--classes", "40", "--layout", "ogb", "-q"], check=True)
    os.remove(os.path.join(folder, "meta.json"))  # as in OGB's zip: the metadata is the loader's
    os.rename(os.path.join(folder, "split", "random"), os.path.join(folder, "split", "time"))
    subprocess.run(["cmake", "-E", "tar", "cf", "arxiv.zip", "--format=zip", "arxiv"], cwd=mirror, check=True)
    shutil.rmtree(folder)
    return "file://" + mirror


def gpu_visible():
    try:
        return subprocess.run(["nvidia-smi", "-L"], capture_output=True, timeout=30).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def run_block(text, root, env, expected):
    started = time.monotonic()
    result = subprocess.run(["bash", "-euo", "pipefail", "-c", text], cwd=root, env=env, capture_output=True,
                            text=True, timeout=900)
    output = result.stdout + result.stderr
    problem = None
    if result.returncode != 0:
        problem = f"exit code {result.returncode}"
    else:
        missing = [line for line in expected if line not in output]
        if missing:
            problem = "the output lacks: " + " | ".join(missing)
    return problem, output, time.monotonic() - started


def main():
    build_dir, source_dir = (os.path.abspath(p) for p in sys.argv[1:3])
    datasets = os.path.join(source_dir, "..", "shared", "datasets")
    if not os.path.isdir(os.path.join(datasets, "cora")):
        print(f"skipped: the docs train on the shared datasets, and {os.path.normpath(datasets)} is absent")
        return 77
    test_steps = [line.strip() for line in open(os.path.join(source_dir, "tools", "test.sh"))]
    errors, counts = [], {"run": 0, "gpu skipped": 0, "ci": 0, "bench": 0}
    pages = sorted(os.path.join(source_dir, "docs", p) for p in os.listdir(os.path.join(source_dir, "docs"))
                   if p.endswith(".md"))
    check_links(os.path.join(source_dir, "README.md"), errors)
    with tempfile.TemporaryDirectory() as scratch:
        root = make_scratch_root(scratch, build_dir, source_dir, os.path.realpath(datasets))
        env = dict(os.environ, OMP_NUM_THREADS="1", OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
                   HALO_OGB_URL=make_ogb_mirror(scratch, build_dir))
        has_gpu = gpu_visible()
        for page in pages:
            check_links(page, errors)
            blocks = blocks_of(page)
            for i, (info, text, line) in enumerate(blocks):
                where = f"{os.path.relpath(page, source_dir)}:{line}"
                tags = info.split()
                if not tags or tags[0] != "sh":
                    continue
                if tags == ["sh"] or (tags == ["sh", "gpu"] and has_gpu):
                    following = blocks[i + 1] if i + 1 < len(blocks) else None
                    expected = []
                    if following and following[0] == "text output":
                        expected = [l.strip() for l in following[1].splitlines() if l.strip()]
                    problem, output, seconds = run_block(text, root, env, expected)
                    print(f"{where}: {'FAILED: ' + problem if problem else 'ok'} ({seconds:.1f} s)", flush=True)
                    if problem:
                        errors.append(f"{where}: {problem}\n{output[-3000:]}")
                    counts["run"] += 1
                elif tags == ["sh", "gpu"]:
                    print(f"{where}: skipped: needs a GPU")
                    counts["gpu skipped"] += 1
                elif tags == ["sh", "ci"]:
                    for command in filter(None, (l.strip() for l in text.splitlines())):
                        if not any(step.startswith(command) for step in test_steps):
                            errors.append(f"{where}: '{command}' is not a step of tools/test.sh")
                    counts["ci"] += 1
                elif tags == ["sh", "bench"]:
                    for script in re.findall(r"bench/\w+\.py", text):
                        try:
                            py_compile.compile(os.path.join(source_dir, script), doraise=True,
                                               cfile=os.path.join(scratch, "compiled.pyc"))
                        except (OSError, py_compile.PyCompileError) as e:
                            errors.append(f"{where}: {script}: {e}")
                    counts["bench"] += 1
                else:
                    errors.append(f"{where}: unknown block tag '{info}'")
    print(f"{counts['run']} blocks run, {counts['gpu skipped']} skipped (no GPU), {counts['ci']} build blocks "
          f"checked against tools/test.sh, {counts['bench']} benchmark blocks checked")
    for e in errors:
        print("error:", e)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
