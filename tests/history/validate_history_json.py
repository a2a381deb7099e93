#!/usr/bin/env python3
# Validates real history entries against schemas/history.schema.json with python3-jsonschema:
# records the report fixture's bench.json, and a counted.json written here, with `ropecheck history
# add` (commit and date given, so no git is needed) and checks the files it wrote; then checks that
# the schema has teeth (an entry without its commit, with a zero sample, a counted entry without
# its cycle model or with a timed case, is rejected). Registered as the ctest history_entry_schema.
#   /usr/bin/python3 tests/history/validate_history_json.py \
#       build/ropecheck schemas/history.schema.json tests/reports/data /tmp/x
import copy
import json
import pathlib
import shutil
import subprocess
import sys

import jsonschema


# A counted run as `ropecheck count` writes it (bench/format/counted_json.h), two cases.
COUNTED_RUN = {
    "schema": "ropecheck.counted/1", "started": "2026-11-25T16:00:00Z", "cpu_model": "Some host CPU",
    "valgrind": "valgrind-3.19.0", "simulated_caches": "I1 32 KiB 8-way, D1 32 KiB 8-way, LL 8 MiB 16-way",
    "counted_isa": "avx2", "isa_note": "Valgrind runs no AVX-512",
    "cycle_model": {"l1_miss_cycles": 8, "ll_miss_cycles": 60}, "ropecheck_commit": "0123456",
    "cases": [{"name": f"kernel/avx2/case{k}", "calls": 10,
               "totals": {"Ir": 1000000 * (k + 1), "Dr": 300000, "Dw": 100000, "I1mr": 10, "D1mr": 2000,
                          "D1mw": 500, "ILmr": 5, "DLmr": 100, "DLmw": 20}} for k in range(2)],
}


def record(ropecheck, history, run_dir):
    """`history add` of run_dir into history; the files written, or None after printing why."""
    command = [ropecheck, "history", "add", "--dir", str(history), "--commit", "0123456789abcdef",
               "--commit-date", "2026-11-25T17:29:13+01:00", "--branch", "main", str(run_dir)]
    run = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if run.returncode != 0:
        print(f"{' '.join(command)} exited {run.returncode}\n{run.stdout}{run.stderr}")
        return None
    return sorted(history.rglob("*.json"))


def schema_errors(validator, document, name):
    errors = list(validator.iter_errors(document))
    for error in errors:
        print(f"{name}: /{'/'.join(map(str, error.absolute_path))}: {error.message}")
    return errors


def main() -> int:
    ropecheck, schema_path, run_dir, work = sys.argv[1], pathlib.Path(sys.argv[2]), sys.argv[3], pathlib.Path(sys.argv[4])
    schema = json.loads(schema_path.read_text())
    validator_class = jsonschema.validators.validator_for(schema)
    validator_class.check_schema(schema)
    validator = validator_class(schema)
    shutil.rmtree(work, ignore_errors=True)
    history = work / "history"
    files = record(ropecheck, history, run_dir)
    if files is None:
        return 1
    if len(files) != 1:
        print(f"expected one entry under {history}, found {files}")
        return 1
    document = json.loads(files[0].read_text())
    errors = schema_errors(validator, document, "timed")
    print(f"{files[0].relative_to(history)}: {len(document['cases'])} cases, {len(errors)} schema errors")
    counted_dir = work / "counted"
    counted_dir.mkdir(parents=True)
    (counted_dir / "counted.json").write_text(json.dumps(COUNTED_RUN))
    counted_files = record(ropecheck, work / "counted-history", counted_dir)
    if counted_files is None or len(counted_files) != 1:
        print(f"expected one counted entry, found {counted_files}")
        return 1
    counted = json.loads(counted_files[0].read_text())
    errors += schema_errors(validator, counted, "counted")
    print(f"{counted_files[0].relative_to(work / 'counted-history')}: {len(counted['cases'])} counted cases")
    # The schema must be able to fail.
    broken = copy.deepcopy(document)
    del broken["commit"]
    zero = copy.deepcopy(document)
    zero["cases"][0]["real_time_ns"][0] = 0
    no_model = copy.deepcopy(counted)
    del no_model["counted"]["cycle_model"]
    mixed = copy.deepcopy(counted)
    mixed["cases"][0] = document["cases"][0]
    cases = (("no commit", broken), ("a zero sample", zero), ("a counted run without its cycle model", no_model),
             ("a timed case in a counted entry", mixed))
    teeth = [name for name, doc in cases if validator.is_valid(doc)]
    for name in teeth:
        print(f"the schema accepts an entry with {name}")
    return 1 if errors or teeth else 0


if __name__ == "__main__":
    sys.exit(main())
