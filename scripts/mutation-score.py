#!/usr/bin/env python3
"""The project's mutation score: a seeded sample of source mutations of impls/ and core/, each
applied alone, rebuilt, and judged by the tests of its room and by `ropecheck verify`.

Usage: scripts/mutation-score.py [--sample N] [--seed S] [--files GLOB]... [--jobs J] [--list]
                                 [--cases C] [--only ID,...] [--max-objects N] [--build DIR]
                                 [--out DIR] [--timeout-factor F]

Verdicts: killed (by the named test or property), timeout (counted as killed), survived,
stillborn (does not compile: out of the score), equivalent (out of the score: the rebuilt objects
are byte-identical to the original's, or a reviewed entry of scripts/mutation-equivalents.json
says why no input can tell it apart). Score = killed / (total - stillborn - equivalent).
Writes OUT/mutation.json and OUT/mutation.md; the source is restored after every mutant and on
exit or interrupt (docs/mutation-score.md).
"""
import argparse
import fnmatch
import hashlib
import json
import os
import random
import re
import shlex
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EQUIVALENTS = ROOT / "scripts" / "mutation-equivalents.json"
DEFAULT_FILES = ["impls/*.cc", "impls/*.h", "impls/*/*.cc", "impls/*/*.h",
                 "core/*.cc", "core/*.h"]
# The mutants are wrong on purpose (the properties room's kill matrix guards them). core's result
# files, tables and logs are judged by the tests of the rooms that write them (properties, gate,
# cli), which this script does not build: the score is of what computes RoPE.
EXCLUDED = ["impls/mutants/*", "core/junit_xml.*", "core/text_table.*", "core/result_files.*",
            "core/machine_info.*", "core/logging.*", "core/exit_codes.h", "core/errors.h"]
# The ctest labels that judge a room's files: its own, and for core the impls room's too (the
# frequency table, storage conversions, ISA levels and tolerance model are tested there).
LABELS = {"core": ["core", "impls"], "impls": ["impls"]}
CLASSES = ["arithmetic", "relational", "constant", "sign", "off_by_one", "swap"]
# -O1 without debug info: one mutant recompiles one small file quickly, and an equivalent
# mutation gives a byte-identical object (no line or column tables to differ).
CONFIGURE = ["-G", "Ninja", "-DCMAKE_BUILD_TYPE=RelWithDebInfo",
             "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -DNDEBUG",
             "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O1 -DNDEBUG",
             "-DROPECHECK_UNITY_BUILD=OFF", "-DROPECHECK_TORCH_PEERS=OFF",
             "-DROPECHECK_GGML_PEER=OFF"]


# --- finding sites -------------------------------------------------------------------------------

def mask(text):
    """The text with comments, string and character literals blanked (same length, same lines),
    so that a site's offsets in it are its offsets in the source."""
    out = list(text)
    i, n = 0, len(text)

    def blank(a, b):
        for k in range(a, b):
            if out[k] != "\n":
                out[k] = " "

    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            blank(i, j)
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            blank(i, j)
            i = j
        elif c == "R" and text.startswith('R"', i) and not (i and (text[i - 1].isalnum() or text[i - 1] == "_")):
            d = text.index("(", i)
            end = ")" + text[i + 2:d] + '"'
            j = text.find(end, d) + len(end)
            blank(i, j)
            i = j
        elif c == '"' or (c == "'" and not (i and text[i - 1].isalnum())):
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            blank(i, j + 1)
            i = j + 1
        else:
            i += 1
    return "".join(out)


# A line holding any of these is not behaviour the tests judge: preprocessor, assertions, log and
# error-message text.
SKIP_LINE = re.compile(r"^\s*#|static_assert|\bassert\s*\(|progress_log|spdlog::|fmt::format|"
                       r"\bthrow\b|\boperator\b|\btemplate\b|\busing\b")
NUMBER = re.compile(r"(?<![\w.'])(\d[\d']*(?:\.\d*)?(?:[eE][+-]?\d+)?)([fFlLuU]*)(?![\w.'])")
OPERAND = r"(?:[A-Za-z_][\w.]*(?:\[\w+\])?|\d[\w.]*)"
SWAP = re.compile(r"(?<![\w.\]):>)])(" + OPERAND + r") (-|/|%|<|<=|>|>=) (" + OPERAND + r")(?![\w.(\[])")
ARITH = {"+": "-", "-": "+", "*": "/", "/": "*", "%": "/",
         "+=": "-=", "-=": "+=", "*=": "/=", "/=": "*="}
RELATION = {"<": "<=", "<=": "<", ">": ">=", ">=": ">", "==": "!=", "!=": "=="}


def changed_number(literal):
    body = literal.replace("'", "")
    if "." in body or "e" in body.lower():
        value = float(body)
        new = 1.0 if value == 0 else value * 2
        return repr(new)
    value = int(body)
    return str(1 if value == 0 else 0 if value == 1 else value + 1)


def sites_of_line(code, src):
    """(class, start, end, replacement) of every mutation of one line (masked code, source)."""
    found = []
    for m in re.finditer(r"(?<=\S) (\+=|-=|\*=|/=|[+\-*/%]) (?=[\w(])", code):
        op = m.group(1)
        found.append(("arithmetic", m.start(1), m.end(1), ARITH[op]))
    for m in re.finditer(r"(?<=\S) (<=|>=|==|!=|<|>) (?=[\w(!-])", code):
        op = m.group(1)
        found.append(("relational", m.start(1), m.end(1), RELATION[op]))
    for m in NUMBER.finditer(code):
        if re.search(r"\)( const)? = $", code[:m.start()]):
            continue  # a pure virtual function's `= 0`, not a number
        found.append(("constant", m.start(1), m.end(1), changed_number(m.group(1))))
    for m in re.finditer(r"(?:[(=,{?:]|\breturn) ?(-)(?=[\w(])", code):
        found.append(("sign", m.start(1), m.end(1), ""))
    for m in re.finditer(r"(?:[(,{]|= |\breturn )(?=(\d[\d.]*(?:[eE][+-]?\d+)?[fFlL]?)(?![\w.]))", code):
        if m.group(1) != "0":  # -0 is 0 for an integer
            found.append(("sign", m.end(), m.end(), "-"))
    for m in re.finditer(r"\bfor \(([^;()]*(?:\([^()]*\))?[^;()]*);([^;]+);", code):
        cond_end = m.end(2)
        for delta in (" + 1", " - 1"):
            found.append(("off_by_one", cond_end, cond_end, delta))
    for m in re.finditer(r"(?<=[\w)\]])\[([^\[\]]+)\]", code):
        index = m.group(1)
        if re.fullmatch(r"\s*(\d+|k[A-Z]\w*|[A-Z_]+)\s*", index):
            continue  # a size in a declaration, not an index
        found.append(("off_by_one", m.end(1), m.end(1), " + 1"))
    for m in SWAP.finditer(code):
        left, op, right = m.group(1), m.group(2), m.group(3)
        if left != right:
            found.append(("swap", m.start(1), m.end(3), f"{right} {op} {left}"))
    return [s for s in found if src[s[1]:s[2]] != s[3]]


def find_sites(files):
    sites = []
    for rel in files:
        src = (ROOT / rel).read_text()
        code = mask(src)
        offset = 0
        for lineno, (code_line, src_line) in enumerate(zip(code.split("\n"), src.split("\n")), 1):
            if code_line.strip() and not SKIP_LINE.search(code_line):
                for cls, a, b, new in sites_of_line(code_line, src_line):
                    sites.append({"file": rel, "line": lineno, "class": cls,
                                  "start": offset + a, "end": offset + b, "new": new,
                                  "line_text": src_line.strip(),
                                  "mutated_text": (src_line[:a] + new + src_line[b:]).strip()})
            offset += len(src_line) + 1
    return sites


def sample_sites(sites, size, seed):
    """A seeded sample spread over the operator classes: each class shuffled, then taken in turn."""
    rng = random.Random(seed)
    by_class = {c: [s for s in sites if s["class"] == c] for c in CLASSES}
    for c in CLASSES:
        rng.shuffle(by_class[c])
    picked = []
    while len(picked) < size and any(by_class.values()):
        for c in CLASSES:
            if by_class[c] and len(picked) < size:
                picked.append(by_class[c].pop())
    for i, s in enumerate(picked, 1):
        s["id"] = i
    return picked


def source_files(globs):
    files = set()
    for pattern in globs:
        for path in ROOT.glob(pattern):
            rel = path.relative_to(ROOT).as_posix()
            if path.suffix in (".cc", ".h") and not any(fnmatch.fnmatch(rel, e) for e in EXCLUDED):
                files.add(rel)
    return sorted(files)


def objects_per_file(build):
    """How many objects of the build include each source file (ninja's dependency log); {} before
    the first build."""
    if not (Path(build) / ".ninja_deps").exists():
        return {}
    out = subprocess.run(["ninja", "-C", str(build), "-t", "deps"], stdout=subprocess.PIPE,
                         text=True, check=True).stdout
    counts = {}
    prefix = str(ROOT) + "/"
    for line in out.splitlines():
        dep = line.strip()
        if line.startswith(" ") and dep.startswith(prefix):
            rel = dep[len(prefix):]
            counts[rel] = counts.get(rel, 0) + 1
    return counts


# --- what judges a file --------------------------------------------------------------------------

def affected_impls(rel):
    """The registry ids whose factory the file defines; [] means every real implementation."""
    text = (ROOT / rel).read_text()
    factories = set(re.findall(r"std::unique_ptr<\w+> (make_\w+)\(\)\s*{", text))
    registry = (ROOT / "impls" / "registry.inc").read_text()
    ids = []
    for m in re.finditer(r"^(\w+)_IMPL\((\w+), (\w+), (\w+)\)", registry, re.M):
        if m.group(4) in factories:
            ids.append(f"{m.group(2)}/{m.group(3)}")
    return ids


def room_of(rel):
    return rel.split("/", 1)[0]


# --- running -------------------------------------------------------------------------------------

def run(cmd, timeout, cwd=ROOT):
    """(exit status or None on timeout, output, seconds). The command runs in its own process
    group, killed whole on a timeout or an interrupt: no compiler may write an object of a
    mutated source after the source is restored."""
    start = time.monotonic()
    p = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                         start_new_session=True)
    try:
        out, _ = p.communicate(timeout=timeout)
        return p.returncode, out, time.monotonic() - start
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, _ = p.communicate()
        return None, out, time.monotonic() - start
    except BaseException:
        os.killpg(p.pid, signal.SIGKILL)
        p.wait()
        raise


def object_hashes(build):
    hashes = {}
    for path in Path(build).rglob("*.o"):
        hashes[str(path)] = (hashlib.sha256(path.read_bytes()).hexdigest(), path.stat().st_mtime)
    return hashes


class Runner:
    def __init__(self, args):
        self.args = args
        self.build = Path(args.build)
        self.baseline = {}  # stage command -> seconds the unmutated tree took

    def configure_and_build(self, targets):
        if not (self.build / "build.ninja").exists():
            rc, out, _ = run(["cmake", "-S", str(ROOT), "-B", str(self.build)] + CONFIGURE, None)
            if rc != 0:
                sys.exit("configure failed:\n" + out[-3000:])
        return run(["cmake", "--build", str(self.build), "-j", str(self.args.jobs), "--target"]
                   + targets, self.args.build_timeout)

    def stages(self, site):
        room = room_of(site["file"])
        impls = affected_impls(site["file"]) if room == "impls" else []
        verify = [str(self.build / "ropecheck"), "verify", "--cases", str(self.args.cases),
                  "--jobs", str(self.args.jobs), "--out", self.scratch]
        for i in impls:
            verify += ["--impl", i]
        stages = []
        for label in LABELS[room]:
            stages.append(("ctest -L " + label,
                           ["ctest", "--test-dir", str(self.build), "-L", f"^{label}$", "-j",
                            str(self.args.jobs), "--stop-on-failure"]))
        return stages + [("verify" + "".join(" --impl " + i for i in impls), verify)]

    def judge(self, name, cmd):
        """None when the stage passes; else (verdict, killer)."""
        rc, out, _ = run(cmd, self.args.timeout_factor * self.baseline[name] + 30)
        if rc == 0:
            return None
        if rc is None:
            return "timeout", f"{name}: over {self.args.timeout_factor} x its unmutated time"
        if name.startswith("ctest"):
            summary = out.split("The following tests FAILED:", 1)[-1]
            failed = [(name.split("  # ")[0], why) for name, why in
                      re.findall(r"^\s*\d+ - (.+) \(([^()]+)\)\s*$", summary, re.M)]
            what = ", ".join(f"{t} ({why})" for t, why in failed[:3]) or f"exit {rc}"
            verdict = "timeout" if failed and all(w == "Timeout" for _, w in failed) else "killed"
            return verdict, f"{name}: {what}"
        failed = re.findall(r"^(FAILED|MISTRUSTED|HANG)\s+(\S+)\s+(\S+)", out, re.M)
        what = ", ".join(f"{s} {p}" for _, s, p in failed[:3]) or f"exit {rc} ({last_line(out)})"
        return "killed", f"{name}: {what}"

    def mutate(self, site, equivalents):
        path = ROOT / site["file"]
        original = path.read_bytes()
        stat = path.stat()
        text = original.decode()
        mutated = text[:site["start"]] + site["new"] + text[site["end"]:]
        room = room_of(site["file"])
        targets = ["ropecheck"] + [f"{label}_tests" for label in LABELS[room]]
        # Each stage once on the unmutated tree first: it must pass, and its time sets the timeout.
        for name, cmd in self.stages(site):
            if name not in self.baseline:
                self.configure_and_build(targets)
                rc, out, secs = run(cmd, None)
                if rc != 0:
                    sys.exit(f"the unmutated tree fails `{name}`:\n{out[-3000:]}")
                self.baseline[name] = secs
        before = object_hashes(self.build)
        started = time.time()
        try:
            path.write_text(mutated)
            rc, out, secs = self.configure_and_build(targets)
            rebuilt = {p: h for p, (h, m) in object_hashes(self.build).items() if m >= started - 1}
            if rc != 0:
                return {"verdict": "stillborn", "why": first_error(out) if rc is not None else "build timeout"}
            if rebuilt and all(before.get(p, (None,))[0] == h for p, h in rebuilt.items()):
                return {"verdict": "equivalent", "why": "rebuilt objects byte-identical to the original's"}
            key = (site["file"], site["line"], site["line_text"], site["mutated_text"])
            if key in equivalents:
                return {"verdict": "equivalent", "why": equivalents[key]}
            for name, cmd in self.stages(site):
                judged = self.judge(name, cmd)
                if judged:
                    return {"verdict": judged[0], "why": judged[1]}
            return {"verdict": "survived", "why": "every stage passed"}
        finally:
            path.write_bytes(original)
            os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
            # The original objects back, newer than the restored source: the next mutant
            # recompiles its own file only.
            for p, (h, _) in before.items():
                if not os.path.exists(p) or os.path.getmtime(p) >= started - 1:
                    restore_object(p, h, self.object_store)


def restore_object(path, digest, store):
    saved = store / digest
    if saved.exists():
        Path(path).write_bytes(saved.read_bytes())
    else:
        os.remove(path)  # unknown: let the next build make it again


def first_error(out):
    for line in out.splitlines():
        if "error:" in line:
            return line.split("error:", 1)[1].strip()[:160]
    return last_line(out)


def last_line(out):
    lines = [l for l in out.splitlines() if l.strip()]
    return lines[-1][:160] if lines else ""


# --- results -------------------------------------------------------------------------------------

def load_equivalents():
    if not EQUIVALENTS.exists():
        return {}
    entries = json.loads(EQUIVALENTS.read_text())
    return {(e["file"], e["line"], e["original"], e["mutated"]): e["reason"] for e in entries}


def score(results):
    counted = [r for r in results if r.get("verdict") in ("killed", "timeout", "survived")]
    killed = [r for r in counted if r["verdict"] != "survived"]
    return len(killed), len(counted)


def change_text(site):
    return f"`{site['line_text']}` -> `{site['mutated_text']}`"


def write_results(out_dir, results, command, meta):
    out_dir.mkdir(parents=True, exist_ok=True)
    killed, counted = score(results)
    meta = dict(meta, command=command, killed=killed, scored=counted,
                score=round(killed / counted, 4) if counted else None)
    (out_dir / "mutation.json").write_text(json.dumps({"run": meta, "mutants": results}, indent=1) + "\n")
    counts = {v: sum(r.get("verdict") == v for r in results)
              for v in ("killed", "timeout", "survived", "stillborn", "equivalent")}
    lines = [f"Command: `{command}`", "",
             f"{len(results)} mutants: " + ", ".join(f"{n} {v}" for v, n in counts.items()) + ".",
             f"Score: {killed} / {counted} = {meta['score']:.1%}" if counted else "Score: none", "",
             "| # | site | operator | original -> mutated | verdict | killer or reason |",
             "|---:|---|---|---|---|---|"]
    for r in results:
        change = change_text(r).replace("|", "\\|")
        why = r.get("why", "").replace("|", "\\|")
        lines.append(f"| {r['id']} | {r['file']}:{r['line']} | {r['class']} | {change} | "
                     f"{r.get('verdict', 'not run')} | {why} |")
    (out_dir / "mutation.md").write_text("\n".join(lines) + "\n")
    return killed, counted


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sample", type=int, default=60, help="mutants to run (default 60)")
    ap.add_argument("--seed", type=int, default=29, help="sampling seed (default 29)")
    ap.add_argument("--files", action="append", help="glob of files to mutate (repeatable; default "
                    "impls/ and core/ .cc and .h, less impls/mutants/)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count(), help="build, ctest and verify jobs")
    ap.add_argument("--cases", type=int, default=25, help="RapidCheck cases of verify (default 25)")
    ap.add_argument("--list", action="store_true", help="print the sample and stop (nothing built)")
    ap.add_argument("--only", help="run only these sample ids (comma list); merge into OUT's results")
    ap.add_argument("--build", default=str(ROOT / "build-mutation"), help="build directory")
    ap.add_argument("--out", default=str(ROOT / "reports" / "out" / "mutation"), help="results")
    ap.add_argument("--timeout-factor", type=float, default=5.0,
                    help="a stage times out at this many times its unmutated time (+30 s)")
    ap.add_argument("--build-timeout", type=float, default=1200)
    ap.add_argument("--max-objects", type=int, default=20,
                    help="leave out files that more objects than this include (a header the "
                    "whole tree includes costs a full rebuild per mutant); 0: no limit")
    args = ap.parse_args()

    files = source_files(args.files or DEFAULT_FILES)
    wide = []
    if args.max_objects:
        counts = objects_per_file(args.build)
        wide = [f for f in files if counts.get(f, 0) > args.max_objects]
        files = [f for f in files if f not in wide]
    sites = find_sites(files)
    picked = sample_sites(sites, args.sample, args.seed)
    if args.list:
        for s in picked:
            print(f"{s['id']:3} {s['file']}:{s['line']} {s['class']:10} {change_text(s)}")
        print(f"{len(picked)} of {len(sites)} sites in {len(files)} files (seed {args.seed})")
        if wide:
            print(f"left out, included by more than {args.max_objects} objects: {' '.join(wide)}")
        return 0

    command = "scripts/mutation-score.py " + " ".join(shlex.quote(a) for a in sys.argv[1:])
    out_dir = Path(args.out)
    results = [dict(s) for s in picked]
    only = {int(i) for i in args.only.split(",")} if args.only else None
    if only is not None and (out_dir / "mutation.json").exists():
        previous = {r["id"]: r for r in json.loads((out_dir / "mutation.json").read_text())["mutants"]}
        results = [previous.get(r["id"], r) if r["id"] not in only else r for r in results]
    equivalents = load_equivalents()

    # Interrupted or killed: SystemExit unwinds through mutate()'s finally, which restores.
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, lambda *_: sys.exit(130))

    runner = Runner(args)
    scratch = tempfile.TemporaryDirectory(prefix="mutation-")
    runner.scratch = scratch.name
    runner.object_store = Path(scratch.name) / "objects"
    runner.object_store.mkdir()
    rc, out, secs = runner.configure_and_build(
        ["ropecheck"] + sorted({f"{l}_tests" for s in picked for l in LABELS[room_of(s["file"])]}))
    if rc != 0:
        sys.exit("the unmutated tree does not build:\n" + out[-3000:])
    for p in Path(args.build).rglob("*.o"):
        data = p.read_bytes()
        (runner.object_store / hashlib.sha256(data).hexdigest()).write_bytes(data)

    started = time.time()
    cpu_start = os.times()
    meta = {"seed": args.seed, "sample": args.sample, "cases": args.cases, "sites": len(sites),
            "files": len(files), "left_out_wide_headers": wide}
    for r in results:
        if only is not None and r["id"] not in only:
            continue
        t0 = time.monotonic()
        r.update(runner.mutate(r, equivalents))
        r["seconds"] = round(time.monotonic() - t0, 1)
        print(f"[{r['id']}/{len(results)}] {r['file']}:{r['line']} {r['class']}: {r['verdict']}"
              f" ({r['why']}) {r['seconds']} s", flush=True)
        write_results(out_dir, results, command, meta)
    t = os.times()
    meta["wall_seconds"] = round(time.time() - started)
    meta["cpu_seconds"] = round(t.children_user + t.children_system - cpu_start.children_user
                                - cpu_start.children_system + t.user + t.system
                                - cpu_start.user - cpu_start.system)
    killed, counted = write_results(out_dir, results, command, meta)
    print(f"score: {killed} / {counted} (wall {meta['wall_seconds']} s, cpu {meta['cpu_seconds']} s);"
          f" {out_dir}/mutation.md")
    status = subprocess.run(["git", "status", "--porcelain", "--", "impls", "core"], cwd=ROOT,
                            stdout=subprocess.PIPE, text=True).stdout
    if status.strip():
        sys.exit("the tree is not clean after the run:\n" + status)
    return 0


if __name__ == "__main__":
    sys.exit(main())
