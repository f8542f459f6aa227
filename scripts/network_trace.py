#!/usr/bin/env python3
"""Where a network operation's time goes, from the files DCUDA_NETWORK_TRACE=<prefix> writes.

Usage: python3 scripts/network_trace.py [--stalls] <prefix>
  (reads <prefix>.<process>.csv of every process)

Operations from one rank to another pass the hops in issue order, so the k-th operation of a
(source, target) pair is matched across the processes' files by k. Printed per hop: the median,
10th and 90th percentile in microseconds. "device turnaround" is the time from the target's proxy
handing an operation to the delivery agent until the same proxy takes the next operation the
target rank issues: the agent, the rank's wait, its next call and the command channel. In a
ping-pong, one way = source proxy + network + target proxy + device turnaround.

--stalls prints, per process and hop, how many events there were over how long and the longest
quiet spells between two events of that hop, with what the other hops of the process did meanwhile:
a hop that stops while the one before it goes on is where operations wait.
"""
import bisect
import csv
import glob
import statistics
import sys
from collections import defaultdict

HOPS = ("taken", "posted", "arrived", "to_agent")


def read(prefix):
    events = defaultdict(list)  # (hop, source, target) -> [ns] in file order
    taken_by_source = defaultdict(list)  # source rank -> [ns]
    files = sorted(glob.glob(glob.escape(prefix) + ".*.csv"))
    if not files:
        sys.exit(f"no files {prefix}.<process>.csv")
    for name in files:
        with open(name, newline="") as f:
            for row in csv.DictReader(f):
                key = (row["hop"], int(row["source_rank"]), int(row["target_rank"]))
                events[key].append(int(row["ns"]))
                if row["hop"] == "taken":
                    taken_by_source[int(row["source_rank"])].append(int(row["ns"]))
    for times in taken_by_source.values():
        times.sort()
    return events, taken_by_source


def intervals(events, taken_by_source):
    spans = defaultdict(list)
    pairs = {(s, t) for (_, s, t) in events}
    for s, t in sorted(pairs):
        lists = {hop: events.get((hop, s, t), []) for hop in HOPS}
        n = min(len(v) for v in lists.values())
        if n == 0:
            continue
        same_count = len(lists["taken"]) == len(lists["posted"])  # no operation was split
        for k in range(n):
            if same_count:
                spans["source proxy (taken -> posted)"].append(lists["posted"][k] - lists["taken"][k])
            spans["network (posted -> arrived)"].append(lists["arrived"][k] - lists["posted"][k])
            spans["target proxy (arrived -> to agent)"].append(lists["to_agent"][k] - lists["arrived"][k])
            replies = taken_by_source.get(t, [])
            i = bisect.bisect_right(replies, lists["to_agent"][k])
            if i < len(replies):
                spans["device turnaround (to agent -> next taken)"].append(
                    replies[i] - lists["to_agent"][k])
    return spans


def summary(spans):
    lines = [f"{'hop':48s} {'count':>8s} {'median us':>10s} {'p10 us':>8s} {'p90 us':>8s}"]
    for name, values in spans.items():
        values = sorted(values)
        q = statistics.quantiles(values, n=10) if len(values) > 1 else [values[0]] * 9
        lines.append(f"{name:48s} {len(values):8d} {statistics.median(values) / 1000:10.2f} "
                     f"{q[0] / 1000:8.2f} {q[-1] / 1000:8.2f}")
    return "\n".join(lines)


def stalls(prefix, shown=5):
    lines = []
    for name in sorted(glob.glob(glob.escape(prefix) + ".*.csv")):
        by_hop = defaultdict(list)
        with open(name, newline="") as f:
            for row in csv.DictReader(f):
                by_hop[row["hop"]].append(int(row["ns"]))
        if not by_hop:
            continue
        for times in by_hop.values():
            times.sort()
        lines.append(f"{name}:")
        for hop in HOPS:
            times = by_hop.get(hop, [])
            if len(times) < 2:
                continue
            span = (times[-1] - times[0]) / 1e6
            lines.append(f"  {hop:9s} {len(times):8d} events over {span:10.1f} ms; longest quiet spells:")
            gaps = sorted(((times[i + 1] - times[i], times[i]) for i in range(len(times) - 1)),
                          reverse=True)[:shown]
            for gap, at in gaps:
                others = []
                for other in HOPS:
                    if other == hop or other not in by_hop:
                        continue
                    o = by_hop[other]
                    n = bisect.bisect_left(o, at + gap) - bisect.bisect_right(o, at)
                    others.append(f"{other} {n}")
                start = (at - times[0]) / 1e6
                lines.append(f"    {gap / 1e6:9.2f} ms from {start:9.1f} ms; meanwhile " + ", ".join(others))
    return "\n".join(lines)


if __name__ == "__main__":
    arguments = sys.argv[1:]
    if arguments[:1] == ["--stalls"] and len(arguments) == 2:
        print(stalls(arguments[1]))
    elif len(arguments) == 1:
        print(summary(intervals(*read(arguments[0]))))
    else:
        sys.exit(__doc__)
