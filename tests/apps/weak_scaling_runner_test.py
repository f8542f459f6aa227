#!/usr/bin/env python3
"""CPU test of apps/run_weak_scaling.py: the runner takes any GPU count.

Stand-in programs take the place of an application's three versions: under mpirun they print, on
process 0, one RESULT line per run asked for (--runs), with a time that depends on the version,
the process count and the run's place in its launch. The runner must launch them with 1, 2 and 4
processes, gather 3 runs per point in launches of 2, and write medians, spreads, communication
times and speed-ups that follow from those times. A stand-in that prints fewer results than runs
asked for must stop the runner with a message.

    weak_scaling_runner_test.py <path of run_weak_scaling.py>
"""
import json
import os
import stat
import subprocess
import sys
import tempfile

# Per-iteration milliseconds of run 0 on one GPU; each further GPU adds 0.1, each further run of a
# launch 0.01.
BASE_MS = {"dcuda": 1.0, "mpi": 1.5, "nccl": 1.2}
ITERATIONS = 10

STAND_IN = r'''#!{python}
import json, os, sys
arguments = sys.argv[1:]
value = lambda name: arguments[arguments.index(name) + 1]
if value("--check") != "0":
    sys.exit("the runner must turn the check off")
runs = int(value("--runs"))
if os.environ.get("OMPI_COMM_WORLD_RANK", "0") != "0":
    sys.exit(0)
gpus = int(os.environ.get("OMPI_COMM_WORLD_SIZE", "1"))
for k in range({printed}):
    per_iteration = {base} + 0.1 * (gpus - 1) + 0.01 * k
    print("RESULT " + json.dumps({{"app": "fake", "version": "{version}", "gpus": gpus,
        "iterations": {iterations}, "time_ms": per_iteration * {iterations},
        "comm_ms": {comm}, "check": "off", "parameters": "runs=%d" % runs}}))
'''


def write_stand_ins(build, printed):
    folder = os.path.join(build, "apps", "fake")
    os.makedirs(folder, exist_ok=True)
    for version, base in BASE_MS.items():
        comm = "-1" if version == "dcuda" else f"0.05 * {ITERATIONS}"
        path = os.path.join(folder, f"fake_{version}")
        with open(path, "w") as f:
            f.write(STAND_IN.format(python=sys.executable, printed=printed, base=base,
                                    version=version, iterations=ITERATIONS, comm=comm))
        os.chmod(path, os.stat(path).st_mode | stat.S_IEXEC)


def run_runner(runner, build, out):
    return subprocess.run([sys.executable, runner, "--build", build, "--out", out, "--apps", "fake",
                           "--gpus", "1", "2", "4", "--repeats", "3", "--runs-per-launch", "2",
                           "--commit", "test"],
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=600)


def close(a, b):
    return abs(a - b) < 1e-9


def main():
    runner = sys.argv[1]
    failures = []

    def check(condition, what):
        if not condition:
            failures.append(what)

    with tempfile.TemporaryDirectory() as work:
        build = os.path.join(work, "build")
        write_stand_ins(build, "runs")
        done = run_runner(runner, build, os.path.join(work, "out"))
        check(done.returncode == 0, f"runner exit {done.returncode}:\n{done.stdout}")
        if done.returncode == 0:
            with open(os.path.join(work, "out", "fake.json")) as f:
                report = json.load(f)
            check([row["gpus"] for row in report["rows"]] == [1, 2, 4], "rows for 1, 2, 4 GPUs")
            check(report["repeats"] == 3 and report["launches"] == 2, "3 runs in 2 launches")
            check(len(report["runs"]) == 3 * 3 * 3, f"27 runs kept, not {len(report['runs'])}")
            for row in report["rows"]:
                g = row["gpus"]
                for version, base in BASE_MS.items():
                    s = row[version]
                    # Runs 0 and 1 of the first launch, run 0 of the second: median = run 0.
                    expected = base + 0.1 * (g - 1)
                    check(s["runs"] == 3, f"{version} on {g}: 3 runs")
                    check(close(s["median_ms"], expected), f"{version} on {g}: median {s}")
                    check(close(s["min_ms"], expected), f"{version} on {g}: min {s}")
                    check(close(s["max_ms"], expected + 0.01), f"{version} on {g}: max {s}")
                    comm = None if version == "dcuda" else 0.05
                    check(s["comm_median_ms"] == comm or close(s["comm_median_ms"], comm),
                          f"{version} on {g}: communication {s}")
                faster = min(BASE_MS["mpi"], BASE_MS["nccl"]) + 0.1 * (g - 1)
                check(close(row["dcuda_speedup_over_faster_baseline"],
                            faster / (BASE_MS["dcuda"] + 0.1 * (g - 1))), f"speed-up on {g}")
            check("median of 3 runs in 2 launch(es)" in done.stdout, "the table's title")

        # A launch that reports fewer runs than it was asked for stops the runner.
        short = os.path.join(work, "short")
        write_stand_ins(short, "runs - 1")
        done = run_runner(runner, short, os.path.join(work, "short-out"))
        check(done.returncode != 0 and "2 expected" in done.stdout,
              f"a short launch must fail naming the runs expected:\n{done.stdout}")

    for failure in failures:
        print("FAIL", failure)
    print("weak_scaling_runner_test:", "passed" if not failures else f"{len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
