#!/usr/bin/env python3
"""bench/plot_model_validation.py on made-up summa_model results: it reads every point of every
file, computes R^2 and the median error, draws one circle per point, and its exit status says
whether the targets (R^2 >= 0.9, median error <= 15%) were met."""
import json
import os
import subprocess
import sys
import tempfile

SCRIPT = sys.argv[1]


def result(gpus, pairs, initiator="device"):
    title = (f"SUMMA, C = A B of N x N doubles on a 8 x 8 grid of ranks, 16 per GPU on {gpus} "
             f"GPU(s), {initiator}-initiated: x")
    rows = [{"size": n, "dcuda": m, "reference": p, "ratio": m / p, "unit": "ms"} for n, m, p in pairs]
    return {"benchmark": "summa_model", "tables": [{"title": title, "unit": "ms", "rows": rows}]}


failures = []
with tempfile.TemporaryDirectory() as scratch:
    def run(*sets):
        files = []
        for index, content in enumerate(sets):
            name = os.path.join(scratch, f"r{index}.json")
            with open(name, "w", encoding="utf-8") as handle:
                json.dump(content, handle)
            files.append(name)
        plot = os.path.join(scratch, "plot.svg")
        done = subprocess.run([sys.executable, SCRIPT, *files, "--svg", plot], capture_output=True,
                              text=True, check=False)
        with open(plot, encoding="utf-8") as handle:
            circles = handle.read().count("<circle")
        return done.returncode, done.stdout, circles

    good = run(result(1, [(512, 1.0, 1.05), (4096, 10.0, 9.0)]),
               result(4, [(512, 2.0, 2.1), (16384, 100.0, 104.0)]))
    # 4 points and 2 legend entries; errors 5%, 10%, 5%, 4%: median 5%.
    if good[0] != 0 or good[2] != 6 or "median error 5.0%" not in good[1] or "4 GPU(s)" not in good[1]:
        failures.append(f"good fit: {good}")
    # Each version scored apart: a good device fit does not hide a host fit that misses.
    mixed = run(result(1, [(512, 1.0, 1.05), (4096, 10.0, 9.0), (8192, 20.0, 21.0)]),
                result(1, [(512, 1.0, 2.0), (4096, 10.0, 20.0), (8192, 20.0, 40.0)], "host"))
    if (mixed[0] != 1 or mixed[2] != 8 or "device-initiated: R^2" not in mixed[1]
            or "host-initiated: R^2" not in mixed[1] or "median error 100.0%" not in mixed[1]):
        failures.append(f"device and host scored together: {mixed}")
    bad = run(result(2, [(512, 1.0, 2.0), (1024, 2.0, 4.0), (2048, 4.0, 8.0)]))
    if bad[0] != 1 or "missed" not in bad[1]:
        failures.append(f"a prediction twice the measurement passed: {bad}")

for failure in failures:
    print("FAIL:", failure)
print(f"plot_model_validation_test: {'FAILED' if failures else 'passed'}")
sys.exit(1 if failures else 0)
