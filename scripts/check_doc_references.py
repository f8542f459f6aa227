#!/usr/bin/env python3
"""Checks that every place that cites a section of the docs names one that exists.

Code comments and docs cite sections as  docs/design.md, "Peer rings"  or
docs/design.md "Peer rings"  (a file of the repository, then a heading's text in quotes). Each
cited file must exist and hold a heading (a Markdown line starting with #, or a paragraph that
opens with the text in bold) with that text.
Paths to files and folders of the repository written as `bench/results/...` in the docs are not
checked here.

Usage: check_doc_references.py [ROOT]. Prints each broken citation; exits 1 if there is any.
"""
import os
import re
import subprocess
import sys

CITATION = re.compile(r'((?:docs|bench|examples)/[\w./-]+\.md),?\s+"([^"\n]+)"')
HEADING = re.compile(r"^#+\s+(.*?)\s*$")
# A paragraph may open with its name in bold ("**Peer rings** (...): ..."), cited like a heading.
BOLD_LEAD = re.compile(r"^(?:[-*]\s+)?\*\*(.+?)\*\*")


def headings(path, cache={}):
    if path not in cache:
        found = set()
        with open(path, encoding="utf-8") as handle:
            for line in handle:
                match = HEADING.match(line)
                if not match:
                    match = BOLD_LEAD.match(line)
                if match:
                    text = match.group(1).strip().rstrip(".:")
                    found.add(text)
                    found.add(text.replace("`", ""))
        cache[path] = found
    return cache[path]


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(
        os.path.dirname(os.path.abspath(__file__)))
    files = subprocess.run(["git", "-C", root, "ls-files"], check=True, capture_output=True,
                           text=True).stdout.split()
    broken = 0
    for name in files:
        if name.startswith("bench/results/") or name == "CHANGELOG.md":
            continue
        if not name.endswith((".md", ".h", ".cuh", ".cu", ".cpp", ".py", ".sh", ".txt", ".cmake")):
            continue
        full = os.path.join(root, name)
        if not os.path.isfile(full):
            continue
        with open(full, encoding="utf-8", errors="replace") as handle:
            text = handle.read()
        # Comments wrap lines: join a comment's continuation before matching.
        joined = re.sub(r"\n\s*(//|#)\s*", " ", text)
        for cited, section in CITATION.findall(joined):
            target = os.path.join(root, cited)
            if not os.path.isfile(target):
                print(f"{name}: cites {cited}, which does not exist")
                broken += 1
            elif section.strip() not in headings(target):
                print(f'{name}: cites {cited}, "{section}", which has no such heading')
                broken += 1
    print(f"check_doc_references: {broken} broken citation(s)")
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
