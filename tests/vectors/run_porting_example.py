#!/usr/bin/env python3
"""Runs the NumPy port of docs/porting.md exactly as printed there, so that the example cannot rot:
takes the ```python block after the line `<!-- numpy-port-example -->`, writes the golden
vectors with `ropecheck vectors`, runs the block on them, and requires `ropecheck check` to pass
every RoPE case (exit 0, no FAIL, no MISSING). Then moves one output element by a thousandth and
requires `check` to fail that case (exit 1): the harness can fail too.

Usage: run_porting_example.py ROPECHECK PORTING_MD WORKDIR     (exit 0 ok, 1 not)
Needs python3-numpy (scripts/install-deps.sh).
"""
import json
import pathlib
import re
import shutil
import subprocess
import sys

import numpy as np

MARKER = "<!-- numpy-port-example -->"


def example_block(markdown):
    after = markdown.split(MARKER, 1)
    if len(after) != 2:
        raise SystemExit(f"no '{MARKER}' line in the porting guide")
    block = re.search(r"```python\n(.*?)```", after[1], re.S)
    if block is None:
        raise SystemExit(f"no ```python block after '{MARKER}'")
    return block.group(1)


def check(ropecheck, vectors, out):
    return subprocess.run([ropecheck, "check", "--vectors", str(vectors), "--outputs", str(out)],
                          capture_output=True, text=True)


def main(argv):
    ropecheck, guide, work = argv[1], pathlib.Path(argv[2]), pathlib.Path(argv[3])
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    script = work / "numpy_rope_port.py"
    script.write_text(example_block(guide.read_text()))
    vectors, out = work / "golden", work / "out"
    subprocess.run([ropecheck, "vectors", "--out", str(vectors)], check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    subprocess.run([sys.executable, str(script), str(vectors), str(out)], check=True)
    run = check(ropecheck, vectors, out)
    print(run.stdout, run.stderr)
    failures = []
    if run.returncode != 0 or "FAIL" in run.stdout or "MISSING" in run.stdout:
        failures.append(f"ropecheck check exited {run.returncode} on the example's outputs")

    # One element of one case a thousandth off: that case must fail.
    manifest = json.loads((vectors / "manifest.json").read_text())
    name = next(c["name"] for c in manifest["cases"] if c["dtype"] == "fp32" and c["kind"] == "rope")
    q_out = out / name / "q_out.npy"
    values = np.load(q_out)
    values.flat[0] += np.float32(1e-3)
    np.save(q_out, values)
    broken = check(ropecheck, vectors, out)
    if broken.returncode != 1 or not re.search(rf"FAIL +{re.escape(name)} ", broken.stdout):
        failures.append(f"a perturbed {name} did not fail (exit {broken.returncode}):\n{broken.stdout}")
    for failure in failures:
        print("FAIL", failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
