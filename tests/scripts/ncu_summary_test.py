#!/usr/bin/env python3
"""apps/ncu_summary.py on a hand-made `ncu --csv --page details` log: two kernel launches, the
program's own output and ==PROF== lines mixed in. Each launch must keep its own figures, in the
order profiled, and a figure the log lacks must print as "-"."""
import importlib.util
import io
import os
import sys
import tempfile
from contextlib import redirect_stdout

spec = importlib.util.spec_from_file_location("ncu_summary", sys.argv[1])
summary = importlib.util.module_from_spec(spec)
spec.loader.exec_module(summary)

HEADER = ('"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream",'
          '"Block Size","Grid Size","Device","CC","Section Name","Metric Name","Metric Unit",'
          '"Metric Value"\n')


def row(launch, kernel, section, metric, unit, value):
    return (f'"{launch}","7","app","host","{kernel}","1","13","(1024, 1, 1)","(132, 1, 1)","0",'
            f'"9.0","{section}","{metric}","{unit}","{value}"\n')


KERNEL_A = "(anonymous namespace)::stencil_kernel(dcuda_context *)"
KERNEL_B = "stencil::laplacian_kernel(stencil::grid_shape, bool, const double *, double *)"
log = ("==PROF== Connected to process 7\nRESULT {\"app\": \"stencil\"}\n" + HEADER +
       row(0, KERNEL_A, "GPU Speed Of Light Throughput", "Duration", "msecond", "38.20") +
       row(0, KERNEL_A, "Occupancy", "Achieved Occupancy", "%", "49.80") +
       row(0, KERNEL_A, "Launch Statistics", "Registers Per Thread", "register/thread", "64") +
       row(1, KERNEL_B, "GPU Speed Of Light Throughput", "Duration", "usecond", "402.11") +
       row(1, KERNEL_B, "Occupancy", "Achieved Occupancy", "%", "93.10") +
       "==PROF== Disconnected from process 7\n")

failures = []
with tempfile.TemporaryDirectory() as directory:
    path = os.path.join(directory, "ncu.csv")
    with open(path, "w") as f:
        f.write(log)
    kernels = summary.summarise(summary.read_rows(path))
    printed = io.StringIO()
    with redirect_stdout(printed):
        summary.print_table(path, kernels)

names = [name for name, _ in kernels]
if names != [KERNEL_A, KERNEL_B]:
    failures.append(f"kernels {names}")
else:
    a, b = kernels[0][1], kernels[1][1]
    if a.get("Duration") != "38.20 msecond" or a.get("Registers Per Thread") != "64 register/thread":
        failures.append(f"first launch's figures {a}")
    if b.get("Duration") != "402.11 usecond" or b.get("Achieved Occupancy") != "93.10 %":
        failures.append(f"second launch's figures {b}")
    if "Registers Per Thread" in b:
        failures.append("a figure of the first launch leaked into the second")
lines = printed.getvalue().splitlines()
if len(lines) != 4 or not lines[2].lstrip().startswith("stencil_kernel |"):
    failures.append(f"table:\n{printed.getvalue()}")
elif not lines[3].lstrip().startswith("laplacian_kernel | 402.11 usecond | 93.10 % | - |"):
    failures.append(f"second row: {lines[3]}")

for failure in failures:
    print("FAIL", failure)
print("ncu_summary_test:", "passed" if not failures else f"{len(failures)} failed")
sys.exit(1 if failures else 0)
