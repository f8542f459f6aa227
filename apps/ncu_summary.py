#!/usr/bin/env python3
"""The few Nsight Compute figures that tell a dcuda rank's shape from its computation, one line
per profiled kernel, from `ncu --csv --page details` output (apps/profile_ncu.sh writes it).

    python3 apps/ncu_summary.py ncu-stencil-dcuda.csv [more.csv ...]

Columns: duration, achieved / theoretical occupancy, registers per thread, block size x grid
size, SM and memory throughput (% of peak), L2 hit rate, cycles a warp waits per issued
instruction. A figure the CSV lacks (another ncu version, a section not collected) prints as "-".
"""
import csv
import sys

# (column title, ncu metric name as the details page names it)
FIGURES = [
    ("duration", "Duration"),
    ("occupancy", "Achieved Occupancy"),
    ("of theory", "Theoretical Occupancy"),
    ("regs", "Registers Per Thread"),
    ("block", "Block Size"),
    ("grid", "Grid Size"),
    ("SM %", "Compute (SM) Throughput"),
    ("memory %", "Memory Throughput"),
    ("L2 hit %", "L2 Hit Rate"),
    ("cycles/issue", "Warp Cycles Per Issued Instruction"),
]


def read_rows(path):
    """The CSV rows of one ncu log (its lines other than CSV, ==PROF== and the program's own
    output, are skipped)."""
    with open(path, newline="") as f:
        lines = [line for line in f if line.startswith('"')]
    return list(csv.DictReader(lines))


def summarise(rows):
    """[(kernel, {metric name: "value unit"})] in the order the kernels were profiled."""
    kernels = {}
    for row in rows:
        if "Metric Name" not in row or row.get("ID") is None:
            continue
        key = (row["ID"], row.get("Kernel Name", "?"))
        figures = kernels.setdefault(key, {})
        unit = row.get("Metric Unit", "")
        value = row.get("Metric Value", "")
        figures.setdefault(row["Metric Name"], f"{value} {unit}".strip())
    return [(name, figures) for (_, name), figures in kernels.items()]


def short_name(kernel):
    """The kernel's function name without namespace and parameters."""
    name = kernel.replace("(anonymous namespace)::", "").split("(")[0]
    return name.split("::")[-1].strip() or kernel


def print_table(path, kernels):
    print(f"# {path}: {len(kernels)} kernel launch(es)")
    print("# " + " | ".join(["kernel"] + [title for title, _ in FIGURES]))
    for kernel, figures in kernels:
        cells = [short_name(kernel)] + [figures.get(metric, "-") for _, metric in FIGURES]
        print("  " + " | ".join(cells))


def main():
    if len(sys.argv) < 2:
        raise SystemExit(__doc__)
    status = 0
    for path in sys.argv[1:]:
        kernels = summarise(read_rows(path))
        if not kernels:
            print(f"ncu_summary: {path}: no profiled kernel in it")
            status = 1
        print_table(path, kernels)
    return status


if __name__ == "__main__":
    sys.exit(main())
