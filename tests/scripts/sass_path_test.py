#!/usr/bin/env python3
"""scripts/sass_path.py on a hand-made cuobjdump listing of two functions: the control bits of each
instruction must decode as encoded, `--function` must pick the named function, and `cost` must sum
the stall cycles and count the loads of the ranges given."""
import contextlib
import importlib.util
import io
import os
import sys
import tempfile

spec = importlib.util.spec_from_file_location("sass_path", sys.argv[1])
sass = importlib.util.module_from_spec(spec)
spec.loader.exec_module(sass)


def high_word(stall, yield_bit, write, read, wait_mask):
    return stall << 41 | yield_bit << 45 | write << 46 | read << 49 | wait_mask << 52


def line(offset, text, high):
    return (f"        /*{offset:04x}*/                   {text} ;   /* 0x000000080a047981 */\n"
            f"                                                  /* 0x{high:016x} */\n")


listing = "\t\tFunction : other_kernel\n" + line(0x10, "NOP", high_word(1, 0, 7, 7, 0))
listing += "\t\tFunction : _Z14latency_kernelv\n"
listing += line(0x10, "LDG.E.128.STRONG.SYS R4, desc[UR8][R10.64]", high_word(1, 1, 5, 0, 0))
listing += line(0x20, "IMAD.IADD R20, R15, 0x1, -R18", high_word(5, 0, 7, 7, 0b000100))
listing += line(0x30, "ISETP.GT.AND P0, PT, R20, -0x1, PT", high_word(13, 0, 7, 7, 0))
listing += line(0x40, "@P0 LDS R3, [R2+0x5c0]", high_word(4, 1, 0, 7, 0b100001))

failures = []
with tempfile.TemporaryDirectory() as directory:
    path = os.path.join(directory, "kernel.sass")
    with open(path, "w") as f:
        f.write(listing)
    chosen = sass.read_instructions(path, "latency_kernel")
    if sorted(chosen) != [0x10, 0x20, 0x30, 0x40]:
        failures.append(f"--function latency_kernel kept offsets {sorted(chosen)}")
    else:
        expected = {0x10: (1, 1, 5, 0, []), 0x20: (5, 0, 7, 7, [2]), 0x30: (13, 0, 7, 7, []),
                    0x40: (4, 1, 0, 7, [0, 5])}
        for offset, (stall, yield_bit, write, read, wait) in expected.items():
            control = chosen[offset][0]
            got = (control["stall"], control["yield"], control["write"], control["read"],
                   control["wait"])
            if got != (stall, yield_bit, write, read, wait):
                failures.append(f"{offset:x}: decoded {got}, encoded {stall, yield_bit, write, read, wait}")
    first = sass.read_instructions(path, None)
    if sorted(first) != [0x10] or "NOP" not in first[0x10][1]:
        failures.append(f"without --function the first function should be read, got {first}")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        sass.cost(chosen, ["10-20", "30-40"])
    text = out.getvalue()
    for want in ("10-20: 2 instructions, 6 stall cycles, 1 loads",
                 "30-40: 2 instructions, 17 stall cycles, 1 loads",
                 "total: 4 instructions, 23 stall cycles"):
        if want not in text:
            failures.append(f"cost output lacks '{want}':\n{text}")

if failures:
    print("FAIL: " + "\n".join(failures))
    sys.exit(1)
print("sass_path: decoding, --function and cost as constructed")
