#!/usr/bin/env python3
# The report and the history page opened in a real browser: Debian's chromium, headless, driven
# over the DevTools protocol on a pipe (--remote-debugging-pipe: JSON messages separated by NUL
# bytes, the browser reading fd 3 and writing fd 4; the standard library only). Each page fails on
#   - a console error: console.error or console.assert, an uncaught exception, a log entry of
#     level error (a resource that did not load is one);
#   - an image or plot that did not load or has no size: an <img> not complete or of natural or
#     rendered size 0, an outermost <svg> of rendered size 0 or nothing drawn, a <figure> without
#     either;
#   - an internal link without its target: href="#x" (and an SVG's #x or url(#x)) with no element
#     of that id, a relative link to a file that does not exist or lies outside the run;
#   - anything that leaves the machine: a request (Network.requestWillBeSent, seen, not only
#     blocked) or a reference in the page to a URL that is not file:, data: or the page's own.
# and keeps a screenshot of its first screen (1280 x 800) as PNG. Every wait has a timeout; the
# browser is killed on every way out. Exit 0 passed, 1 failed, 77 skipped (ctest SKIP_RETURN_CODE:
# chromium not installed or not able to start, said why).
#   browser_check.py ROPECHECK OUT              # a run generated into OUT/run, its pages checked,
#                                               # screenshots OUT/report.png, OUT/history.png
#   browser_check.py --self-test ROPECHECK OUT  # broken copies of the run's pages: each must fail
#   browser_check.py --pages PAGE... [--root DIR] [--screenshots DIR]   # pages of your own
# The browser: ROPECHECK_CHROMIUM if set, else Debian's /usr/lib/chromium/chromium, else chromium
# on PATH (scripts/install-deps.sh installs it).
# Registered as the ctests reports_browser and reports_browser_self_test (tests/CMakeLists.txt).
import argparse
import base64
import ctypes
import fcntl
import json
import os
import pathlib
import re
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.parse

SKIP = 77
VIEWPORT = (1280, 800)
START_TIMEOUT = 30  # seconds for the browser to answer its first message
STEP_TIMEOUT = 20   # seconds for any one command or page load
FIXTURE = pathlib.Path(__file__).resolve().parent / "data"


class Skip(Exception):
    pass


class BrowserError(Exception):
    pass


def find_chromium():
    """Debian's binary itself: /usr/bin/chromium is a launcher script that adds its own flags
    (remote extensions, API keys) and needs none of them here."""
    for candidate in (os.environ.get("ROPECHECK_CHROMIUM"), "/usr/lib/chromium/chromium",
                      shutil.which("chromium"), shutil.which("chromium-browser")):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    return None


class Browser:
    """One headless chromium on a DevTools pipe; a context manager that always kills it."""

    def __init__(self, executable, scratch=None):
        self.executable = executable
        # A fresh profile, in the test's own directory when there is one (a browser killed with
        # this script leaves nothing in /tmp).
        self.profile = tempfile.mkdtemp(prefix="chromium-profile-", dir=scratch)
        self.process = None
        self.buffer = b""
        self.events = []
        self.next_id = 0

    def __enter__(self):
        to_browser_r, self.to_browser = os.pipe()
        self.from_browser, from_browser_w = os.pipe()
        # Above 9 in the parent, so the child's moves onto 3 and 4 cannot overwrite each other.
        high_r = fcntl.fcntl(to_browser_r, fcntl.F_DUPFD_CLOEXEC, 10)
        high_w = fcntl.fcntl(from_browser_w, fcntl.F_DUPFD_CLOEXEC, 10)
        os.close(to_browser_r)
        os.close(from_browser_w)

        def in_child():
            os.dup2(high_r, 3)
            os.dup2(high_w, 4)
            try:  # the browser dies with this script, even if it is killed outright
                ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
            except Exception:
                pass

        flags = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--disable-extensions", "--disable-default-apps", "--disable-dev-shm-usage",
                 "--mute-audio", "--hide-scrollbars", "--no-default-browser-check",
                 # Nothing resolves: a request to outside still fails fast and never leaves. It is
                 # found by Network.requestWillBeSent below, not by this.
                 "--host-resolver-rules=MAP * ~NOTFOUND",
                 f"--window-size={VIEWPORT[0]},{VIEWPORT[1]}",
                 f"--user-data-dir={self.profile}", "--remote-debugging-pipe", "about:blank"]
        self.stderr = tempfile.TemporaryFile()
        try:
            self.process = subprocess.Popen([self.executable, *flags], stdin=subprocess.DEVNULL,
                                            stdout=self.stderr, stderr=self.stderr, close_fds=False,
                                            preexec_fn=in_child, start_new_session=True)
        except OSError as error:
            self.close()
            raise Skip(f"chromium ({self.executable}) cannot start: {error}")
        finally:
            os.close(high_r)
            os.close(high_w)
        try:
            version = self.call("Browser.getVersion", timeout=START_TIMEOUT, starting=True)
        except BaseException:
            self.close()
            raise
        self.product = version.get("product", "?")
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def stderr_tail(self, lines=15):
        try:
            self.stderr.seek(0)
            text = self.stderr.read().decode(errors="replace").strip().splitlines()
            return "\n".join("  | " + line for line in text[-lines:])
        except Exception:
            return ""

    def close(self):
        if self.process is not None and self.process.poll() is None:
            try:  # politely first, then the whole process group (renderers, zygote)
                self.send("Browser.close")
                self.process.wait(timeout=3)
            except Exception:
                pass
        if self.process is not None:
            try:
                os.killpg(self.process.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass
        for fd in ("to_browser", "from_browser"):
            if getattr(self, fd, None) is not None:
                try:
                    os.close(getattr(self, fd))
                except OSError:
                    pass
                setattr(self, fd, None)
        shutil.rmtree(self.profile, ignore_errors=True)

    def gone(self, what, starting):
        """The error for a browser that exited: at its start, chromium cannot start (a skip)."""
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass
        message = (f"chromium exited (status {self.process.returncode}) while waiting for {what}\n"
                   f"{self.stderr_tail()}")
        return Skip("chromium cannot start: " + message) if starting else BrowserError(message)

    def send(self, method, params=None, session=None, starting=False):
        self.next_id += 1
        message = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        data = json.dumps(message).encode() + b"\0"
        while data:
            _, writable, _ = select.select([], [self.to_browser], [], STEP_TIMEOUT)
            if not writable:
                raise BrowserError(f"the browser did not take {method} within {STEP_TIMEOUT} s")
            try:
                data = data[os.write(self.to_browser, data):]
            except BrokenPipeError:
                raise self.gone(method, starting) from None
        return self.next_id

    def read_one(self, deadline, what, starting=False):
        """The next message, or None at the deadline (the caller says what it waited for)."""
        while b"\0" not in self.buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            readable, _, _ = select.select([self.from_browser], [], [], left)
            if not readable:
                return None
            chunk = os.read(self.from_browser, 1 << 20)
            if not chunk:
                raise self.gone(what, starting)
            self.buffer += chunk
        raw, self.buffer = self.buffer.split(b"\0", 1)
        return json.loads(raw)

    def call(self, method, params=None, session=None, timeout=STEP_TIMEOUT, starting=False):
        wanted = self.send(method, params, session, starting)
        deadline = time.monotonic() + timeout
        while True:
            message = self.read_one(deadline, method, starting)
            if message is None:
                raise BrowserError(f"no answer to {method} within {timeout} s (a hung browser)\n"
                                   f"{self.stderr_tail()}")
            if message.get("id") == wanted:
                if "error" in message:
                    raise BrowserError(f"{method}: {message['error'].get('message')}")
                return message.get("result", {})
            if "method" in message:
                self.events.append(message)

    def wait_event(self, method, session, since, timeout=STEP_TIMEOUT):
        deadline = time.monotonic() + timeout
        seen = since
        while True:
            for event in self.events[seen:]:
                if event["method"] == method and event.get("sessionId") == session:
                    return event
            seen = len(self.events)
            message = self.read_one(deadline, method)
            if message is None:
                raise BrowserError(f"no {method} within {timeout} s (a hung page or browser)")
            if "method" in message:
                self.events.append(message)

    def drain(self, quiet=0.2, limit=3.0):
        """Events until none came for `quiet` seconds (at most `limit`)."""
        end = time.monotonic() + limit
        while time.monotonic() < end:
            message = self.read_one(min(end, time.monotonic() + quiet), "events")
            if message is None:
                return
            if "method" in message:
                self.events.append(message)


# What the page holds, measured in the page after its load (details opened, lazy images forced).
DOM_PROBE = r"""
(async () => {
  const out = {images: [], plots: [], figures: [], anchors: [], refs: [], ids: []};
  const name = (e) => e.tagName.toLowerCase() + (e.id ? '#' + e.id : '') +
      (e.closest('figure[id]') && e.closest('figure[id]') !== e ? ' in figure#' + e.closest('figure[id]').id : '');
  document.querySelectorAll('details').forEach((d) => { d.open = true; });
  const images = [...document.images];
  images.forEach((i) => { i.loading = 'eager'; });
  await Promise.race([
    Promise.all(images.map((i) => i.complete ? null : new Promise((done) => {
      i.addEventListener('load', done); i.addEventListener('error', done); }))),
    new Promise((done) => setTimeout(done, 5000))]);
  for (const i of images) {
    const box = i.getBoundingClientRect();
    out.images.push({what: name(i), src: i.getAttribute('src'), complete: i.complete,
                     natural: [i.naturalWidth, i.naturalHeight], box: [box.width, box.height]});
  }
  for (const s of document.querySelectorAll('svg')) {
    if (s.parentElement && s.parentElement.closest('svg')) continue;  // the outermost ones
    const box = s.getBoundingClientRect();
    let drawn = [0, 0];
    try { const b = s.getBBox(); drawn = [b.width, b.height]; } catch (e) {}
    out.plots.push({what: name(s), box: [box.width, box.height], drawn,
                    shapes: s.querySelectorAll('path, line, polyline, polygon, rect, circle, ellipse, text, use, image').length});
  }
  for (const f of document.querySelectorAll('figure')) {
    out.figures.push({what: name(f), plots: f.querySelectorAll('img, svg, object, embed, canvas, iframe').length});
  }
  for (const a of document.querySelectorAll('a[href], area[href]')) {
    out.anchors.push({what: name(a), href: a.getAttribute('href'), url: a.href,
                      text: a.textContent.trim().slice(0, 60)});
  }
  const resolve = (v) => { try { return new URL(v, document.baseURI).href; } catch (e) { return v; } };
  const urls = /url\(\s*(['"]?)([^'")]*)\1\s*\)/g;
  const attributes = new Set(['src', 'href', 'xlink:href', 'data', 'poster', 'action', 'formaction',
                              'background', 'cite', 'longdesc', 'manifest', 'ping', 'codebase', 'icon']);
  for (const e of document.querySelectorAll('*')) {
    const tag = e.tagName.toLowerCase();
    for (const attr of e.attributes) {
      const n = attr.name.toLowerCase();
      if ((tag === 'a' || tag === 'area') && n === 'href') continue;  // the anchors, above
      if (attributes.has(n)) {
        out.refs.push({what: name(e) + ' ' + n, value: attr.value, url: resolve(attr.value)});
      } else if (n === 'srcset' || n === 'imagesrcset') {
        for (const part of attr.value.split(',')) {
          const v = part.trim().split(/\s+/)[0];
          if (v) out.refs.push({what: name(e) + ' ' + n, value: v, url: resolve(v)});
        }
      } else {
        for (const m of attr.value.matchAll(urls)) {
          out.refs.push({what: name(e) + ' ' + n, value: m[2], url: resolve(m[2])});
        }
      }
    }
  }
  for (const sheet of document.styleSheets) {
    let text = '';
    try { text = [...sheet.cssRules].map((r) => r.cssText).join('\n'); } catch (e) { continue; }
    for (const m of text.matchAll(urls)) {
      out.refs.push({what: 'stylesheet', value: m[2], url: resolve(m[2])});
    }
  }
  for (const e of document.querySelectorAll('[id]')) out.ids.push(e.id);
  for (const e of document.querySelectorAll('a[name]')) out.ids.push(e.getAttribute('name'));
  return JSON.stringify(out);
})()
"""


def local_scheme(url):
    return urllib.parse.urlsplit(url).scheme.lower() in ("file", "data", "blob", "about")


def fragment_ids_of(path):
    text = path.read_text(errors="replace")
    return set(re.findall(r"""\s(?:id|name)\s*=\s*["']?([^"'\s>]+)""", text))


def check_target(page, root, ids, raw, url, what):
    """A problem with one link or reference, or None."""
    if raw is None:
        return None
    if raw.startswith("#"):
        target = urllib.parse.unquote(raw[1:])
        if target in ids or target in ("", "top"):
            return None
        return f"broken internal link: {what} -> {raw} (no element with id '{target}')"
    parts = urllib.parse.urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme in ("data", "about", "blob"):
        return None
    if scheme != "file":
        return f"outside URL: {what} -> {url}"
    path = pathlib.Path(urllib.parse.unquote(parts.path))
    if path == page:
        if parts.fragment and urllib.parse.unquote(parts.fragment) not in ids:
            return f"broken internal link: {what} -> {raw} (no element with id '{parts.fragment}')"
        return None
    try:
        path.resolve().relative_to(root.resolve())
    except ValueError:
        return f"link outside the run: {what} -> {raw} ({path} is not under {root})"
    if not path.exists():
        return f"broken internal link: {what} -> {raw} ({path} does not exist)"
    if parts.fragment and path.suffix in (".html", ".htm", ".svg"):
        if urllib.parse.unquote(parts.fragment) not in fragment_ids_of(path):
            return f"broken internal link: {what} -> {raw} (no id '{parts.fragment}' in {path.name})"
    return None


def check_page(browser, page, root, screenshot=None):
    """The problems of one page (a list of lines) and what was looked at (a line)."""
    page = pathlib.Path(page).resolve()
    root = pathlib.Path(root).resolve()
    if not page.is_file():
        return [f"{page}: no such page"], ""
    target = browser.call("Target.createTarget", {"url": "about:blank"})["targetId"]
    session = browser.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
    try:
        for domain in ("Page", "Runtime", "Log", "Network"):
            browser.call(f"{domain}.enable", session=session)
        browser.call("Emulation.setDeviceMetricsOverride",
                     {"width": VIEWPORT[0], "height": VIEWPORT[1], "deviceScaleFactor": 1, "mobile": False},
                     session=session)
        since = len(browser.events)
        navigated = browser.call("Page.navigate", {"url": page.as_uri()}, session=session)
        if navigated.get("errorText"):
            return [f"{page.name}: did not load: {navigated['errorText']}"], ""
        browser.wait_event("Page.loadEventFired", session, since)
        if screenshot:
            shot = browser.call("Page.captureScreenshot", {"format": "png"}, session=session)
            pathlib.Path(screenshot).write_bytes(base64.b64decode(shot["data"]))
        probe = browser.call("Runtime.evaluate", {"expression": DOM_PROBE, "awaitPromise": True,
                                                  "returnByValue": True}, session=session)
        if "exceptionDetails" in probe:
            return [f"{page.name}: the page could not be measured: {probe['exceptionDetails'].get('text')}"], ""
        dom = json.loads(probe["result"]["value"])
        browser.drain()
        events = [e for e in browser.events[since:] if e.get("sessionId") == session]
    finally:
        try:
            browser.call("Target.closeTarget", {"targetId": target})
        except BrowserError:
            pass

    problems = []
    requests = {}
    for event in events:
        method, params = event["method"], event.get("params", {})
        if method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
            text = " ".join(str(a.get("value", a.get("description", ""))) for a in params.get("args", []))
            problems.append(f"console.{params['type']}: {text}")
        elif method == "Runtime.exceptionThrown":
            details = params.get("exceptionDetails", {})
            text = details.get("exception", {}).get("description") or details.get("text", "")
            problems.append(f"uncaught exception: {text.splitlines()[0] if text else '?'}")
        elif method == "Log.entryAdded" and params.get("entry", {}).get("level") == "error":
            entry = params["entry"]
            problems.append(f"console error ({entry.get('source')}): {entry.get('text')}"
                            + (f" [{entry['url']}]" if entry.get("url") else ""))
        elif method == "Network.requestWillBeSent":
            url = params.get("request", {}).get("url", "")
            requests[params.get("requestId")] = url
            if not local_scheme(url):
                problems.append(f"request leaves the machine: {url}")
        elif method == "Network.loadingFailed":
            url = requests.get(params.get("requestId"), "?")
            if local_scheme(url):
                problems.append(f"did not load: {url} ({params.get('errorText')})")

    for image in dom["images"]:
        if not image["complete"] or 0 in image["natural"]:
            problems.append(f"image did not load: {image['what']} src={image['src']} "
                            f"(natural size {image['natural'][0]} x {image['natural'][1]})")
        elif 0 in [round(v) for v in image["box"]]:
            problems.append(f"image of zero size: {image['what']} src={image['src']}")
    for plot in dom["plots"]:
        if 0 in [round(v) for v in plot["box"]]:
            problems.append(f"plot of zero size: {plot['what']} (box {plot['box'][0]:.0f} x {plot['box'][1]:.0f})")
        elif plot["shapes"] == 0 or 0 in [round(v) for v in plot["drawn"]]:
            problems.append(f"plot draws nothing: {plot['what']} ({plot['shapes']} shapes)")
    for figure in dom["figures"]:
        if figure["plots"] == 0:
            problems.append(f"figure without a plot: {figure['what']}")

    ids = set(dom["ids"])
    for anchor in dom["anchors"]:
        problem = check_target(page, root, ids, anchor["href"], anchor["url"],
                               f"{anchor['what']} \"{anchor['text']}\"")
        if problem:
            problems.append(problem)
    for ref in dom["refs"]:
        problem = check_target(page, root, ids, ref["value"], ref["url"], ref["what"])
        if problem:
            problems.append(problem)

    problems = [f"{page.name}: {p}" for p in dict.fromkeys(problems)]  # once each, in order
    looked_at = (f"{len(dom['images'])} images, {len(dom['plots'])} plots in {len(dom['figures'])} figures, "
                 f"{len(dom['anchors'])} links, {len(dom['refs'])} references, {len(requests)} requests")
    return problems, looked_at


def run(command, timeout=120):
    done = subprocess.run([str(c) for c in command], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True, timeout=timeout)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(map(str, command))} exited {done.returncode}:\n{done.stdout}")
    return done.stdout


def generate_run(ropecheck, work):
    """A run as the main job leaves it, cheaply: report.html (and plots/) from the report
    fixture's result files against its baseline, and history/history.html from a history of
    synthetic runs of the fixture's bench (4 commits, 2 runs each, one case 15% slower from the
    third commit on). Returns the run directory."""
    run_dir = work / "run"
    shutil.rmtree(work, ignore_errors=True)
    run_dir.mkdir(parents=True)
    run([ropecheck, "report", "--in", FIXTURE, "--baseline", FIXTURE / "baseline", "--out", run_dir])
    bench = json.loads((FIXTURE / "bench.json").read_text())
    stepped = "kernel/avx2/llama7b_prefill512/interleaved/real_time/threads:1"
    store = work / "history-store"
    for commit in range(4):
        for rep in range(2):
            factor = (1 + 0.01 * ((commit * 7 + rep * 3) % 5 - 2)) * (0.85 if commit >= 2 else 1.0)
            entry = json.loads(json.dumps(bench))
            entry["context"]["date"] = f"2026-11-{10 + commit:02d}T1{rep}:00:00+00:00"
            for case in entry["benchmarks"]:
                f = factor if case["name"] == stepped else 1 + 0.01 * ((commit + rep) % 3 - 1)
                for key in ("real_time", "cpu_time"):
                    if key in case:
                        case[key] /= f
                for key in ("bytes_per_second", "flops", "items_per_second", "limit_fraction"):
                    if key in case:
                        case[key] *= f
            one = work / "runs" / f"{commit}-{rep}"
            one.mkdir(parents=True)
            (one / "bench.json").write_text(json.dumps(entry))
            run([ropecheck, "history", "add", "--dir", store, "--commit", f"{0xc0ffee0 + commit:07x}" + "d" * 33,
                 "--commit-date", f"2026-11-{10 + commit:02d}T09:00:00Z", "--branch", "main", one])
    run([ropecheck, "history", "report", "--dir", store, "--out", run_dir / "history"])
    return run_dir


def pages_of(run_dir):
    return [run_dir / "report.html", run_dir / "history" / "history.html"]


def check_pages(pages, root, screenshots=None, scratch=None):
    executable = find_chromium()
    if executable is None:
        raise Skip("chromium is not installed (scripts/install-deps.sh installs it)")
    failed = False
    with Browser(executable, scratch) as browser:
        print(f"browser: {browser.product} ({executable}), headless, {VIEWPORT[0]} x {VIEWPORT[1]}")
        for page in pages:
            shot = None
            if screenshots:
                shot = pathlib.Path(screenshots) / (pathlib.Path(page).stem + ".png")
            problems, looked_at = check_page(browser, page, root, shot)
            for problem in problems:
                print(f"FAIL {problem}")
            failed = failed or bool(problems)
            print(f"{'FAIL' if problems else 'ok  '} {page}: {looked_at}"
                  + (f"; screenshot {shot}" if shot else ""))
    return 1 if failed else 0


# Broken copies of the run: (name, page, change, what the checker must say). A change edits the
# copy's directory; each copy must fail with a problem containing the expected words.
def _replace_first(path, old, new, pattern=False):
    text = path.read_text()
    changed = re.sub(old, new, text, count=1, flags=re.S) if pattern else text.replace(old, new, 1)
    if changed == text:
        raise RuntimeError(f"self-test: nothing to change in {path} ({old!r})")
    path.write_text(changed)


def _first_figure(run_dir):
    match = re.search(r'<figure id="([^"]+)">', (run_dir / "report.html").read_text())
    return match.group(1)


def plot_as_file(run_dir, remove):
    """The first figure's inline SVG replaced by an <img> of its file in plots/ (which loads),
    and that file then removed when `remove`."""
    figure = _first_figure(run_dir)
    _replace_first(run_dir / "report.html", rf'(<figure id="{figure}">\s*)<svg.*?</svg>',
                   rf'\1<img src="plots/{figure}.svg" alt="{figure}">', pattern=True)
    if remove:
        (run_dir / "plots" / f"{figure}.svg").unlink()


def plot_dropped(run_dir, page):
    """A figure whose plot is gone from the page (an empty SVG inlined)."""
    _replace_first(page(run_dir), r"(<figure[^>]*>\s*)<svg.*?</svg>", r"\1", pattern=True)


SELF_TESTS = [
    ("a plot file removed (the figure referencing it)", "report.html",
     lambda d: plot_as_file(d, remove=True), "image did not load"),
    ("a plot missing from its figure", "report.html",
     lambda d: plot_dropped(d, lambda r: r / "report.html"), "figure without a plot"),
    ("a history plot missing from its figure", "history.html",
     lambda d: plot_dropped(d, lambda r: r / "history" / "history.html"), "figure without a plot"),
    ("a plot of zero size", "report.html",
     lambda d: _replace_first(d / "report.html", "<svg", '<svg style="display: none"'), "plot of zero size"),
    ("a section's id renamed (the contents link to it breaks)", "report.html",
     lambda d: _replace_first(d / "report.html", r'(<h2 id=")', r"\1renamed-", pattern=True),
     "broken internal link"),
    ("a link to a missing file of the run", "history.html",
     lambda d: _replace_first(d / "history" / "history.html", "</h1>",
                              '</h1>\n<p><a href="../no-such-report.html">the report</a></p>'),
     "broken internal link"),
    ("a plot's symbol reference broken (SVG ids not prefixed alike)", "report.html",
     lambda d: _replace_first(d / "report.html", "xlink:href='#f1-", "xlink:href='#f9-"),
     "broken internal link: use"),
    ("an outside image", "report.html",
     lambda d: _replace_first(d / "report.html", "</h1>",
                              '</h1>\n<img src="https://example.com/logo.png" alt="logo">'),
     "request leaves the machine: https://example.com/logo.png"),
    ("an outside stylesheet", "history.html",
     lambda d: _replace_first(d / "history" / "history.html", "</head>",
                              '<link rel="stylesheet" href="http://example.org/style.css">\n</head>'),
     "request leaves the machine: http://example.org/style.css"),
    ("a request made by a script (in no attribute)", "history.html",
     lambda d: _replace_first(d / "history" / "history.html", "</body>",
                              '<script>fetch("https://example.com/beacon").catch(() => {})</script>\n</body>'),
     "request leaves the machine: https://example.com/beacon"),
    ("a link to an outside page", "report.html",
     lambda d: _replace_first(d / "report.html", "</h1>",
                              '</h1>\n<p><a href="https://example.net/docs">docs</a></p>'),
     "outside URL"),
    ("a console error", "report.html",
     lambda d: _replace_first(d / "report.html", "</body>", '<script>console.error("planted")</script>\n</body>'),
     "console.error: planted"),
    ("an uncaught exception", "history.html",
     lambda d: _replace_first(d / "history" / "history.html", "</body>",
                              "<script>undefinedFunction()</script>\n</body>"),
     "uncaught exception"),
]


def self_test(run_dir, work):
    executable = find_chromium()
    if executable is None:
        raise Skip("chromium is not installed (scripts/install-deps.sh installs it)")
    failures = 0
    with Browser(executable, work) as browser:
        print(f"browser: {browser.product} ({executable})")
        for page in pages_of(run_dir):
            problems, looked_at = check_page(browser, page, run_dir)
            if problems:
                print(f"self-test: the unchanged {page.name} does not pass:", *problems, sep="\n  ")
                return 1
            print(f"self-test: the unchanged {page.name} passes ({looked_at})")
        # The control for the removed plot file: the same <img> passes while its file is there.
        controls = [("a plot referenced as a file that is there (control)", "report.html",
                     lambda d: plot_as_file(d, remove=False), None)]
        for number, (name, page_name, change, expected) in enumerate(controls + SELF_TESTS):
            copy = work / f"broken-{number}"
            shutil.copytree(run_dir, copy)
            change(copy)
            page = next(p for p in pages_of(copy) if p.name == page_name)
            problems, _ = check_page(browser, page, copy)
            if expected is None:
                ok = not problems
                verdict = "passes" if ok else "FAILS: " + "; ".join(problems)
            else:
                hits = [p for p in problems if expected in p]
                ok = bool(hits)
                verdict = (f"found ({hits[0]})" if ok else
                           f"NOT FOUND (wanted '{expected}'; got: {'; '.join(problems) or 'no problems'})")
            print(f"self-test: {name}: {verdict}")
            failures += 0 if ok else 1
            shutil.rmtree(copy, ignore_errors=True)
    return 1 if failures else 0


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--self-test", action="store_true")
    parser.add_argument("--pages", nargs="+", help="check these pages instead of a generated run")
    parser.add_argument("--root", help="with --pages: the directory their relative links must stay in")
    parser.add_argument("--screenshots", help="with --pages: where the PNGs go")
    parser.add_argument("ropecheck", nargs="?")
    parser.add_argument("out", nargs="?")
    args = parser.parse_args(argv)
    # ctest's timeout or ^C: unwind, so that the browser is killed on the way out.
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, lambda number, _: sys.exit(128 + number))
    start = time.monotonic()
    try:
        if args.pages:
            root = args.root or os.path.dirname(os.path.abspath(args.pages[0]))
            status = check_pages(args.pages, root, args.screenshots)
        else:
            if not (args.ropecheck and args.out):
                parser.error("ROPECHECK and OUT are required")
            out = pathlib.Path(args.out).resolve()
            if find_chromium() is None:
                raise Skip("chromium is not installed (scripts/install-deps.sh installs it)")
            run_dir = generate_run(pathlib.Path(args.ropecheck).resolve(), out)
            print(f"generated: {run_dir} ({time.monotonic() - start:.1f} s)")
            if args.self_test:
                status = self_test(run_dir, out)
            else:
                status = check_pages(pages_of(run_dir), run_dir, out, out)
    except Skip as why:
        print(f"SKIP: {why}")
        return SKIP
    except BrowserError as why:
        print(f"FAIL: {why}")
        return 1
    except (RuntimeError, subprocess.TimeoutExpired) as why:  # generating the run
        print(f"FAIL: {why}")
        return 1
    print(f"{'FAILED' if status else 'passed'} in {time.monotonic() - start:.1f} s")
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
