#!/usr/bin/env python3
"""bench/regression_guard.py on hand-made results: a figure that got slower than its spread while
its same-run reference did not is WORSE; one whose reference slowed as much (a slower machine) is
not; a wide measured spread excuses a change within it; bandwidth that fell is WORSE; the
committed folder of the machine's GPU count is preferred; nothing to compare is no failure."""
import json
import os
import subprocess
import sys
import tempfile

GUARD = sys.argv[1]


def result(benchmark, rows, unit="us", device="NVIDIA H200"):
    return {"benchmark": benchmark, "device": {"name": device}, "commit": "c0ffee0",
            "date": "2026-01-01T00:00:00Z",
            "tables": [{"title": "latency", "unit": unit,
                        "rows": [dict(size=size, unit=unit, **fields) for size, fields in rows]}]}


def row(dcuda, reference, low=None, high=None):
    fields = {"dcuda": dcuda, "reference": reference, "ratio": dcuda / reference}
    if low is not None:
        fields.update(dcuda_min=low, dcuda_max=high)
    return fields


def write(folder, name, content):
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, name), "w", encoding="utf-8") as handle:
        json.dump(content, handle)


def guard(new, committed, gpus=1):
    done = subprocess.run([sys.executable, GUARD, new, "--committed", committed, "--gpus", str(gpus)],
                          capture_output=True, text=True, check=False)
    return done.returncode, done.stdout


failures = []


def expect(condition, what, output):
    if not condition:
        failures.append(f"{what}\n{output}")


with tempfile.TemporaryDirectory() as root:
    committed, new = os.path.join(root, "committed"), os.path.join(root, "new")
    write(os.path.join(committed, "h200"), "lat.json",
          result("lat", [(4, row(1.00, 0.50)), (8, row(2.00, 1.00)), (16, row(3.0, 1.0, 2.7, 3.3))]))
    write(os.path.join(committed, "h200x2"), "lat.json", result("lat", [(4, row(0.50, 0.50))]))

    # Unchanged: no figure worse, exit 0.
    write(new, "lat.json",
          result("lat", [(4, row(1.00, 0.50)), (8, row(2.00, 1.00)), (16, row(3.0, 1.0))]))
    code, out = guard(new, committed)
    expect(code == 0 and "no figure got worse" in out, "unchanged results pass", out)

    # 4 B 10% slower with its reference unchanged: WORSE. 8 B 10% slower with a reference 10%
    # slower too: the machine, not dcuda. 16 B 8% slower inside its committed 20% spread.
    write(new, "lat.json",
          result("lat", [(4, row(1.10, 0.50)), (8, row(2.20, 1.10)), (16, row(3.24, 1.0))]))
    code, out = guard(new, committed)
    expect(code == 1 and "WORSE latency [4]: 1.000 -> 1.100 us" in out, "a slower figure is WORSE",
           out)
    expect("[8]" not in out, "a figure whose reference slowed alike is not WORSE", out)
    expect("[16]" not in out, "a change inside the measured spread is not WORSE", out)
    expect("1 figure(s) got worse" in out, "the verdict counts the rows", out)

    # On 2 GPUs the h200x2 folder is the committed one: 1.00 against 0.50 there.
    write(new, "lat.json", result("lat", [(4, row(1.00, 0.50))]))
    code, out = guard(new, committed, gpus=2)
    expect(code == 1 and "against h200x2/lat.json" in out, "the GPU count's folder comes first", out)

    # Bandwidth: higher is better; 20% less with the reference unchanged is WORSE.
    write(os.path.join(committed, "h100"), "bw.json", result("bw", [(1024, row(100.0, 200.0))],
                                                              unit="GB/s", device="NVIDIA H100 80GB HBM3"))
    bandwidth = os.path.join(root, "bandwidth")
    write(bandwidth, "bw.json", result("bw", [(1024, row(80.0, 200.0))], unit="GB/s",
                                       device="NVIDIA H100 80GB HBM3"))
    code, out = guard(bandwidth, committed)
    expect(code == 1 and "WORSE latency [1024]: 100.000 -> 80.000 GB/s" in out,
           "less bandwidth is WORSE", out)

    # The case studies' JSON (a device string, no tables) beside the benchmarks' is left alone.
    write(os.path.join(new, "apps"), "power.json", {"device": "NVIDIA H200", "runs": [1.0]})
    write(new, "lat.json", result("lat", [(4, row(1.00, 0.50))]))
    code, out = guard(new, committed)
    expect(code == 0 and "1 result(s) compared" in out, "case-study JSON is skipped", out)

    # A model without committed results: said, and no failure.
    other = os.path.join(root, "other")
    write(other, "lat.json", result("lat", [(4, row(1.0, 1.0))], device="NVIDIA A100-SXM4-80GB"))
    code, out = guard(other, committed)
    expect(code == 0 and "no committed result of a a100" in out and "nothing to compare" in out,
           "nothing to compare is no failure", out)

for failure in failures:
    print("FAIL:", failure)
print(f"regression_guard_test: {len(failures)} failure(s)")
sys.exit(1 if failures else 0)
