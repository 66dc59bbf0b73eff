"""Headless Chromium for the live page's tests and benchmark: Debian's
/usr/bin/chromium driven by playwright-core (tests/browser/drive.js, one JSON
line per command). Missing pieces fail, naming the install step: CI installs
them (deploy/install-deps.sh), so a missing browser is a broken machine, not a
reason to skip.

    b = Chromium(artifacts_dir).start()
    b.goto(url); b.wait("document.title === 'fabricbus'", 30)
    b.screenshot("loaded")   # <artifacts_dir>/loaded.png, path printed
    b.stop()
"""
import json
import os
import shutil
import subprocess
import threading

import fbtest
from fbtest import SRC, track

DRIVER_DIR = os.path.join(SRC, "tests", "browser")
DRIVER = os.path.join(DRIVER_DIR, "drive.js")
CHROMIUM = os.environ.get("FB_CHROMIUM", "/usr/bin/chromium")


def missing():
    """None, or what is missing and the step that installs it."""
    node = shutil.which("node") or shutil.which("nodejs")
    if not node:
        return "node is not installed: run deploy/install-deps.sh (Debian package nodejs)"
    if not os.access(CHROMIUM, os.X_OK):
        return f"{CHROMIUM} is not installed: run deploy/install-deps.sh (Debian package chromium)"
    pw = os.path.join(DRIVER_DIR, "node_modules", "playwright-core", "package.json")
    if not os.path.exists(pw):
        return (f"{pw} is missing: run deploy/install-deps.sh "
                "(it runs `npm ci` in tests/browser)")
    return None


class Chromium:
    def __init__(self, artifacts):
        self.artifacts = artifacts
        self.proc = None
        self.stderr = []

    def start(self):
        why = missing()
        assert why is None, why
        os.makedirs(self.artifacts, exist_ok=True)
        env = {k: v for k, v in os.environ.items() if k != "NODE_PATH"}
        # The browser is not ours to sanitize: ASan options of the broker's
        # tests must not reach it.
        for k in ("ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS", "LD_PRELOAD"):
            env.pop(k, None)
        self.proc = track(subprocess.Popen(["node", DRIVER], stdin=subprocess.PIPE,
                                           stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                           text=True, env=env, cwd=DRIVER_DIR))
        threading.Thread(target=lambda: self.stderr.extend(self.proc.stderr), daemon=True).start()
        return self

    def cmd(self, op, **kw):
        kw["op"] = op
        self.proc.stdin.write(json.dumps(kw) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise AssertionError(f"drive.js exited ({self.proc.poll()}) on {op}:\n"
                                 + "".join(self.stderr[-40:]))
        r = json.loads(line)
        if not r.get("ok"):
            raise AssertionError(f"browser {op} {kw}: {r.get('error')}")
        return r

    def goto(self, url):
        self.cmd("goto", url=url)

    def reload(self):
        self.cmd("reload")

    def eval(self, expr):
        return self.cmd("eval", expr=expr).get("value")

    def wait(self, expr, timeout_s, what=None):
        """Until the page expression is truthy; returns the seconds it took.
        On timeout: a screenshot and the expression in the failure."""
        try:
            return self.cmd("wait", expr=expr, timeout_ms=int(timeout_s * 1000))["ms"] / 1000.0
        except AssertionError as e:
            shot = self.screenshot("timeout")
            raise AssertionError(f"{what or expr}: not within {timeout_s}s ({e}); page: {shot}") from None

    def fill(self, selector, value):
        self.cmd("fill", selector=selector, value=value)

    def click(self, selector):
        self.cmd("click", selector=selector)

    def screenshot(self, name, full=False):
        path = os.path.join(self.artifacts, name + ".png")
        self.cmd("screenshot", path=path, full=full)
        print(f"  screenshot: {path}", flush=True)
        return path

    def metrics(self):
        """Chromium's own counters for the page (CDP Performance.getMetrics):
        TaskDuration, ScriptDuration, LayoutDuration, RecalcStyleDuration (s)."""
        return self.cmd("metrics")["value"]

    def tabs(self, url, n):
        return self.cmd("tabs", url=url, n=n)["value"]

    def close_tabs(self):
        self.cmd("close_tabs")

    def log(self):
        return self.cmd("log")

    def stop(self):
        if self.proc is None:
            return
        try:
            if self.proc.poll() is None:
                self.cmd("close")
        except (AssertionError, BrokenPipeError, OSError):
            pass
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.proc = None


def artifacts_dir(name):
    """Where a test's screenshots go, kept after the run (unlike its
    workdirs) and emptied at its start: $FB_ARTIFACTS/<name>, by default
    <build>/test-artifacts/<name> (CI keeps the build directory)."""
    base = os.environ.get("FB_ARTIFACTS") or os.path.join(fbtest.BUILD, "test-artifacts")
    d = os.path.join(base, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    return d
