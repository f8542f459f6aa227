#!/usr/bin/env python3
"""Compares two builds' benchmark JSON from scripts/compare_latency.sh.

Reads OUT/base-<round>/*.json and OUT/new-<round>/*.json, and prints for every table row the
median of each build over the rounds, the spread (min-max) and new/base. A row is marked WORSE
when the new build's median lies above every base run (beyond the base's spread) and more than 2%
above the base median. Exits 1 if any row is WORSE.

Usage: compare_latency.py OUT
"""
import glob
import json
import os
import statistics
import sys


def rows_of(folder_glob):
    values = {}
    for path in sorted(glob.glob(folder_glob)):
        for name in sorted(glob.glob(os.path.join(path, "*.json"))):
            with open(name, encoding="utf-8") as handle:
                result = json.load(handle)
            for table in result.get("tables", []):
                for row in table.get("rows", []):
                    if "dcuda" not in row:
                        continue
                    key = (result.get("benchmark", os.path.basename(name)), table.get("title", ""),
                           row.get("size", row.get("ranks", "")))
                    values.setdefault(key, []).append(float(row["dcuda"]))
    return values


def main():
    out = sys.argv[1]
    base = rows_of(os.path.join(out, "base-*"))
    new = rows_of(os.path.join(out, "new-*"))
    worse = 0
    current = None
    for key in sorted(base, key=lambda k: (k[0], k[1], float(k[2]) if str(k[2]).replace(".", "").isdigit() else 0)):
        if key not in new:
            continue
        benchmark, title, size = key
        if (benchmark, title) != current:
            current = (benchmark, title)
            print(f"\n# {benchmark}: {title}")
            print(f"{'size':>10} {'base median':>12} {'base min-max':>20} {'new median':>12} "
                  f"{'new min-max':>20} {'new/base':>9}")
        b, n = base[key], new[key]
        bm, nm = statistics.median(b), statistics.median(n)
        mark = ""
        if nm > max(b) and nm > 1.02 * bm:
            mark = "  WORSE"
            worse += 1
        print(f"{size:>10} {bm:12.3f} {min(b):9.3f}-{max(b):<10.3f} {nm:12.3f} "
              f"{min(n):9.3f}-{max(n):<10.3f} {nm / bm:9.3f}{mark}")
    print(f"\ncompare_latency: {worse} row(s) worse beyond the base's spread")
    return 1 if worse else 0


if __name__ == "__main__":
    sys.exit(main())
