#!/usr/bin/env python3
"""The rules of the house, checked: every include and every link against docs/architecture.md.

Reads the rules table in docs/architecture.md (room | target | may include), then fails (exit 1,
one line per violation) when
  - a file includes a room its room may not include (tests/<room>/ as their room, plus the room
    itself, tests/support/ and cli/cli_app.h to drive the command line; tests/cli/ may include
    every room; no other file includes cli/),
  - a room's target links a ropecheck_* target of a room it may not include,
  - a room includes a room that its target does not reach through its links,
  - the largest room holds a quarter or more of the project's code (tests not counted).
Usage: check_layering.py [ROOT]            (ROOT: the project root; default: two folders up)
       check_layering.py --self-test      (builds trees with known violations; each must fail)
"""
import os
import re
import shutil
import sys
import tempfile

SOURCE_SUFFIXES = (".h", ".cc", ".c", ".inc", ".in", ".cpp")
OUTSIDE_CODE = ("plugins/examples/", "plugins/peers/")  # outside kernels: the ABI header only
CLI_ENTRY = "cli/cli_app.h"  # run_cli(): what a test drives the command line through
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
LINK = re.compile(r"target_link_libraries\(\s*(\w+)([^)]*)\)", re.S)


def read_rules(root):
    """{room: (target, set of rooms it may include)} from the table in docs/architecture.md."""
    rules = {}
    with open(os.path.join(root, "docs", "architecture.md")) as doc:
        for line in doc:
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if len(cells) != 3 or not cells[1].startswith("ropecheck_"):
                continue
            allowed = set() if cells[2] == "-" else {r.strip() for r in cells[2].split(",")}
            rules[cells[0]] = (cells[1], allowed)
    if not rules:
        raise SystemExit("check_layering: no rules table in docs/architecture.md")
    return rules


def room_of(path, rooms):
    """The longest room path `path` starts with, or None."""
    best = None
    for room in rooms:
        if path == room or path.startswith(room + "/"):
            if best is None or len(room) > len(best):
                best = room
    return best


def included_room(include, rooms):
    if include.startswith("ropecheck/"):  # the plugin ABI header, plugins/include/ropecheck/
        return "plugins"
    return room_of(include, rooms)


def source_files(root):
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if not d.startswith((".", "build"))]
        for name in files:
            if name.endswith(SOURCE_SUFFIXES):
                path = os.path.relpath(os.path.join(folder, name), root)
                yield path.replace(os.sep, "/")


def check_includes(root, rules):
    rooms = list(rules)
    problems, used = [], {room: set() for room in rooms}
    for path in source_files(root):
        if path.startswith(OUTSIDE_CODE):
            continue
        if path.startswith("tests/"):
            parts = path.split("/")
            own = parts[1] if len(parts) > 2 else None
            if own == "support" or own not in rules and own != "cli":
                own = None
            allowed = set(rooms) if own == "cli" else (
                rules[own][1] | {own} if own else set(rooms) - {"cli"})
            allowed_tests = {"tests/support"}
        else:
            own = room_of(path, rooms)
            if own is None:
                continue
            allowed = rules[own][1] | {own}
            allowed_tests = set()
        with open(os.path.join(root, path), errors="replace") as f:
            text = f.read()
        for include in INCLUDE.findall(text):
            if path.startswith("tests/") and include == CLI_ENTRY:
                continue  # a test may drive the command line as a user does
            if include.startswith("tests/"):
                if not any(include.startswith(t + "/") for t in allowed_tests):
                    problems.append(f"{path}: includes {include} (tests are not a room to include)")
                continue
            target_room = included_room(include, rooms)
            if target_room is None:
                continue  # a file of the same folder, or a generated one
            if target_room not in allowed:
                problems.append(f"{path}: includes {include}: room {own or 'tests'} may not "
                                f"include room {target_room} (docs/architecture.md)")
            elif not path.startswith("tests/") and target_room != own:
                used[own].add(target_room)
    return problems, used


def read_links(root, rules):
    """{target: set of ropecheck_* targets it links} from every room's CMakeLists.txt."""
    links = {}
    for room in rules:
        cmake = os.path.join(root, room, "CMakeLists.txt")
        if not os.path.exists(cmake):
            continue
        with open(cmake) as f:
            text = f.read()
        for target, args in LINK.findall(text):
            links.setdefault(target, set()).update(re.findall(r"\bropecheck_\w+", args))
    return links


def check_links(root, rules, used):
    problems = []
    target_room = {target: room for room, (target, _) in rules.items()}
    links = read_links(root, rules)
    for room, (target, allowed) in rules.items():
        if target not in links and room != "core":
            problems.append(f"{room}: target {target} not found in {room}/CMakeLists.txt")
            continue
        for linked in links.get(target, ()):
            linked_room = target_room.get(linked)
            if linked_room is not None and linked_room not in allowed:
                problems.append(f"{room}/CMakeLists.txt: {target} links {linked}: room {room} may "
                                f"not use room {linked_room}")
        reach, todo = set(), [target]
        while todo:
            for linked in links.get(todo.pop(), ()):
                if linked in target_room and target_room[linked] not in reach:
                    reach.add(target_room[linked])
                    todo.append(rules[target_room[linked]][0])
        for needed in sorted(used.get(room, ()) - reach):
            problems.append(f"{room}: includes room {needed} but {target} does not link it")
    return problems


def check_sizes(root, rules):
    sizes = {}
    for path in source_files(root):
        room = room_of(path, list(rules))
        if room is None or path.startswith("tests/"):
            continue
        top = room.split("/")[0]
        with open(os.path.join(root, path), errors="replace") as f:
            sizes[top] = sizes.get(top, 0) + sum(1 for _ in f)
    total = sum(sizes.values())
    largest = max(sizes, key=sizes.get)
    print("rooms (lines): " + ", ".join(f"{r} {n}" for r, n in sorted(sizes.items(), key=lambda kv: -kv[1])))
    if sizes[largest] * 4 >= total:
        return [f"room {largest} holds {sizes[largest]} of {total} lines: a quarter or more"]
    return []


def check(root):
    rules = read_rules(root)
    problems, used = check_includes(root, rules)
    problems += check_links(root, rules, used)
    problems += check_sizes(root, rules)
    return problems


def self_test(root):
    """Each planted violation must be found; the unchanged copy must pass."""
    plants = {
        "core includes impls": ("core/spec.h", '#include "impls/registry.h"\n'),
        "reports includes properties": ("reports/data.h", '#include "properties/property.h"\n'),
        "a room includes cli": ("gate/compare.h", '#include "cli/cli_app.h"\n'),
        "a test includes a higher room": ("tests/core/spec_test.cc", '#include "bench/run_bench.h"\n'),
        "history includes bench": ("history/steps.h", '#include "bench/run_bench.h"\n'),
        "reports includes history": ("reports/plots.h", '#include "history/steps.h"\n'),
    }
    link_plant = ("gate/CMakeLists.txt", "\ntarget_link_libraries(ropecheck_gate PUBLIC ropecheck_impls)\n")
    failures = 0
    with tempfile.TemporaryDirectory() as scratch:
        copy = os.path.join(scratch, "tree")
        shutil.copytree(root, copy, ignore=shutil.ignore_patterns(".git", "build*", "*.npy", "data"))
        if check(copy):
            print("self-test: the unchanged copy does not pass:", *check(copy), sep="\n  ")
            return 1
        for name, (path, line) in list(plants.items()) + [("gate links impls", link_plant)]:
            target = os.path.join(copy, path)
            os.makedirs(os.path.dirname(target), exist_ok=True)
            before = open(target).read() if os.path.exists(target) else None
            with open(target, "a") as f:
                f.write(line)
            found = check(copy)
            print(f"self-test: {name}: {'found' if found else 'NOT FOUND'}")
            failures += 0 if found else 1
            if before is None:
                os.remove(target)
            else:
                with open(target, "w") as f:
                    f.write(before)
        cmake = os.path.join(copy, "reports", "CMakeLists.txt")
        before = open(cmake).read()
        with open(cmake, "w") as f:  # reports includes bench/format but no longer links it
            f.write(before.replace("PUBLIC ropecheck_bench_format", "PUBLIC ropecheck_core"))
        found = check(copy)
        print(f"self-test: reports does not link what it includes: {'found' if found else 'NOT FOUND'}")
        failures += 0 if found else 1
    return 1 if failures else 0


def main(argv):
    default_root = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
    if len(argv) > 1 and argv[1] == "--self-test":
        return self_test(argv[2] if len(argv) > 2 else default_root)
    root = argv[1] if len(argv) > 1 else default_root
    problems = check(root)
    for problem in problems:
        print(problem)
    print(f"layering: {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
