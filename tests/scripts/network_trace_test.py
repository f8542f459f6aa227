#!/usr/bin/env python3
"""scripts/network_trace.py on a hand-made ping-pong of two operations each way between rank 0
(process 0) and rank 9 (process 1): every hop's median must come out as constructed, and the quiet
spells of --stalls."""
import importlib.util
import os
import sys
import tempfile

spec = importlib.util.spec_from_file_location("network_trace", sys.argv[1])
trace = importlib.util.module_from_spec(spec)
spec.loader.exec_module(trace)

HEADER = "hop,ns,source_rank,target_rank,kind,size\n"
# One way, in ns: source proxy 300, network 1000, target proxy 200, device turnaround 5000.
rows = {0: [], 1: []}
t = 0
for k in range(4):
    source, target = (0, 9) if k % 2 == 0 else (9, 0)
    source_process, target_process = (0, 1) if source == 0 else (1, 0)
    rows[source_process] += [("taken", t, source, target), ("posted", t + 300, source, target)]
    rows[target_process] += [("arrived", t + 1300, source, target),
                             ("to_agent", t + 1500, source, target)]
    t += 1500 + 5000  # the target's reply is taken 5000 ns after its job went to the agent

with tempfile.TemporaryDirectory() as directory:
    prefix = os.path.join(directory, "run")
    for process, events in rows.items():
        with open(f"{prefix}.{process}.csv", "w") as f:
            f.write(HEADER)
            for hop, ns, source, target in events:
                f.write(f"{hop},{ns},{source},{target},2,4\n")
    spans = trace.intervals(*trace.read(prefix))
    quiet = trace.stalls(prefix)

expected = {
    "source proxy (taken -> posted)": (4, 300),
    "network (posted -> arrived)": (4, 1000),
    "target proxy (arrived -> to agent)": (4, 200),
    "device turnaround (to agent -> next taken)": (3, 5000),  # the last one has no reply
}
failed = False
for name, (count, ns) in expected.items():
    values = spans.get(name, [])
    if len(values) != count or any(v != ns for v in values):
        print(f"FAIL {name}: expected {count} x {ns} ns, got {values}")
        failed = True
# --stalls: process 0 takes operations at 0 and 13000 ns (k = 0, 2), and meanwhile posts one (the
# first, at 300 ns) and receives one (k = 1: arrived at 7800 ns, handed to the agent at 8000).
taken_line = "  taken            2 events over        0.0 ms; longest quiet spells:"
spell_line = "         0.01 ms from       0.0 ms; meanwhile posted 1, arrived 1, to_agent 1"
for line in (taken_line, spell_line):
    if line not in quiet.splitlines():
        print(f"FAIL --stalls: no line {line!r} in\n{quiet}")
        failed = True
print(trace.summary(spans))
sys.exit(1 if failed else 0)
