#!/usr/bin/env python3
"""Runs the call form NumPy port of docs/porting.md exactly as printed there, so that the example
cannot rot: takes the ```python block after the line `<!-- numpy-form-port-example -->`, writes
the golden vectors with `ropecheck vectors`, runs the block on them, and requires
`ropecheck check --kind rope_form` to pass every rope_form case (exit 0, no FAIL, no MISSING).
Then changes one element of v in one case's buffer and requires `check` to fail that case, naming
v (exit 1): the harness can fail too.

Usage: run_form_porting_example.py ROPECHECK PORTING_MD WORKDIR     (exit 0 ok, 1 not)
Needs python3-numpy (scripts/install-deps.sh).
"""
import json
import pathlib
import re
import shutil
import subprocess
import sys

import numpy as np

MARKER = "<!-- numpy-form-port-example -->"


def example_block(markdown):
    after = markdown.split(MARKER, 1)
    if len(after) != 2:
        raise SystemExit(f"no '{MARKER}' line in the porting guide")
    block = re.search(r"```python\n(.*?)```", after[1], re.S)
    if block is None:
        raise SystemExit(f"no ```python block after '{MARKER}'")
    return block.group(1)


def check(ropecheck, vectors, out):
    return subprocess.run([ropecheck, "check", "--vectors", str(vectors), "--outputs", str(out), "--kind", "rope_form"],
                          capture_output=True, text=True)


def main(argv):
    ropecheck, guide, work = argv[1], pathlib.Path(argv[2]), pathlib.Path(argv[3])
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    script = work / "numpy_form_port.py"
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

    # One element of v (a region of a packed qkv case) changed: that case must fail, naming v.
    manifest = json.loads((vectors / "manifest.json").read_text())
    case = next(c for c in manifest["cases"]
                if c["kind"] == "rope_form" and any(r["name"] == "v" for r in c["call"]["regions"]))
    v = next(r for r in case["call"]["regions"] if r["name"] == "v")
    buffer_out = out / case["name"] / "buffer_out.npy"
    values = np.load(buffer_out)
    if values.dtype == np.uint16:  # bf16 bits: the lowest one flipped
        values[v["offset"]] ^= np.uint16(1)
    else:
        values[v["offset"]] = values[v["offset"]] * 2 + 1
    np.save(buffer_out, values)
    broken = check(ropecheck, vectors, out)
    if broken.returncode != 1 or not re.search(rf"FAIL +{re.escape(case['name'])} ", broken.stdout) \
            or "first wrong: v (token 0, head 0, feature 0)" not in broken.stdout:
        failures.append(f"a changed v element of {case['name']} did not fail naming v (exit {broken.returncode}):\n"
                        f"{broken.stdout}")
    for failure in failures:
        print("FAIL", failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
