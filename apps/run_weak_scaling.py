#!/usr/bin/env python3
"""Weak scaling of the case studies (docs/case-studies.md): every version of each application on
any GPU counts (1, 2, 4 by default; 8 on an 8-GPU machine), the same problem size per GPU,
several runs each.

    python3 apps/run_weak_scaling.py --build build --out bench/results/h200x4/apps \
        [--apps stencil] [--gpus 1 2 4 8] [--repeats 5] [--runs-per-launch 5] [--commit SHA]

A launch is `mpirun -np G <build>/apps/<app>/<app>_<version> --check 0 --runs K <sizes>`; each
of its K runs starts from the input a fresh process has (apps/common/options.h: --runs) and
prints one "RESULT {json}" line (apps/common/result.h) with the time of its timed iterations.
--repeats runs per point are made in launches of --runs-per-launch (default: all in one launch,
since a launch's start, 4-8 s on 8 GPUs, costs 20-40 times the 0.2 s a run is timed). For every
application it prints a table (median time per iteration, spread, communication time of the
baselines, dcuda's speed-up over the faster baseline) and writes <out>/<app>.json, which
apps/plot_weak_scaling.py draws. Versions whose program was not built (NCCL missing) are left out
with a message; a run that fails stops the script with its output.
"""
import argparse
import datetime
import json
import os
import statistics
import shlex
import subprocess
import sys
import time

VERSIONS = ["dcuda", "mpi", "nccl"]
# The launcher and its options: MPIEXEC and MPIEXEC_PREFLAGS from the environment (as CMake's
# variables of the same names), else mpirun; for Open MPI the options scripts/mpi_launcher.sh
# gives (--oversubscribe --bind-to none, and --allow-run-as-root as root).
LAUNCHER = os.environ.get("MPIEXEC", "mpirun")


def launcher_options():
    if "MPIEXEC_PREFLAGS" in os.environ:
        return shlex.split(os.environ["MPIEXEC_PREFLAGS"])
    try:
        version = subprocess.run([LAUNCHER, "--version"], capture_output=True, text=True).stdout
    except OSError:
        return []
    if "Open MPI" not in version and "OpenRTE" not in version:
        return []
    os.environ.setdefault("OMPI_MCA_btl_vader_single_copy_mechanism", "none")
    options = ["--oversubscribe", "--bind-to", "none"]
    return (["--allow-run-as-root"] if os.geteuid() == 0 else []) + options
# A run takes seconds; one that hangs must not eat a device call (dcuda's own waits time out too).
RUN_TIMEOUT_S = 180


def launch(program, gpus, runs, extra):
    """One launch of `runs` runs; their results."""
    command = ([LAUNCHER, "-np", str(gpus)] + launcher_options() +
               [program, "--check", "0", "--runs", str(runs)] + extra)
    try:
        done = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                              timeout=RUN_TIMEOUT_S)
    except subprocess.TimeoutExpired as expired:
        # TimeoutExpired holds bytes whatever text= says.
        sys.stderr.write((expired.stdout or b"").decode(errors="replace"))
        raise SystemExit(f"run_weak_scaling: {' '.join(command)} ran past {RUN_TIMEOUT_S} s")
    results = [json.loads(line[len("RESULT "):]) for line in done.stdout.splitlines()
               if line.startswith("RESULT ")]
    if done.returncode != 0 or len(results) != runs:
        sys.stderr.write(done.stdout)
        raise SystemExit(f"run_weak_scaling: {' '.join(command)} failed "
                         f"(exit {done.returncode}, {len(results)} RESULT lines, {runs} expected)")
    return results


def measure(program, gpus, repeats, runs_per_launch, extra):
    """`repeats` runs in launches of at most `runs_per_launch`."""
    runs = []
    while len(runs) < repeats:
        runs += launch(program, gpus, min(runs_per_launch, repeats - len(runs)), extra)
    return runs


def summarise(runs):
    per_iteration = [r["time_ms"] / r["iterations"] for r in runs]
    comm = [r["comm_ms"] / r["iterations"] for r in runs if r["comm_ms"] >= 0]
    return {
        "median_ms": statistics.median(per_iteration),
        "min_ms": min(per_iteration),
        "max_ms": max(per_iteration),
        "comm_median_ms": statistics.median(comm) if comm else None,
        "runs": len(runs),
    }


def device_name():
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"],
                             stdout=subprocess.PIPE, text=True).stdout.split("\n")[0]
        return out.strip() or "unknown"
    except OSError:
        return "unknown"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--build", default="build")
    parser.add_argument("--out", required=True)
    parser.add_argument("--apps", nargs="+", default=["stencil"])
    parser.add_argument("--gpus", nargs="+", type=int, default=[1, 2, 4])
    parser.add_argument("--repeats", type=int, default=5, help="runs per point")
    parser.add_argument("--runs-per-launch", type=int, default=0,
                        help="runs one process start makes (default: all of a point's)")
    parser.add_argument("--commit", default=os.environ.get("DCUDA_COMMIT", "unknown"))
    parser.add_argument("--app-args", default="", help="extra arguments for every program")
    args = parser.parse_args()
    if args.repeats < 1 or args.runs_per_launch < 0:
        parser.error("--repeats must be at least 1, --runs-per-launch at least 0")
    per_launch = args.runs_per_launch or args.repeats
    launches = -(-args.repeats // per_launch)
    os.makedirs(args.out, exist_ok=True)

    for app in args.apps:
        versions = []
        for version in VERSIONS:
            program = os.path.join(args.build, "apps", app, f"{app}_{version}")
            if os.path.exists(program):
                versions.append((version, program))
            else:
                print(f"# {app}_{version}: not built ({program} missing): left out")
        rows = []
        all_runs = []
        for gpus in args.gpus:
            row = {"gpus": gpus}
            for version, program in versions:
                started = time.monotonic()
                runs = measure(program, gpus, args.repeats, per_launch, args.app_args.split())
                print(f"# {app}_{version} on {gpus} GPU(s): {args.repeats} runs in {launches} "
                      f"launch(es), {time.monotonic() - started:.0f} s", flush=True)
                all_runs += runs
                row[version] = summarise(runs)
            baselines = [row[v]["median_ms"] for v, _ in versions if v != "dcuda"]
            if "dcuda" in row and baselines:
                row["dcuda_speedup_over_faster_baseline"] = min(baselines) / row["dcuda"]["median_ms"]
            rows.append(row)

        parameters = all_runs[0]["parameters"] if all_runs else ""
        print(f"\n# {app}: weak scaling, time per iteration (median of {args.repeats} runs in "
              f"{launches} launch(es), [min, max]); {parameters} per GPU; {device_name()}; "
              f"commit {args.commit}")
        header = "# GPUs" + "".join(f"{v:>28}" for v, _ in versions) + "   dcuda speed-up"
        print(header)
        for row in rows:
            line = f"{row['gpus']:>6}"
            for version, _ in versions:
                s = row[version]
                cell = f"{s['median_ms']:.3f} [{s['min_ms']:.3f},{s['max_ms']:.3f}]"
                if s["comm_median_ms"] is not None:
                    cell += f" c{s['comm_median_ms']:.3f}"
                line += f"{cell:>28}"
            speedup = row.get("dcuda_speedup_over_faster_baseline")
            line += f"   {speedup:.2f}" if speedup else "   -"
            print(line)
        print("# ms per iteration; c = communication time per iteration of a baseline; "
              "speed-up = faster baseline's median / dcuda's median")

        report = {
            "benchmark": f"apps/{app} weak scaling",
            "device": device_name(),
            "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "commit": args.commit,
            "parameters_per_gpu": parameters,
            "repeats": args.repeats,
            "launches": launches,
            "versions": [v for v, _ in versions],
            "rows": rows,
            "runs": all_runs,
        }
        path = os.path.join(args.out, f"{app}.json")
        with open(path, "w") as f:
            json.dump(report, f, indent=1)
        print(f"# written: {path}")


if __name__ == "__main__":
    main()
