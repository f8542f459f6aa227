"""CPU test of scripts/check_leftovers.py: it finds each kind of leftover in a made-up
repository, spares the same words in CHANGELOG.md and recorded results, and passes a clean one."""
import os
import subprocess
import sys
import tempfile

script = sys.argv[1]


def check(files):
    with tempfile.TemporaryDirectory() as root:
        subprocess.run(["git", "init", "-q", root], check=True)
        for path, text in files.items():
            full = os.path.join(root, path)
            os.makedirs(os.path.dirname(full), exist_ok=True)
            with open(full, "w", encoding="utf-8") as handle:
                handle.write(text)
        subprocess.run(["git", "-C", root, "add", "-A"], check=True)
        result = subprocess.run([sys.executable, script, root], capture_output=True, text=True)
        return result.returncode, result.stdout


failures = 0
checks = 0


def expect(name, condition, output):
    global failures, checks
    checks += 1
    if not condition:
        failures += 1
        print(f"FAILED: {name}\n{output}")


clean = {"README.md": "dcuda: one persistent kernel per GPU; 0x1f2e3d4c is a constant.\n",
         "src/a.cpp": "int x = 0xdeadbeef;  // ticket 4 of the ring, lap 2\n"}
code, out = check(clean)
expect("clean repository passes", code == 0 and "none" in out, out)

for name, files, expected in [
    ("tracker number in docs", {"docs/a.md": "Done in issue 4.\n"}, "tracker number"),
    ("tracker number in a test name", {"tests/CMakeLists.txt": "add_test(NAME issue_12_case)\n"},
     "tracker number"),
    ("commit hash in prose", {"docs/a.md": "Measured at 3ab0cfa on one GPU.\n"}, "commit hash"),
    ("commit hash in a comment", {"src/a.cu": "// slower since 85b22c3\nint y;\n"}, "commit hash"),
    ("commit hash outside a table's commit column",
     {"docs/a.md": "| figure | commit | value |\n| --- | --- | --- |\n| x | 3ab0cfa | 85b22c3 |\n"},
     "commit hash"),
    ("commit hash after a table with a commit column",
     {"docs/a.md": "| figure | commit |\n| --- | --- |\n| x | 3ab0cfa |\n\nSince 85b22c3 it is.\n"},
     "commit hash"),
    ("path outside the repository", {"README.md": "See ../shared/reference/x.txt\n"},
     "path outside"),
    ("remark about machines", {"scripts/a.sh": "# the 4-GPU kind was withheld\n"}, "machines"),
]:
    code, out = check(files)
    expect(name, code == 1 and expected in out, out)

code, out = check({"CHANGELOG.md": "## 0.1.0\n- issue 3: several GPUs (5c07554)\n",
                   "bench/results/h100/x.json": '{"commit": "5c07554"}\n'})
expect("history and recorded results are exempt", code == 0, out)

code, out = check({"docs/a.md": "| figure | commit | value |\n| --- | --- | --- |\n"
                                "| x | 3ab0cfa | 1.2 us |\n"})
expect("a table's commit column is data", code == 0, out)

print(f"{checks - failures} passed, {failures} failed")
sys.exit(1 if failures else 0)
