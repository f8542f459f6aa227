#!/usr/bin/env python3
"""Compares a GPU run's benchmark JSON with the committed results of the same GPU model.

For every benchmark JSON under NEW (a run's results folder, e.g. gpu-out/results), finds the
committed JSON of the same benchmark and the same place in its folder under bench/results/<model>
(h100, h200: from the JSON's device name), preferring the folder of the run's GPU count (h200x4
for a 4-GPU machine, h200 for one GPU), and compares every table row the two share (same table
title, same size). A row is WORSE when its figure got worse by more than its spread on both
counts:
  - the figure itself (new against committed), and
  - the figure against its same-run reference (the ratio), so that a machine that is slower as a
    whole (its reference moved too) does not read as a regression.
A figure's spread is the range of its repetitions where the JSON keeps it (dcuda_min and
dcuda_max, relative to the median), for the new and the committed run alike, and never less than
--floor (default 0.03). Lower is better for "us" tables, higher for "GB/s" and "MB/s".

Prints one line per WORSE row and a verdict; exits 1 when a row is WORSE, 0 otherwise (also when
nothing could be compared, which it says).

Usage: regression_guard.py NEW [--committed bench/results] [--gpus N] [--floor 0.03]
"""
import argparse
import glob
import json
import os
import sys

LOWER_IS_BETTER = {"us": True, "ms": True, "GB/s": False, "MB/s": False}


def model_of(device_name):
    """bench/results folder prefix of a GPU: 'NVIDIA H200' -> 'h200', 'NVIDIA H100 80GB HBM3' -> 'h100'."""
    for word in device_name.replace("-", " ").split():
        if word[:1] in "HABLV" and word[1:].isdigit():
            return word.lower()
    return None


def folders_for(model, gpus):
    """Committed folders of a model, the one for this machine's GPU count first."""
    own = model if gpus <= 1 else f"{model}x{gpus}"
    others = [model] + [f"{model}x{n}" for n in (2, 4, 8)]
    return [own] + [f for f in others if f != own]


def rows_of(result):
    rows = {}
    for table in result.get("tables", []):
        for row in table.get("rows", []):
            if "dcuda" in row:
                rows[(table.get("title", ""), row.get("size"))] = (table.get("unit", row.get("unit")), row)
    return rows


def relative_spread(row):
    low, high, median = row.get("dcuda_min"), row.get("dcuda_max"), row.get("dcuda")
    if low is None or high is None or not median:
        return 0.0
    return (high - low) / median


def compare(new, old, floor):
    """The WORSE rows of `new` against `old`: (title, size, old, new, change, ratio change, tolerance)."""
    worse = []
    old_rows = rows_of(old)
    for key, (unit, row) in rows_of(new).items():
        if key not in old_rows or unit not in LOWER_IS_BETTER:
            continue
        _, before = old_rows[key]
        if not before["dcuda"] or not row["dcuda"]:
            continue
        tolerance = max(floor, relative_spread(row), relative_spread(before))
        # How much worse, as a factor above 1: time grew, or bandwidth shrank.
        if LOWER_IS_BETTER[unit]:
            change = row["dcuda"] / before["dcuda"]
        else:
            change = before["dcuda"] / row["dcuda"]
        ratio_change = None
        if before.get("ratio") and row.get("ratio"):
            ratio_change = row["ratio"] / before["ratio"]
            if not LOWER_IS_BETTER[unit]:
                ratio_change = 1 / ratio_change
        if change > 1 + tolerance and (ratio_change is None or ratio_change > 1 + tolerance):
            worse.append((key[0], key[1], before["dcuda"], row["dcuda"], change, ratio_change,
                          tolerance, unit))
    return worse


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("new")
    parser.add_argument("--committed", default=os.path.join(os.path.dirname(__file__), "results"))
    parser.add_argument("--gpus", type=int, default=1)
    parser.add_argument("--floor", type=float, default=0.03)
    args = parser.parse_args()

    compared = 0
    all_worse = 0
    for path in sorted(glob.glob(os.path.join(args.new, "**", "*.json"), recursive=True)):
        with open(path, encoding="utf-8") as handle:
            new = json.load(handle)
        # Only the benchmarks' JSON (bench/common/bench_report.h): a "device" object and "tables".
        # The case studies' JSON (apps/run_weak_scaling.py) names its device in a string.
        if not isinstance(new, dict) or not isinstance(new.get("device"), dict):
            continue
        model = model_of(new["device"].get("name", ""))
        if model is None or "tables" not in new:
            continue
        relative = os.path.relpath(path, args.new)
        committed_path = None
        for folder in folders_for(model, args.gpus):
            candidate = os.path.join(args.committed, folder, relative)
            if os.path.isfile(candidate):
                committed_path = candidate
                break
        if committed_path is None:
            print(f"regression guard: {relative}: no committed result of a {model} to compare with")
            continue
        with open(committed_path, encoding="utf-8") as handle:
            old = json.load(handle)
        compared += 1
        worse = compare(new, old, args.floor)
        all_worse += len(worse)
        where = os.path.relpath(committed_path, args.committed)
        print(f"regression guard: {relative} against {where} (commit {old.get('commit', '?')}, "
              f"{old.get('date', '?')}): {len(worse)} figure(s) worse beyond their spread")
        for title, size, before, after, change, ratio_change, tolerance, unit in worse:
            against = "" if ratio_change is None else f", against its reference x{ratio_change:.3f}"
            print(f"  WORSE {title} [{size}]: {before:.3f} -> {after:.3f} {unit} "
                  f"(x{change:.3f}{against}; spread {tolerance:.1%})")
    if compared == 0:
        print("regression guard: nothing to compare")
        return 0
    verdict = "no figure got worse" if all_worse == 0 else f"{all_worse} figure(s) got worse"
    print(f"regression guard: {compared} result(s) compared, {verdict}")
    return 1 if all_worse else 0


if __name__ == "__main__":
    sys.exit(main())
