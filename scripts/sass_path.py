#!/usr/bin/env python3
"""Reads `cuobjdump -sass` output with its control codes: what a path through a kernel costs.

Each SASS instruction of sm_90 comes with scheduling bits that ptxas set (the high word of its
encoding): the stall cycles before the next instruction may issue, the scoreboard it sets when it
writes its result late (loads, atomics) and the scoreboards it waits on. Summed over a path, the
stall cycles are the least that path costs one thread, before any memory latency; the waits show
where it stops for a load. This is how the peer latency's fast paths were found
(bench/results/h200x2/experiments/peer-fast-paths/README.md).

  cuobjdump -sass build/bench/remote_latency > rl.sass   (cuobjdump: see docs/performance.md)
  scripts/sass_path.py rl.sass show 10900 10c00          instructions with their control codes
  scripts/sass_path.py rl.sass cost 10990-109e0 10a20-10bc0
                                                         instructions, stall cycles and loads of
                                                         each address range (a path's straight
                                                         pieces, as the branches take it)

Addresses are the hexadecimal offsets cuobjdump prints (/*10900*/). A file with several kernels
holds several functions at the same offsets: cut out the one you want first (`--function NAME`
keeps the first function whose name contains NAME).
"""
import argparse
import re
import sys

INSTRUCTION = re.compile(r"\s*/\*([0-9a-f]{4,})\*/\s*(.*?);?\s*/\* (0x[0-9a-f]+) \*/")
ENCODING = re.compile(r"/\* (0x[0-9a-f]+) \*/")


def read_instructions(path, function):
    """{offset: (control bits, text)} of the first function (or the one named)."""
    lines = open(path).read().split("\n")
    instructions = {}
    inside = function is None
    started = False
    i = 0
    while i < len(lines):
        line = lines[i]
        if "Function :" in line:
            if started and inside:
                break
            inside = function is None or function in line
            started = True
        match = INSTRUCTION.match(line) if inside else None
        if match and i + 1 < len(lines):
            high = int(ENCODING.search(lines[i + 1]).group(1), 16)
            control = {
                "stall": (high >> 41) & 0xF,
                "yield": (high >> 45) & 1,
                "write": (high >> 46) & 7,
                "read": (high >> 49) & 7,
                "wait": [b for b in range(6) if (high >> 52) >> b & 1],
            }
            instructions[int(match.group(1), 16)] = (control, re.sub(r"  +", " ", match.group(2)))
            i += 2
            continue
        i += 1
    return instructions


def describe(control):
    write = control["write"] if control["write"] != 7 else "-"
    read = control["read"] if control["read"] != 7 else "-"
    return f"S{control['stall']:02d} {'Y' if control['yield'] else '-'} W{write} R{read} wait{control['wait']}"


def show(instructions, first, last):
    for offset in sorted(instructions):
        if first <= offset <= last:
            control, text = instructions[offset]
            print(f"{offset:05x} {describe(control):32s} {text}")


def cost(instructions, ranges):
    total_count = total_stall = 0
    for piece in ranges:
        first, last = (int(x, 16) for x in piece.split("-"))
        offsets = [o for o in sorted(instructions) if first <= o <= last]
        stall = sum(instructions[o][0]["stall"] for o in offsets)
        loads = sum(1 for o in offsets if re.match(r"(@!?P\d )?(LD|LDS|LDG|ATOM)", instructions[o][1]))
        print(f"{piece}: {len(offsets)} instructions, {stall} stall cycles, {loads} loads")
        total_count += len(offsets)
        total_stall += stall
    print(f"total: {total_count} instructions, {total_stall} stall cycles")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("sass")
    parser.add_argument("command", choices=["show", "cost"])
    parser.add_argument("arguments", nargs="+")
    parser.add_argument("--function", default=None)
    options = parser.parse_args()
    instructions = read_instructions(options.sass, options.function)
    if not instructions:
        sys.exit(f"{options.sass}: no SASS instructions found")
    if options.command == "show":
        if len(options.arguments) != 2:
            sys.exit("show needs FIRST LAST (hexadecimal offsets)")
        show(instructions, int(options.arguments[0], 16), int(options.arguments[1], 16))
    else:
        cost(instructions, options.arguments)


if __name__ == "__main__":
    main()
