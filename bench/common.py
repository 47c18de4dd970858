"""What every benchmark driver shares: the machine description kept with each result, the load
average (the machines are shared), running a program, and writing a result JSON atomically."""
import json
import os
import platform
import subprocess
import sys


def machine():
    info = {"platform": platform.platform(), "cores": os.cpu_count(), "python": platform.python_version()}
    try:
        with open("/proc/cpuinfo") as f:
            info["cpu"] = next(l.split(":", 1)[1].strip() for l in f if l.startswith("model name"))
        with open("/proc/meminfo") as f:
            info["memory_gib"] = round(int(f.readline().split()[1]) / 2**20, 1)
    except (OSError, StopIteration):
        pass
    # The environment's OpenBLAS settings, which halo-train keeps (a forced core moves its speed and
    # its peak: on an AMD EPYC with AVX-512, OPENBLAS_CORETYPE=Haswell against OpenBLAS's own Cooperlake).
    info["openblas_env"] = {k: v for k, v in sorted(os.environ.items()) if k.startswith("OPENBLAS_")}
    return info


def load_average():
    return [round(x, 2) for x in os.getloadavg()]


def run(command, env=None):
    """Runs `command`, echoing it on stderr; returns its stdout, or exits with its stderr's tail."""
    print("+ " + " ".join(command), file=sys.stderr, flush=True)
    proc = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    if proc.returncode != 0:
        sys.exit(f"{command[0]} failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    return proc.stdout


def write_result(path, result):
    """Writes `result` as indented JSON to a temporary name, then renames it into place."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path + ".tmp", "w") as f:
        json.dump(result, f, indent=2)
        f.write("\n")
    os.replace(path + ".tmp", path)


def finish_result(path, result, started):
    """Adds the wall time since `started` and the load average to `result`, writes it to `path`."""
    import time
    result["wall_s"] = time.time() - started
    result["load_average_after"] = load_average()
    write_result(path, result)
    print(f"wrote {path}")


def child_env():
    """The environment of a benchmark's child process: this folder first on PYTHONPATH, so a child
    run with `python -c` can import the modules beside this one (pyg_gcn)."""
    here = os.path.dirname(os.path.abspath(__file__))
    path = os.environ.get("PYTHONPATH")
    return dict(os.environ, PYTHONPATH=here + (os.pathsep + path if path else ""))
