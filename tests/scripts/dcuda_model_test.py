#!/usr/bin/env python3
"""tools/dcuda-model on made-up benchmark results generated from known parameters: it finds every
table, recovers L, o, S, O, G, g, A and B of each path and initiator and g_N, G_N of host puts from N
streams at once, reports R^2 near 1, writes a model file with those values, names what it could not
fit, and refuses results it cannot use."""
import json
import os
import subprocess
import sys
import tempfile

TOOL = sys.argv[1]
SIZES = [2 ** k for k in range(0, 23)]

# Per path: L (us), G (ns per byte), S (us). Per path and initiator: o (us), O (ns per byte),
# g (us), A (ns per byte), B.
PATHS = {"same-gpu": (0.8, 0.0005, 0.1), "peer": (1.9, 0.0025, 0.4), "network": (0.45, 0.086, 0.9)}
FITS = {("same-gpu", "device"): (0.5, 0.02, 1.4, 600.0, -0.8),
        ("peer", "device"): (0.2, 0.021, 2.3, 1500.0, -0.83),
        ("network", "device"): (7.0, 0.1, 2.6, 2000.0, -0.85),
        ("same-gpu", "host"): (4.0, 0.0005, 3.1, 3100.0, -0.9),
        ("peer", "host"): (6.0, 0.001, 4.3, 4300.0, -0.9)}
# The host initiator on the network path: single messages only (o, O); no benchmark pipelines it.
SINGLE_ONLY = {("network", "host"): (30.0, 0.07)}
TITLES = {  # single-message table, its reference, and its benchmark
    ("same-gpu", "device"): ("local_latency", "notified access (dcuda_put_notify + dcuda_wait_notifications), one way, 2 ranks", "flag ping-pong"),
    ("peer", "device"): ("remote_latency", "notified access (dcuda_put_notify + dcuda_wait_notifications) over the peer path (NVLink), one way", "peer flag"),
    ("network", "device"): ("remote_latency", "notified access (dcuda_put_notify + dcuda_wait_notifications) over the network path (forced), one way", "MPI host"),
    # Same GPU first: its titles must not be taken for the peer path's.
    ("same-gpu", "host"): ("host_stream_latency", "host-initiated notified access on a stream (dcuda_put_notify_on_stream + dcuda_wait_notifications_on_stream), one way, same GPU, 2 ranks of one process", "stream memop"),
    ("peer", "host"): ("host_stream_latency", "host-initiated notified access on a stream (dcuda_put_notify_on_stream + dcuda_wait_notifications_on_stream), one way, peer path, 2 processes", "stream memop"),
    ("network", "host"): ("host_stream_network", "host-initiated notified access on a stream (dcuda_put_notify_on_stream + dcuda_wait_notifications_on_stream), one way, network path (forced), 2 processes", "MPI host"),
}
BANDWIDTH = {"same-gpu": ("local_bandwidth", "notified access bandwidth, one pair (rank 0 -> rank 1)", "cudaMemcpy"),
             "peer": ("remote_bandwidth", "notified access bandwidth over the peer path (NVLink), one pair", "cudaMemcpyPeer"),
             "network": ("remote_bandwidth", "notified access bandwidth over the network path, one pair", "MPI host")}
PLACES = {"same-gpu": ("local_latency", "same GPU"), "peer": ("remote_latency", "peer path"),
          "network": ("remote_latency", "network path (to pinned host memory)")}


# Host puts from N streams at once: per path, N -> (g_N us, G_N ns per byte, sizes measured); and
# the stream wait from N streams, N -> w_N us (one table for both paths).
CONCURRENT_SIZES = (8, 1024, 65536, 1 << 20, 4 << 20)
CONCURRENT = {"same-gpu": {1: (3.0, 1.0, CONCURRENT_SIZES), 4: (1.2, 0.5, CONCURRENT_SIZES),
                           16: (0.6, 0.3, CONCURRENT_SIZES), 64: (0.5, 0.25, CONCURRENT_SIZES)},
              "peer": {1: (4.0, 2.0, CONCURRENT_SIZES), 4: (1.5, 0.8, CONCURRENT_SIZES),
                       64: (2.0, 0.25, (8, 1024, 4096))}}
CONCURRENT_PLACES = {"same-gpu": "same GPU, 2 ranks of one process", "peer": "peer path, 2 processes"}
STREAM_WAITS = {1: 1.7, 4: 1.5, 16: 1.4, 64: 1.6}


def concurrent_time(path, streams, m):
    g, G, _ = CONCURRENT[path][streams]
    return g + m * G * 1e-3


def concurrent_expected(path, streams):
    """g_N, G_N and w_N the tool should find."""
    g, G, _ = CONCURRENT[path][streams]
    return g, G, STREAM_WAITS[streams]


# The peer path from a device changes protocol at 16 B: from there o and O are these.
PEER_DEVICE_FROM_16 = (1.5, 0.02)


def single(path, initiator, m):
    L, G, S = PATHS[path]
    o, O = (FITS.get((path, initiator)) or SINGLE_ONLY[(path, initiator)])[:2]
    if (path, initiator) == ("peer", "device") and m >= 16:
        o, O = PEER_DEVICE_FROM_16
    return L + o + S + (O + G) * 1e-3 * m


def pipelined(path, initiator, m):
    G = PATHS[path][1]
    g, A, B = FITS[(path, initiator)][2:]
    return max(g, m * (G + A * m ** B) * 1e-3)


def table(title, reference, unit, rows):
    return {"title": title, "reference": reference, "unit": unit,
            "rows": [{"size": s, "dcuda": d, "reference": r, "ratio": d / r, "unit": unit} for s, d, r in rows]}


HOST_BANDWIDTH_PLACES = {"same-gpu": "same GPU (2 ranks of one process)",
                         "peer": "peer path (from process 0's rank to process 1's)"}


def results(with_consistency=True, host_sizes=(8, 1024, 65536, 1 << 20, 4 << 20), with_concurrent=True,
            with_host_bandwidth=False):
    benchmarks = {}

    def add(benchmark, new_table):
        benchmarks.setdefault(benchmark, {"benchmark": benchmark, "device": {"name": "NVIDIA H200"},
                                          "tables": []})["tables"].append(new_table)

    for (path, initiator), (benchmark, title, reference) in TITLES.items():
        floor = PATHS[path][0]
        add(benchmark, table(title, reference, "us",
                             [(m, single(path, initiator, m), floor + 1e-6 * m) for m in SIZES]))
    for path, (benchmark, title, reference) in BANDWIDTH.items():
        peak = 1.0 / PATHS[path][1]  # GB/s of G ns per byte
        rows = [(m, m / pipelined(path, "device", m) * 1e-3, peak * min(1.0, m / 65536)) for m in SIZES]
        add(benchmark, table(title, reference, "GB/s", rows))
    add("host_stream_latency", table("message rate of dcuda_put_notify_on_stream within one GPU: 10000 back to back",
                                     "empty kernel", "us",
                                     [(m, pipelined("same-gpu", "host", m), 3.8) for m in host_sizes]))
    add("host_stream_latency", table("message rate of dcuda_put_notify_on_stream: 10000 back to back",
                                     "empty kernel", "us",
                                     [(m, pipelined("peer", "host", m), 3.8) for m in host_sizes]))
    if with_host_bandwidth:  # host_stream_bandwidth: MB/s of batches of every size from 8 B
        for path, place in HOST_BANDWIDTH_PLACES.items():
            title = (f"pipelined bandwidth of host-initiated dcuda_put_notify_on_stream, {place}: "
                     "a batch of 1 GiB back to back, one answer")
            rows = [(m, m / pipelined(path, "host", m), 2000.0) for m in SIZES if m >= 8]
            add("host_stream_bandwidth", table(title, "copy engines", "MB/s", rows))
    if with_concurrent:
        for path, counts in CONCURRENT.items():
            for streams, (_, _, sizes) in sorted(counts.items(), reverse=True):  # any order
                title = (f"host-initiated puts from {streams} stream{'s' if streams > 1 else ''} at once "
                         f"(dcuda_put_notify_on_stream), time per message, {CONCURRENT_PLACES[path]}")
                rows = [(m, concurrent_time(path, streams, m), 2.5) for m in sizes]
                add("host_stream_concurrency", table(title, "cudaMemcpyAsync", "us", rows))
        add("host_stream_concurrency",
            table("stream waits (dcuda_wait_notifications_on_stream) from N streams at once, each for "
                  "one notification already arrived, time per wait", "empty kernel", "us",
                  [(n, w, 1.0) for n, w in sorted(STREAM_WAITS.items())]))
    if with_consistency:
        for path, (benchmark, place) in PLACES.items():
            add(benchmark, table(f"memory-consistency cost S: a store and a fence, {place}", "no fence", "us",
                                 [(4, 0.05 + PATHS[path][2], 0.05)]))
    return benchmarks


def write(folder, benchmarks):
    os.makedirs(folder, exist_ok=True)
    for name, content in benchmarks.items():
        with open(os.path.join(folder, name + ".json"), "w", encoding="utf-8") as handle:
            json.dump(content, handle)


def run(*args):
    done = subprocess.run([sys.executable, TOOL, *args], capture_output=True, text=True, check=False)
    return done.returncode, done.stdout, done.stderr


def read_model(file):
    fits = {}
    with open(file, encoding="utf-8") as handle:
        lines = [line.split() for line in handle if line.strip() and not line.startswith("#")]
    assert lines[0] == ["dcuda-model", "1"], lines[0]
    for words in lines[1:]:
        values = {k: float(v) for k, v in (w.split("=") for w in words[3:])}
        if words[0] == "single":  # a list of pieces
            fits.setdefault((words[0], words[1], words[2]), []).append(values)
        elif words[0] == "concurrent":  # one per number of streams
            fits[(words[0], words[1], words[2], int(values["streams"]))] = values
        else:
            fits[(words[0], words[1], words[2])] = values
    return fits


def close(value, expected, tolerance):
    return abs(value - expected) <= tolerance * max(1.0, abs(expected))


failures = []


def check(condition, what):
    if not condition:
        failures.append(what)


with tempfile.TemporaryDirectory() as scratch:
    folder = os.path.join(scratch, "results")
    write(folder, results())
    model_file = os.path.join(scratch, "model.txt")
    code, out, err = run(folder, "--write", model_file)
    check(code == 0, f"exit status {code}: {err}")
    fits = read_model(model_file)
    for (path, initiator), (o, O, g, A, B) in FITS.items():
        L, G, S = PATHS[path]
        pieces = fits.get(("single", path, initiator))
        each = fits.get(("pipelined", path, initiator))
        check(pieces is not None and each is not None, f"{path} {initiator}: a fit is missing")
        if pieces is None or each is None:
            continue
        expected_pieces = [(0, o, O)]
        if (path, initiator) == ("peer", "device"):
            # Measured at 8 and 16 B: the second range holds everything above 8 B.
            expected_pieces.append((9,) + PEER_DEVICE_FROM_16)
        check(len(pieces) == len(expected_pieces), f"{path} {initiator}: pieces {pieces}")
        for one, (start, o_expected, O_expected) in zip(pieces, expected_pieces):
            check(one["from_bytes"] == start, f"{path} {initiator}: piece from {one['from_bytes']}")
            for key, expected in (("L_us", L), ("S_us", S), ("G_ns_per_byte", G)):
                check(close(one[key], expected, 1e-4), f"{path} {initiator}: {key} {one[key]} != {expected}")
            check(close(one["o_us"], o_expected, 1e-3), f"{path} {initiator}: o {one['o_us']} != {o_expected}")
            check(close(one["O_ns_per_byte"], O_expected, 1e-3),
                  f"{path} {initiator}: O {one['O_ns_per_byte']} != {O_expected}")
        check(close(each["g_us"], pipelined(path, initiator, 1 if initiator == "device" else 8), 1e-4),
              f"{path} {initiator}: g {each['g_us']}")
        check(close(each["B"], B, 1e-3), f"{path} {initiator}: B {each['B']} != {B}")
        check(close(each["A_ns_per_byte"], A, 1e-2), f"{path} {initiator}: A {each['A_ns_per_byte']} != {A}")
    check("Table I" in out and "Table II" in out, "the tables are not printed")
    table_one = out.split("Table II")[0].splitlines()
    single_rows = [line for line in table_one if line.startswith("  ")]
    check(len(single_rows) == 7, f"{len(single_rows)} single-message rows printed, not 7")
    check(sum(" 1.000" in line for line in single_rows) == 6, "a single-message R^2 is not 1.000:\n" + out)
    pipelined_rows = [line for line in out.splitlines() if line.startswith("  ") and "* m^" in line]
    check(len(pipelined_rows) == 5 and all(" 1.000" in line for line in pipelined_rows),
          "pipelined rows or their R^2:\n" + out)
    for (path, initiator), (o, O) in SINGLE_ONLY.items():
        pieces = fits.get(("single", path, initiator))
        check(pieces is not None and len(pieces) == 1 and close(pieces[0]["o_us"], o, 1e-3)
              and close(pieces[0]["O_ns_per_byte"], O, 1e-3),
              f"{path} {initiator}: single-message fit {pieces}, expected o {o} O {O}")
        check(fits.get(("pipelined", path, initiator)) is None,
              f"{path} {initiator}: a pipelined fit without a pipelined benchmark")
    not_fitted = [line for line in out.splitlines() if "not fitted" in line]
    check(not_fitted == ["# not fitted: network, host: no pipelined benchmark (single messages only)"],
          "everything with a benchmark is measured, yet something is not fitted:\n" + out)

    # Host puts from N streams at once: table III, and one concurrent line per N after each
    # pipelined line, in ascending N.
    table_three = out.split("Table III")[1].splitlines()[2:] if "Table III" in out else []
    concurrent_rows = [line.split() for line in table_three if line.startswith("  ")]
    expected_rows = [(path, streams) for path in sorted(CONCURRENT) for streams in sorted(CONCURRENT[path])]
    check([(row[0], int(row[2])) for row in concurrent_rows] == expected_rows,
          "table III rows:\n" + out)
    for row in concurrent_rows:
        if (row[0], int(row[2])) not in expected_rows:
            continue
        g, G, w = concurrent_expected(row[0], int(row[2]))
        sizes = len(CONCURRENT[row[0]][int(row[2])][2])
        check(row[1] == "host" and close(float(row[3]), g, 1e-3) and close(float(row[4]), G, 1e-3)
              and close(float(row[5]), w, 1e-3) and row[6] == "0.0%" and int(row[7]) == sizes,
              f"table III row {row}, expected g {g} G {G} w {w}")
    for path, counts in CONCURRENT.items():
        for streams in counts:
            g, G, w = concurrent_expected(path, streams)
            line = fits.get(("concurrent", path, "host", streams))
            check(line is not None and close(line["g_us"], g, 1e-6) and close(line["G_ns_per_byte"], G, 1e-6)
                  and close(line["wait_us"], w, 1e-6),
                  f"{path} host {streams} streams: concurrent line {line}, expected g {g} G {G} w {w}")
    with open(model_file, encoding="utf-8") as handle:
        lines = [line.split() for line in handle if line.strip() and not line.startswith("#")][1:]
    for path in CONCURRENT:
        # "single" per piece, "pipelined", then "concurrent streams=N" in ascending N.
        mine = [" ".join(words[:1] + words[3:4] * (words[0] == "concurrent")) for words in lines
                if words[1:3] == [path, "host"]]
        expected_lines = (["single"] * mine.count("single") + ["pipelined"]
                          + [f"concurrent streams={streams}" for streams in sorted(CONCURRENT[path])])
        check(mine == expected_lines, f"{path} host: the model file's lines {mine}, not {expected_lines}")
    check(not any(words[0] == "concurrent" and words[2] != "host" for words in lines),
          "a concurrent line for a device initiator")

    # Host messages never bound by their bytes (as 10,000 on one stream up to 64 KiB): no power
    # law, t(m) = max(g, G m).
    small = os.path.join(scratch, "small")
    write(small, results(host_sizes=(8, 1024, 65536)))
    code, out, _ = run(small, "--write", model_file)
    for path in ("same-gpu", "peer"):
        host = read_model(model_file)[("pipelined", path, "host")]
        check(code == 0 and "none (no byte-bound size)" in out and host["A_ns_per_byte"] == 0
              and host["B"] == 0, f"{path} host rate without byte-bound sizes: {host}\n{out}")

    # The host's batches of every size (MB/s) win over its message rate at three sizes: with the
    # message-rate tables twice as slow, the host's g, A and B are still the true ones.
    batches = os.path.join(scratch, "batches")
    benchmarks = results(with_host_bandwidth=True)
    for rate in benchmarks["host_stream_latency"]["tables"]:
        if rate["title"].startswith("message rate"):
            for row in rate["rows"]:
                row["dcuda"] *= 2
    write(batches, benchmarks)
    code, out, _ = run(batches, "--write", model_file)
    for path in HOST_BANDWIDTH_PLACES:
        A, B = FITS[(path, "host")][3:]
        g = pipelined(path, "host", 8)  # the smallest batch's time per message, as above
        host = read_model(model_file).get(("pipelined", path, "host"))
        check(code == 0 and host is not None and close(host["g_us"], g, 1e-4)
              and close(host["A_ns_per_byte"], A, 1e-2) and close(host["B"], B, 1e-3)
              and host["largest_bytes"] == SIZES[-1],
              f"{path} host from the batches of every size: {host}, expected g {g} A {A} B {B}\n{out}")

    # A pipelined table in a unit the tool does not read is refused, naming the unit.
    odd_unit = os.path.join(scratch, "odd_unit")
    for bandwidth in benchmarks["host_stream_bandwidth"]["tables"]:
        bandwidth["unit"] = "kB/s"
    write(odd_unit, benchmarks)
    code, _, err = run(odd_unit)
    check(code == 1 and "host_stream_bandwidth" in err and "'kB/s'" in err,
          f"a pipelined table in kB/s: status {code}, {err}")

    # Without the consistency tables S is 0 and said to be missing; o then holds it.
    bare = os.path.join(scratch, "bare")
    write(bare, results(with_consistency=False))
    code, out, _ = run(bare, "--write", model_file)
    check(code == 0 and "S n/a" in out, "missing S tables are not reported:\n" + out)
    fits = read_model(model_file)
    peer = fits[("single", "peer", "device")][0]
    check(peer["S_us"] == 0 and close(peer["o_us"], 0.2 + 0.4, 1e-3), f"S not folded into o: {peer}")

    # A path whose bandwidth table is missing is named, the others still fitted.
    partial = os.path.join(scratch, "partial")
    benchmarks = results()
    del benchmarks["local_bandwidth"]
    write(partial, benchmarks)
    code, out, _ = run(partial)
    check(code == 0 and "not fitted: same-gpu: no bandwidth table" in out, "missing table not named:\n" + out)

    # Without the concurrency benchmark: a line for each host path (none for the device), and no
    # concurrent line in the model file.
    no_streams = os.path.join(scratch, "no_streams")
    write(no_streams, results(with_concurrent=False))
    code, out, _ = run(no_streams, "--write", model_file)
    named = [line for line in out.splitlines() if "concurrent" in line and "not fitted" in line]
    check(code == 0 and named == [f"# not fitted: {path}, host: no concurrent table (host_stream_concurrency)"
                                  for path in ("same-gpu", "peer")],
          "a missing concurrency benchmark is not named for the host paths alone:\n" + out)
    check(not any(key[0] == "concurrent" for key in read_model(model_file)),
          "concurrent lines without a concurrency benchmark")

    # A concurrent table of a path without a single-message host fit is named and skipped; the
    # other path's still fitted.
    no_single = os.path.join(scratch, "no_single")
    benchmarks = results()
    title = TITLES[("same-gpu", "host")][1]
    benchmarks["host_stream_latency"]["tables"] = [t for t in benchmarks["host_stream_latency"]["tables"]
                                                   if t["title"] != title]
    write(no_single, benchmarks)
    code, out, _ = run(no_single, "--write", model_file)
    fits = read_model(model_file)
    check(code == 0 and "not fitted: same-gpu, host: no single-message fit for the concurrent fit" in out
          and "not fitted: peer, host: no" not in out, "a concurrent table without its single fit:\n" + out)
    check(not any(key[:2] == ("concurrent", "same-gpu") for key in fits)
          and all(("concurrent", "peer", "host", streams) in fits for streams in CONCURRENT["peer"]),
          f"concurrent lines with the same GPU's single-message host table missing: {sorted(fits)}")

    # Without the stream-wait table: named for each host path, and every wait 0.
    no_waits = os.path.join(scratch, "no_waits")
    benchmarks = results()
    benchmarks["host_stream_concurrency"]["tables"] = [
        t for t in benchmarks["host_stream_concurrency"]["tables"] if not t["title"].startswith("stream waits")]
    write(no_waits, benchmarks)
    code, out, _ = run(no_waits, "--write", model_file)
    fits = read_model(model_file)
    waits = [values["wait_us"] for key, values in fits.items() if key[0] == "concurrent"]
    check(code == 0 and all(f"not fitted: {path}, host: no stream-wait table" in out for path in CONCURRENT)
          and waits and not any(waits), "a missing stream-wait table:\n" + out)

    # A concurrent table whose weighted fit has a negative intercept (peer, 4 streams: t = 1 ns per
    # byte * m - 0.5 us): g 0 and G refitted through the origin with the same weights 1/t^2,
    # sum(m / t) / sum(m^2 / t^2) = 0.725985 ns per byte, median error 27.4%. One whose time falls
    # with the size (peer, 64 streams: 3, 2.5, 2 us): the smallest message's time, G 0, errors 0,
    # 20% and 50%.
    intercept = os.path.join(scratch, "intercept")
    benchmarks = results()
    steep = [(m, m * 1e-3 - 0.5) for m in (1024, 65536, 1 << 20, 4 << 20)]
    falling = [(8, 3.0), (1024, 2.5), (65536, 2.0)]
    for streams, rows in ((4, steep), (64, falling)):
        title = (f"host-initiated puts from {streams} streams at once (dcuda_put_notify_on_stream), "
                 f"time per message, {CONCURRENT_PLACES['peer']}")
        tables = [t for t in benchmarks["host_stream_concurrency"]["tables"] if t["title"] == title]
        check(len(tables) == 1, f"no table '{title}' to change")
        for changed in tables:
            changed["rows"] = table(title, "cudaMemcpyAsync", "us", [(m, t, 2.5) for m, t in rows])["rows"]
    write(intercept, benchmarks)
    code, out, _ = run(intercept, "--write", model_file)
    fits = read_model(model_file)
    through_origin = (sum(m / t for m, t in steep) / sum((m / t) ** 2 for m, t in steep)) * 1e3
    check(close(through_origin, 0.725985, 1e-6), f"the origin fit by hand: {through_origin}")
    four = fits.get(("concurrent", "peer", "host", 4))
    check(code == 0 and four is not None and four["g_us"] == 0
          and close(four["G_ns_per_byte"], 0.725985, 1e-6),
          f"a negative intercept: g 0 and G through the origin 0.725985, not {four}\n{out}")
    sixty_four = fits.get(("concurrent", "peer", "host", 64))
    check(sixty_four is not None and sixty_four["g_us"] == 3.0 and sixty_four["G_ns_per_byte"] == 0,
          f"a time that falls with the size: g 3 (the smallest message's) and G 0, not {sixty_four}")
    rows = [line.split() for line in out.split("Table III")[-1].splitlines() if line.startswith("  peer")]
    check(["peer", "host", "4", "0.000", "0.7260", "1.500", "27.4%", "4"] in rows
          and ["peer", "host", "64", "3.000", "0.0000", "1.600", "20.0%", "3"] in rows,
          f"table III with the refitted rows: {rows}")
    g, G, _ = concurrent_expected("peer", 1)
    one = fits.get(("concurrent", "peer", "host", 1))
    check(one is not None and close(one["g_us"], g, 1e-6) and close(one["G_ns_per_byte"], G, 1e-6),
          f"a table with a positive intercept is fitted as before: {one}")

    # Nothing usable, and a broken file: errors.
    empty = os.path.join(scratch, "empty")
    os.makedirs(empty)
    code, _, err = run(empty)
    check(code == 1 and "no benchmark JSON found" in err, f"empty folder: {code} {err}")
    # An empty folder first (a run that measured nothing the model needs): the others fit.
    code, out, _ = run(empty, folder)
    check(code == 0 and "Table I" in out, f"an empty folder before a full one: {code}\n{out}")
    # A single-message table of one size, and a consistency table without rows: errors, no crash.
    odd = os.path.join(scratch, "odd")
    benchmarks = results()
    benchmarks["local_latency"]["tables"][0]["rows"] = benchmarks["local_latency"]["tables"][0]["rows"][:1]
    write(odd, benchmarks)
    code, _, err = run(odd)
    check(code == 1 and "has 1 size(s)" in err and "Traceback" not in err, f"one size: {code} {err}")
    benchmarks = results()
    benchmarks["remote_latency"]["tables"][-1]["rows"] = []
    write(odd, benchmarks)
    code, _, err = run(odd)
    check(code == 1 and "no finite dcuda and reference" in err and "Traceback" not in err,
          f"empty consistency table: {code} {err}")
    with open(os.path.join(scratch, "broken.json"), "w", encoding="utf-8") as handle:
        handle.write("{not json")
    code, _, err = run(os.path.join(scratch, "broken.json"))
    check(code == 1 and "broken.json" in err, f"broken file: {code} {err}")
    unrelated = os.path.join(scratch, "unrelated")
    write(unrelated, {"barrier_latency": {"benchmark": "barrier_latency", "tables": []}})
    code, _, err = run(unrelated)
    check(code == 1 and "nothing could be fitted" in err, f"unrelated results: {code} {err}")

for failure in failures:
    print("FAIL:", failure)
print(f"dcuda_model_test: {'FAILED' if failures else 'passed'}")
sys.exit(1 if failures else 0)
