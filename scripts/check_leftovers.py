#!/usr/bin/env python3
"""Finds text that speaks about how dcuda was made rather than about dcuda.

The repository speaks to its users about dcuda alone: tracker numbers, commit hashes in prose,
remarks about which machines were available, and paths outside the repository belong in
CHANGELOG.md and git, not in README, docs, code comments, scripts or test names. A Markdown
table may name commits in a column headed "commit" (measurements with their history): that column
is data, not prose.

Usage: check_leftovers.py [ROOT]   (default: the repository this script lives in)
Prints each finding as PATH:LINE: TEXT and exits 1 if there is any.
"""
import os
import re
import subprocess
import sys

# Files whose job is history, and recorded results (their JSON and logs carry the commit they
# measured, their READMEs record how each run was made).
EXEMPT = [
    re.compile(r"^CHANGELOG\.md$"),
    re.compile(r"^bench/results/"),
    re.compile(r"^docs/img/"),
    re.compile(r"^scripts/check_leftovers\.py$"),
    re.compile(r"^tests/scripts/check_leftovers_test\.py$"),
]

TEXT_SUFFIXES = (".md", ".h", ".cuh", ".cu", ".cpp", ".hpp", ".c", ".py", ".sh", ".cmake",
                 ".txt", ".in", ".cff", ".args", ".yml", ".yaml", "")

# Patterns that are wrong anywhere in a file.
ANYWHERE = [
    ("tracker number", re.compile(r"\bissues?[\s_-]*#?\d+", re.IGNORECASE)),
    ("tracker number", re.compile(r"(?<![\w&])#\d{1,4}\b(?!\s*(include|define|pragma))")),
    ("path outside the repository", re.compile(r"\.\./shared\b|/work/|shared/reference|\bDESIGN\.md\b")),
    ("remark about the machines at hand",
     re.compile(r"\b(device[- ]minutes?|device time|lent|withheld|no GPU time|"
                r"(this|next|earlier|previous|last) session)\b", re.IGNORECASE)),
]

# A commit hash written in prose: 7 to 12 hex digits with at least one letter and one digit.
# Checked in Markdown files and in comments only (code has hex constants and identifiers).
HASH = re.compile(r"(?<![\w.#/-])(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{7,12}(?![\w-])")
COMMENT = re.compile(r"(//|#|/\*|^\s*\*)(.*)$")


def tracked_files(root):
    listing = subprocess.run(["git", "-C", root, "ls-files"], check=True, capture_output=True,
                             text=True).stdout
    return [path for path in listing.splitlines() if path]


def cells(line):
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


def findings_in(path, text):
    prose = path.endswith(".md") or path.endswith(".cff")
    commit_column = None  # in a Markdown table with a "commit" column: its index
    for number, line in enumerate(text.splitlines(), start=1):
        for what, pattern in ANYWHERE:
            if pattern.search(line):
                yield number, what, line
        if prose:
            searched = line
            # A table of measurements may name the commit of each in a column of its own: data,
            # not prose (docs/performance.md keeps the history of its headline figures so).
            if not line.lstrip().startswith("|"):
                commit_column = None
            elif commit_column is None and "commit" in [c.lower() for c in cells(line)]:
                commit_column = [c.lower() for c in cells(line)].index("commit")
            elif commit_column is not None:
                row = cells(line)
                if commit_column < len(row):
                    row[commit_column] = ""
                searched = " | ".join(row)
        else:
            comment = COMMENT.search(line)
            searched = comment.group(2) if comment else ""
        if HASH.search(searched):
            yield number, "commit hash in prose", line


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(
        os.path.dirname(os.path.abspath(__file__)))
    count = 0
    for path in tracked_files(root):
        if any(pattern.search(path) for pattern in EXEMPT):
            continue
        if not path.endswith(TEXT_SUFFIXES) and os.path.basename(path) not in ("run", "LICENSE"):
            continue
        full = os.path.join(root, path)
        if not os.path.isfile(full):
            continue
        try:
            with open(full, encoding="utf-8") as handle:
                text = handle.read()
        except UnicodeDecodeError:
            continue
        # Test names are strings in code: they are covered because every line is scanned for
        # the ANYWHERE patterns.
        for number, what, line in findings_in(path, text):
            print(f"{path}:{number}: {what}: {line.strip()[:160]}")
            count += 1
    if count:
        print(f"check_leftovers: {count} finding(s)")
        return 1
    print("check_leftovers: none")
    return 0


if __name__ == "__main__":
    sys.exit(main())
