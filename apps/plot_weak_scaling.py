#!/usr/bin/env python3
"""Draws a case study's weak scaling (the JSON of apps/run_weak_scaling.py) in the thesis's
style: time per iteration against GPU count, one line per version (median, bars from the fastest
to the slowest run), each baseline's communication time shaded below its line.

    python3 apps/plot_weak_scaling.py bench/results/h200x4/apps/stencil.json docs/img/stencil-weak-scaling-4xh200.png

Needs matplotlib (Debian: python3-matplotlib); it is a documentation tool, not part of the tests.
"""
import json
import sys
import textwrap

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

STYLE = {"dcuda": ("tab:red", "o", "dcuda"),
         "mpi": ("tab:blue", "s", "MPI-CUDA (host-staged)"),
         "nccl": ("tab:green", "^", "NCCL-CUDA")}


def main():
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    with open(sys.argv[1]) as f:
        report = json.load(f)
    rows = report["rows"]
    gpus = [row["gpus"] for row in rows]
    fig, ax = plt.subplots(figsize=(6, 4))
    for version in report["versions"]:
        color, marker, label = STYLE.get(version, ("black", "x", version))
        median = [row[version]["median_ms"] for row in rows]
        low = [row[version]["median_ms"] - row[version]["min_ms"] for row in rows]
        high = [row[version]["max_ms"] - row[version]["median_ms"] for row in rows]
        ax.errorbar(gpus, median, yerr=[low, high], color=color, marker=marker, label=label,
                    capsize=3)
        comm = [row[version]["comm_median_ms"] for row in rows]
        if all(c is not None for c in comm):
            ax.fill_between(gpus, [0] * len(gpus), comm, color=color, alpha=0.15,
                            label=f"{label}: communication")
    app = report["benchmark"].split()[0].split("/")[-1]
    runs = report.get("repeats", 1)
    ax.set_title(f"{app}: weak scaling on {report['device']} (commit {report['commit']}, "
                 f"median of {runs} run{'s' if runs != 1 else ''})",
                 fontsize=9)
    ax.set_xlabel("GPUs")
    ax.set_ylabel("time per iteration [ms]")
    ax.set_xticks(gpus)
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="lower right")
    # Wrapped: an unwrapped line wider than the axes makes tight_layout squeeze the plot.
    ax.text(0.01, 0.99, textwrap.fill("per GPU: " + report["parameters_per_gpu"], 110),
            transform=ax.transAxes, fontsize=6, va="top")
    fig.tight_layout()
    fig.savefig(sys.argv[2], dpi=120)
    print(f"plot_weak_scaling: written {sys.argv[2]}")


if __name__ == "__main__":
    main()
