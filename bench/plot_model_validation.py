#!/usr/bin/env python3
"""The performance model's validation on SUMMA: predicted against measured communication time.

Reads summa_model.json files (one per GPU count and initiator; bench/summa_model.cu), prints
every point and, for the device- and the host-initiated version apart, the R^2 and median
relative error over their points, and draws predicted against measured (log-log, with the line of
perfect prediction) as an SVG file. Exits 1 when a version misses R^2 >= 0.9 or a median error
<= 15% (the model's targets), 0 otherwise.

Usage: plot_model_validation.py RESULT.json... [--svg FILE]
"""
import argparse
import json
import math
import statistics
import sys


def points_of(files):
    points = []
    for name in files:
        with open(name, encoding="utf-8") as handle:
            result = json.load(handle)
        if result.get("benchmark") != "summa_model":
            raise SystemExit(f"plot_model_validation: {name} is not a summa_model result")
        for table in result["tables"]:
            title = table["title"]
            gpus = title.split(" GPU(s)")[0].rsplit(" ", 1)[-1]
            initiator = "host" if "host-initiated" in title else "device"
            for row in table["rows"]:
                points.append((f"{gpus} GPU(s), {initiator}", row["size"], row["dcuda"],
                               row["reference"]))
    return points


def r_squared(measured, predicted):
    mean = sum(measured) / len(measured)
    total = sum((m - mean) ** 2 for m in measured)
    return 1.0 - sum((m - p) ** 2 for m, p in zip(measured, predicted)) / total if total > 0 else 1.0


def svg(points, file):
    values = [v for _, _, m, p in points for v in (m, p)]
    low, high = math.log10(min(values)) - 0.1, math.log10(max(values)) + 0.1
    size, margin = 480, 60

    def at(value):
        return margin + (math.log10(value) - low) / (high - low) * (size - 2 * margin)

    colours = {}
    palette = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e"]
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{size}" height="{size}" '
             f'font-family="sans-serif" font-size="12">',
             f'<rect width="{size}" height="{size}" fill="white"/>',
             f'<line x1="{margin}" y1="{size - margin}" x2="{size - margin}" y2="{margin}" '
             f'stroke="gray" stroke-dasharray="4"/>',
             f'<text x="{size / 2}" y="{size - 15}" text-anchor="middle">measured (ms, log)</text>',
             f'<text x="15" y="{size / 2}" transform="rotate(-90 15 {size / 2})" '
             f'text-anchor="middle">predicted (ms, log)</text>']
    for decade in range(math.ceil(low), math.floor(high) + 1):
        x = at(10 ** decade)
        parts.append(f'<text x="{x}" y="{size - margin + 15}" text-anchor="middle">1e{decade}</text>')
        parts.append(f'<text x="{margin - 5}" y="{size - x + 4}" text-anchor="end">1e{decade}</text>')
    for label, _, measured, predicted in points:
        colour = colours.setdefault(label, palette[len(colours) % len(palette)])
        parts.append(f'<circle cx="{at(measured):.1f}" cy="{size - at(predicted):.1f}" r="4" '
                     f'fill="{colour}"/>')
    for index, (label, colour) in enumerate(colours.items()):
        parts.append(f'<circle cx="{margin + 10}" cy="{margin + 15 * index}" r="4" fill="{colour}"/>')
        parts.append(f'<text x="{margin + 20}" y="{margin + 4 + 15 * index}">{label}</text>')
    parts.append("</svg>")
    with open(file, "w", encoding="utf-8") as handle:
        handle.write("\n".join(parts) + "\n")


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", nargs="+")
    parser.add_argument("--svg", metavar="FILE")
    args = parser.parse_args(argv)
    points = points_of(args.results)
    if not points:
        raise SystemExit("plot_model_validation: no points")
    print(f"# {'GPUs':<18}{'N':>7}{'measured (ms)':>15}{'predicted (ms)':>16}{'error':>8}")
    for label, n, measured, predicted in points:
        print(f"  {label:<18}{n:>7}{measured:15.3f}{predicted:16.3f}"
              f"{100 * (predicted - measured) / measured:7.1f}%")
    met = True
    for initiator in ("device", "host"):
        mine = [(m, p) for label, _, m, p in points if label.endswith(", " + initiator)]
        if not mine:
            continue
        r2 = r_squared([m for m, _ in mine], [p for _, p in mine])
        error = statistics.median(abs(p - m) / m for m, p in mine)
        met_here = r2 >= 0.9 and error <= 0.15
        met = met and met_here
        print(f"# {initiator}-initiated: R^2 {r2:.3f} (target >= 0.9), median error "
              f"{100 * error:.1f}% (target <= 15%): {'met' if met_here else 'missed'}")
    if args.svg:
        svg(points, args.svg)
        print(f"# plot written to {args.svg}")
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
