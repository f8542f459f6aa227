#!/usr/bin/env python3
"""loops.py FILE.sass FUNCTION [v]: the innermost point loops of a function's SASS (a backward
branch whose body holds double-precision arithmetic): instructions per point, the vector and
uniform registers the body names, and its local-memory accesses (spills). With v, the body too."""
import re
import sys

text = open(sys.argv[1]).read()
for function in re.split(r'\n\s*Function : ', text)[1:]:
    name = function.split('\n', 1)[0]
    if sys.argv[2] not in name:
        continue
    code = [(int(m.group(1), 16), m.group(2).strip())
            for m in re.finditer(r'/\*([0-9a-f]{4,})\*/\s+(.*?);', function)]
    index = {address: i for i, (address, _) in enumerate(code)}
    print('==', name[:100], len(code), 'instructions')
    for i, (address, instruction) in enumerate(code):
        branch = re.search(r'BRA (?:`\(\.L_x_\d+\) )?0x([0-9a-f]+)', instruction)
        if not branch:
            continue
        target = int(branch.group(1), 16)
        if target >= address or target not in index:
            continue
        body = code[index[target]:i + 1]
        if len(body) >= 400 or not any('DADD' in b or 'DFMA' in b for _, b in body):
            continue
        words = ' '.join(b for _, b in body)
        vector = sorted({int(r) for r in re.findall(r'\bR(\d+)\b', words)})
        uniform = sorted({int(r) for r in re.findall(r'\bUR(\d+)\b', words)})
        local = sum(1 for _, b in body if 'LDL' in b or 'STL' in b)
        print(f' loop {target:#x}-{address:#x}: {len(body)} ins, R used {vector}, '
              f'UR {uniform}, local {local}')
        if len(sys.argv) > 3:
            for a, b in body:
                print(f'   {a:#06x} {b}')
