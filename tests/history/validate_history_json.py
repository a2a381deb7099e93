#!/usr/bin/env python3
# Validates a real history entry against schemas/history.schema.json with python3-jsonschema:
# records the report fixture's bench.json with `ropecheck history add` (commit and date given, so
# no git is needed) and checks the file it wrote; then checks that the schema has teeth (an entry
# without its commit, or with a zero sample, is rejected). Registered as the ctest
# history_entry_schema.
#   /usr/bin/python3 tests/history/validate_history_json.py \
#       build/ropecheck schemas/history.schema.json tests/reports/data /tmp/x
import copy
import json
import pathlib
import shutil
import subprocess
import sys

import jsonschema


def main() -> int:
    ropecheck, schema_path, run_dir, work = sys.argv[1], pathlib.Path(sys.argv[2]), sys.argv[3], pathlib.Path(sys.argv[4])
    schema = json.loads(schema_path.read_text())
    validator_class = jsonschema.validators.validator_for(schema)
    validator_class.check_schema(schema)
    validator = validator_class(schema)
    shutil.rmtree(work, ignore_errors=True)
    history = work / "history"
    command = [ropecheck, "history", "add", "--dir", str(history), "--commit", "0123456789abcdef",
               "--commit-date", "2026-11-25T17:29:13+01:00", "--branch", "main", run_dir]
    run = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if run.returncode != 0:
        print(f"{' '.join(command)} exited {run.returncode}\n{run.stdout}{run.stderr}")
        return 1
    files = sorted(history.rglob("*.json"))
    if len(files) != 1:
        print(f"expected one entry under {history}, found {files}")
        return 1
    document = json.loads(files[0].read_text())
    errors = list(validator.iter_errors(document))
    for error in errors:
        print(f"/{'/'.join(map(str, error.absolute_path))}: {error.message}")
    print(f"{files[0].relative_to(history)}: {len(document['cases'])} cases, {len(errors)} schema errors")
    # The schema must be able to fail.
    broken = copy.deepcopy(document)
    del broken["commit"]
    zero = copy.deepcopy(document)
    zero["cases"][0]["real_time_ns"][0] = 0
    teeth = [name for name, doc in (("no commit", broken), ("a zero sample", zero)) if validator.is_valid(doc)]
    for name in teeth:
        print(f"the schema accepts an entry with {name}")
    return 1 if errors or teeth else 0


if __name__ == "__main__":
    sys.exit(main())
