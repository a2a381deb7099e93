#!/usr/bin/env python3
# Validates real verify.json files against schemas/verify.schema.json with python3-jsonschema:
# runs `ropecheck verify` twice (a plain run with a failing mutant, and a --mutants run with its
# kill matrix) and checks each file. Registered as the ctest cli_verify_json_schema.
#   /usr/bin/python3 tests/properties/validate_verify_json.py \
#       build-cli/ropecheck schemas/verify.schema.json /tmp/x
import json
import pathlib
import subprocess
import sys

import jsonschema

RUNS = {
    # A passing real implementation beside a mutant judged as a subject: PASSED and FAILED rows.
    "plain": ["--impl", "rotation_matrix/scalar", "--impl", "mutant/sin_sign_flipped"],
    # Every mutant, so the kill matrix is present.
    "mutants": ["--impl", "rotation_matrix/scalar", "--mutants"],
}


def main() -> int:
    ropecheck, schema_path, work = sys.argv[1], pathlib.Path(sys.argv[2]), pathlib.Path(sys.argv[3])
    schema = json.loads(schema_path.read_text())
    validator_class = jsonschema.validators.validator_for(schema)
    validator_class.check_schema(schema)
    validator = validator_class(schema)
    failures = 0
    for name, args in RUNS.items():
        out = work / name
        # 3 cases: the schema needs rows of each status, not evidence (which the property tests give).
        command = [ropecheck, "verify", *args, "--cases", "3", "--out", str(out)]
        run = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        # 0 or 1 are verdicts and both write the file; 2 is bad usage and must not happen here.
        if run.returncode not in (0, 1):
            print(f"{name}: {' '.join(command)} exited {run.returncode}\n{run.stderr}")
            failures += 1
            continue
        document = json.loads((out / "verify.json").read_text())
        errors = sorted(validator.iter_errors(document), key=lambda e: list(e.absolute_path))
        for error in errors:
            print(f"{name}: /{'/'.join(map(str, error.absolute_path))}: {error.message}")
        failures += len(errors)
        print(f"{name}: {len(document['results'])} results, {len(errors)} schema errors")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
