#!/usr/bin/env python3
"""Checks that the project's Markdown pages hold no dead link and the README no dead command.

  check_links.py SOURCE_DIR [ROPECHECK]   every page under SOURCE_DIR (build trees and .git left
                                          out): each relative link or image names a file that
                                          exists, and each #anchor a heading of its page (GitHub's
                                          rule for heading ids); every scripts/... path in the
                                          README exists and is executable; with ROPECHECK (the
                                          binary), every `ropecheck <command>` in the README's code
                                          answers `--help` with exit 0.
  check_links.py --self-test              the checks, on pages broken on purpose, must fail.

Exit 0 all good, 1 something dead (each named on its own line), 2 bad usage.
"""
import os
import re
import subprocess
import sys
import tempfile

LINK = re.compile(r"!?\[(?:[^\]\\]|\\.)*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
CODE_SPAN = re.compile(r"`[^`]*`")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
SKIPPED_DIRS = {".git", "node_modules"}


def markdown_files(root):
    for here, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED_DIRS and not d.startswith("build"))
        for name in sorted(files):
            if name.endswith(".md"):
                yield os.path.join(here, name)


def prose_lines(text, blank_code_spans=True):
    """The lines outside fenced code blocks, with code spans blanked: links live in prose."""
    fenced = False
    for number, line in enumerate(text.split("\n"), 1):
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        if not fenced:
            yield number, CODE_SPAN.sub("", line) if blank_code_spans else line


def heading_ids(path):
    """GitHub's ids: lower case, punctuation but '-' and '_' dropped, spaces to '-', repeats -1, -2."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    ids, seen = set(), {}
    for _, line in prose_lines(text, blank_code_spans=False):
        m = HEADING.match(line)
        if not m:
            continue
        raw = re.sub(r"`", "", m.group(2))
        raw = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", raw)  # a link in a heading: its text
        slug = re.sub(r"[^\w\- ]", "", raw.lower()).replace(" ", "-")
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        ids.add(slug if n == 0 else f"{slug}-{n}")
    return ids


def dead_links(root):
    dead = []
    for page in markdown_files(root):
        with open(page, encoding="utf-8") as f:
            text = f.read()
        for number, line in prose_lines(text):
            for target in LINK.findall(line):
                if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto:
                    continue
                path, _, anchor = target.partition("#")
                where = os.path.normpath(os.path.join(os.path.dirname(page), path)) if path else page
                here = f"{os.path.relpath(page, root)}:{number}: {target}"
                if not os.path.exists(where):
                    dead.append(f"{here}: no such file")
                elif anchor and where.endswith(".md") and anchor not in heading_ids(where):
                    dead.append(f"{here}: no heading with the id '{anchor}'")
    return dead


def dead_commands(root, ropecheck):
    readme = os.path.join(root, "README.md")
    with open(readme, encoding="utf-8") as f:
        text = f.read()
    dead = []
    for script in sorted(set(re.findall(r"(?<![\w/.])(scripts/[\w.-]+\.(?:sh|py)|\.ci/run)\b", text))):
        path = os.path.join(root, script)
        if not (os.path.isfile(path) and os.access(path, os.X_OK)):
            dead.append(f"README.md: {script}: not an executable file")
    if ropecheck:
        commands = set()
        for block in re.findall(r"```(?:sh)?\n(.*?)```", text, re.S):
            for m in re.finditer(r"(?:^|[\s;&|(])ropecheck ([a-z]+)\b", block, re.M):
                commands.add(m.group(1))
        for command in sorted(commands):
            run = subprocess.run([ropecheck, command, "--help"], capture_output=True, timeout=60)
            if run.returncode != 0:
                dead.append(f"README.md: `ropecheck {command} --help` exits {run.returncode}")
    return dead


def self_test():
    """Each kind of dead link or command, planted in a scratch tree, must be found."""
    with tempfile.TemporaryDirectory() as root:
        os.makedirs(os.path.join(root, "docs"))
        os.makedirs(os.path.join(root, "scripts"))
        run_sh = os.path.join(root, "scripts", "run.sh")
        with open(run_sh, "w") as f:
            f.write("#!/bin/sh\n")
        os.chmod(run_sh, 0o755)
        with open(os.path.join(root, "docs", "a.md"), "w") as f:
            f.write("# A page\n\n## The `x` form (y)\n\n[back](../README.md#the-two-commands)\n")
        good = "# r\n\n## The two commands\n\n`scripts/run.sh`, [a](docs/a.md#the-x-form-y)\n" \
               "```sh\nsee [not a link](nowhere.md)\n```\n"
        with open(os.path.join(root, "README.md"), "w") as f:
            f.write(good)
        failures = []
        if dead_links(root) or dead_commands(root, None):
            failures.append(f"the good tree was found dead: {dead_links(root) + dead_commands(root, None)}")
        for broken, why in [
            (good + "[gone](docs/missing.md)\n", "a missing file"),
            (good + "![plot](docs/img/none.png)\n", "a missing image"),
            (good + "[a](docs/a.md#no-such-heading)\n", "a missing anchor"),
            (good + "[self](#not-here)\n", "a missing anchor on the same page"),
            (good + "`scripts/gone.sh`\n", "a missing script"),
        ]:
            with open(os.path.join(root, "README.md"), "w") as f:
                f.write(broken)
            if not dead_links(root) + dead_commands(root, None):
                failures.append(f"not found: {why}")
        os.chmod(run_sh, 0o644)
        with open(os.path.join(root, "README.md"), "w") as f:
            f.write(good)
        if not dead_commands(root, None):
            failures.append("not found: a script that is not executable")
    for failure in failures:
        print(f"check_links self-test: {failure}")
    return 1 if failures else 0


def main(argv):
    if argv[1:] == ["--self-test"]:
        return self_test()
    if len(argv) not in (2, 3):
        print(__doc__, file=sys.stderr)
        return 2
    root = argv[1]
    dead = dead_links(root) + dead_commands(root, argv[2] if len(argv) == 3 else None)
    for line in dead:
        print(line)
    print(f"check_links: {len(dead)} dead link(s) or command(s) in {root}")
    return 1 if dead else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
