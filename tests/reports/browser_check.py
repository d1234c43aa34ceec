#!/usr/bin/env python3
"""Opens trainsim HTML reports in headless Chromium: the page must load cleanly and its charts must draw.

  browser_check.py --chromium PATH --out-dir DIR [--width 1280] [--height 0] [--timeout 60] FILE.html...

For each file, one headless Chromium (a fresh profile) loads it and this script drives it over the DevTools
protocol on a pipe (--remote-debugging-pipe: fd 3 in, fd 4 out, NUL-terminated JSON; no port, no network).
Chromium's --enable-logging=stderr cannot serve: it prints every console message alike, console.log and
console.error both as `INFO:CONSOLE:<line>] "text", source: URL (line)`, and says nothing of a failed load.
The protocol says what each event is. A page fails on:
  - a console.error or console.assert (Runtime.consoleAPICalled type error/assert), an uncaught exception
    or rejected promise (Runtime.exceptionThrown), a browser error such as a resource that failed to load
    or a blocked request (Log.entryAdded level error);
  - a `<body>` without visible text;
  - an `svg.chart` without a `.mark` element (unless its aria-label or text says "no data"), or a mark that
    the browser laid out with an empty box (zero width and zero height: NaN coordinates, a lost path);
  - a chart (with data) without its bold title or without both axis labels, a text laid out with an empty box or
    outside the chart's frame, or two texts overlapping by more than a fifth of the smaller;
  - a link that Chromium resolves to a scheme other than file: or https: (javascript:, data:, a path whose first
    segment reads as a scheme), or one that runs script when clicked: every link is clicked, each on a fresh
    load of the page, and the page's title and URL must not change unless the click left the page for a file;
  - no load event within --timeout seconds (the whole Chromium run is bounded; Chromium is then killed).
Writes DIR/<stem>.png (--width wide; the whole page tall, or --height px) and DIR/<stem>.dom.html (the DOM
after load). Exits 0 when every page passes, 1 when one fails, 77 (CTest's skip) when Chromium is missing.
"""
import argparse
import base64
import json
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time

# Runs in the page after load: what a reader would see of each chart.
PAGE_FACTS = r"""(() => {
  const charts = [...document.querySelectorAll("svg.chart")].map((svg, i) => {
    const marks = [...svg.querySelectorAll(".mark")];
    const label = svg.getAttribute("aria-label") || "";
    const empty = marks.filter(m => { const b = m.getBBox(); return !(b.width > 0 || b.height > 0); }).length;
    // What a reader needs to read it: a title, both axis labels, and every text inside the chart and apart from the
    // others (a label outside the frame or on top of another is as good as missing).
    const frame = svg.getBoundingClientRect();
    const texts = [...svg.querySelectorAll("text")].filter(t => t.textContent.trim());
    const rects = texts.map(t => t.getBoundingClientRect());
    const problems = [];
    if (!texts.some(t => t.getAttribute("font-weight") === "bold")) problems.push("no title");
    const axisLabels = texts.filter(t => t.getAttribute("fill") === "#222" && t.getAttribute("font-weight") !== "bold");
    if (axisLabels.length < 2) problems.push(`${axisLabels.length} axis label(s), not 2`);
    texts.forEach((t, k) => {
      const r = rects[k];
      if (!(r.width > 0 && r.height > 0)) problems.push(`text "${t.textContent.trim()}" laid out with an empty box`);
      else if (r.left < frame.left - 1 || r.right > frame.right + 1 || r.top < frame.top - 1 || r.bottom > frame.bottom + 1)
        problems.push(`text "${t.textContent.trim()}" outside the chart`);
    });
    for (let a = 0; a < rects.length; ++a)
      for (let b = a + 1; b < rects.length; ++b) {
        const w = Math.min(rects[a].right, rects[b].right) - Math.max(rects[a].left, rects[b].left);
        const h = Math.min(rects[a].bottom, rects[b].bottom) - Math.max(rects[a].top, rects[b].top);
        const smaller = Math.min(rects[a].width * rects[a].height, rects[b].width * rects[b].height);
        if (w > 0 && h > 0 && w * h > 0.2 * smaller)
          problems.push(`texts "${texts[a].textContent.trim()}" and "${texts[b].textContent.trim()}" overlap`);
      }
    return {index: i + 1, label, marks: marks.length, empty, problems, noData: /\bno data\b/i.test(label + " " + svg.textContent)};
  });
  const links = [...document.querySelectorAll("a[href]")].map(a => ({href: a.getAttribute("href"), protocol: a.protocol}));
  return {charts, links, bodyText: document.body ? document.body.innerText.trim().length : 0,
          height: Math.ceil(document.documentElement.scrollHeight),
          dom: (document.doctype ? "<!DOCTYPE " + document.doctype.name + ">\n" : "") + document.documentElement.outerHTML};
})()"""


class Chromium:
    """One headless Chromium driven over --remote-debugging-pipe, with a deadline on everything."""

    def __init__(self, exe, timeout):
        self.deadline = time.monotonic() + timeout
        self.timeout = timeout
        self.profile = tempfile.mkdtemp(prefix="trainsim-chromium-")
        self.log = tempfile.TemporaryFile()
        to_r, self.to_w = os.pipe()
        self.from_r, from_w = os.pipe()

        def fds():  # in the child: the pipe ends Chromium expects on fd 3 and fd 4
            a, b = os.dup(to_r), os.dup(from_w)
            os.dup2(a, 3)
            os.dup2(b, 4)

        self.proc = subprocess.Popen(
            [exe, "--headless=new", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--disable-dev-shm-usage",
             "--remote-debugging-pipe", f"--user-data-dir={self.profile}", "--no-first-run", "--no-default-browser-check",
             "--disable-background-networking", "--disable-component-update", "--disable-extensions", "about:blank"],
            preexec_fn=fds, pass_fds=(3, 4), stdin=subprocess.DEVNULL, stdout=self.log, stderr=self.log, start_new_session=True)
        os.close(to_r)
        os.close(from_w)
        self.buf, self.next_id, self.events, self.step = b"", 0, [], "starting Chromium"

    def send(self, method, params=None, session=None):
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        try:
            os.write(self.to_w, json.dumps(msg).encode() + b"\0")
        except BrokenPipeError:
            raise RuntimeError(f"Chromium exited ({self.step}): {self.stderr_tail()}") from None
        return self.next_id

    def wait_for(self, pred):
        """Reads messages until pred(msg); every message is kept in self.events."""
        while True:
            while b"\0" in self.buf:
                raw, self.buf = self.buf.split(b"\0", 1)
                msg = json.loads(raw)
                self.events.append(msg)
                if pred(msg):
                    return msg
            left = self.deadline - time.monotonic()
            if left <= 0 or not select.select([self.from_r], [], [], left)[0]:
                raise TimeoutError(f"Chromium did not answer within {self.timeout:g} s ({self.step})")
            chunk = os.read(self.from_r, 1 << 20)
            if not chunk:
                raise RuntimeError(f"Chromium exited ({self.step}): {self.stderr_tail()}")
            self.buf += chunk

    def call(self, method, params=None, session=None):
        self.step = method
        i = self.send(method, params, session)
        msg = self.wait_for(lambda m: m.get("id") == i)
        if "error" in msg:
            raise RuntimeError(f"{method}: {msg['error'].get('message')}")
        return msg["result"]

    def stderr_tail(self):
        self.log.seek(0)
        lines = [l for l in self.log.read().decode(errors="replace").splitlines() if "dbus" not in l]
        return " | ".join(lines[-5:]) or "no output"

    def close(self):
        """Asks Chromium to quit (it takes its helper processes along), kills its process group after 5 s."""
        try:
            self.send("Browser.close")
            self.proc.wait(5)
        except (RuntimeError, OSError, subprocess.TimeoutExpired):
            pass
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(10)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            pass
        os.close(self.to_w)
        os.close(self.from_r)
        self.log.close()
        shutil.rmtree(self.profile, ignore_errors=True)


def page_errors(events):
    """Console errors, uncaught exceptions and browser errors among the protocol events."""
    out = []
    for e in events:
        p = e.get("params", {})
        if e.get("method") == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
            text = " ".join(str(a.get("value", a.get("description", ""))) for a in p.get("args", []))
            out.append(f"console.{p['type']}: {text}")
        elif e.get("method") == "Runtime.exceptionThrown":
            d = p.get("exceptionDetails", {})
            what = d.get("exception", {}).get("description", "").split("\n")[0]
            out.append(f"{d.get('text', 'exception')} {what} (line {d.get('lineNumber', -1) + 1})")
        elif e.get("method") == "Log.entryAdded" and p.get("entry", {}).get("level") == "error":
            entry = p["entry"]
            out.append(f"browser {entry.get('source')} error: {entry.get('text')} {entry.get('url', '')}".strip())
    return out


SAFE_SCHEMES = ("file:", "https:")
MISSING_FILE = "chrome-error:"  # where Chromium lands on a link to a file that is not there: no script ran


def settled_value(browser, session, expression, tries=20):
    """The expression's value in whatever page the tab shows once a navigation under way has finished (an
    evaluation during one fails with "navigated or closed"); None when no page answers."""
    for _ in range(tries):
        try:
            value = browser.call("Runtime.evaluate", {"expression": expression, "returnByValue": True}, session=session)["result"].get("value")
            if value is not None:
                return value
        except RuntimeError as e:
            if "navigated" not in str(e) and "context" not in str(e):
                raise
        time.sleep(0.2)
    return None


def click_links(browser, session, path, links):
    """Problems with the page's links: each must resolve to file: or https:, and clicking it (on a fresh load of
    the page, so one click cannot hide another) must not run script in the page."""
    url = "file://" + os.path.abspath(path)
    problems = [f"link {l['href']!r} resolves to {l['protocol']} (only {' or '.join(SAFE_SCHEMES)})"
                for l in links if l["protocol"] not in SAFE_SCHEMES]
    state = "JSON.stringify([document.title, location.href])"
    for i, l in enumerate(links):
        browser.events.clear()
        browser.call("Page.navigate", {"url": url}, session=session)
        browser.step = f"reloading the page to click link {i + 1}"
        browser.wait_for(lambda m: m.get("method") == "Page.loadEventFired")
        before = browser.call("Runtime.evaluate", {"expression": state, "returnByValue": True}, session=session)["result"]["value"]
        click = f"document.querySelectorAll('a[href]')[{i}].click()"
        browser.call("Runtime.evaluate", {"expression": click}, session=session)
        time.sleep(0.3)  # a navigation the click started is under way or done
        after = settled_value(browser, session, state)
        title_before, href_before = json.loads(before)
        if after is not None:
            title_after, href_after = json.loads(after)
            if href_after == href_before and title_after != title_before:
                problems.append(f"clicking link {l['href']!r} ran script in the page (title {title_before!r} -> {title_after!r})")
            elif href_after != href_before and not href_after.startswith(SAFE_SCHEMES + (MISSING_FILE,)):
                problems.append(f"clicking link {l['href']!r} opened {href_after}")
    return problems


def check_page(exe, path, out_dir, width, height, timeout):
    """The problems of one page (empty when it passes); writes its screenshot and DOM."""
    browser = Chromium(exe, timeout)
    try:
        target = browser.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        s = browser.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Runtime", "Log", "Page"):
            browser.call(f"{domain}.enable", session=s)
        metrics = {"width": width, "height": height or 800, "deviceScaleFactor": 1, "mobile": False}
        browser.call("Emulation.setDeviceMetricsOverride", metrics, session=s)
        browser.call("Page.navigate", {"url": "file://" + os.path.abspath(path)}, session=s)
        browser.step = "waiting for the page's load event"
        browser.wait_for(lambda m: m.get("method") == "Page.loadEventFired")
        settle = "new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))"  # two frames painted
        browser.call("Runtime.evaluate", {"expression": settle, "awaitPromise": True}, session=s)
        facts = browser.call("Runtime.evaluate", {"expression": PAGE_FACTS, "returnByValue": True}, session=s)
        if "exceptionDetails" in facts:
            return [f"page checks could not run: {facts['exceptionDetails'].get('text')}"]
        facts = facts["result"]["value"]
        metrics["height"] = height or min(facts["height"], 16384)
        browser.call("Emulation.setDeviceMetricsOverride", metrics, session=s)
        shot = browser.call("Page.captureScreenshot", {"format": "png"}, session=s)
        stem = os.path.splitext(os.path.basename(path))[0]
        with open(os.path.join(out_dir, stem + ".png"), "wb") as f:
            f.write(base64.b64decode(shot["data"]))
        with open(os.path.join(out_dir, stem + ".dom.html"), "w", encoding="utf-8") as f:
            f.write(facts["dom"])
        problems = page_errors(browser.events)
        problems += click_links(browser, s, path, facts["links"])
    except (TimeoutError, RuntimeError, OSError) as e:
        return [str(e)]
    finally:
        browser.close()
    if facts["bodyText"] == 0:
        problems.append("the <body> shows no text")
    for c in facts["charts"]:
        name = f"chart {c['index']} ({c['label'] or 'no aria-label'})"
        if c["marks"] == 0 and not c["noData"]:
            problems.append(f"{name}: no .mark element drawn, and it does not say \"no data\"")
        if c["empty"]:
            problems.append(f"{name}: {c['empty']} of {c['marks']} marks laid out with an empty box")
        if not c["noData"]:
            problems += [f"{name}: {p}" for p in c["problems"]]
    return problems


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--chromium", default=shutil.which("chromium") or shutil.which("chromium-browser") or "")
    ap.add_argument("--out-dir", required=True)
    ap.add_argument("--width", type=int, default=1280)
    ap.add_argument("--height", type=int, default=0, help="screenshot height in px; 0: the whole page")
    ap.add_argument("--timeout", type=float, default=60, help="seconds for each Chromium run")
    ap.add_argument("files", nargs="+")
    args = ap.parse_args()
    exe = shutil.which(args.chromium) if args.chromium else None
    if not exe:
        print("SKIP: chromium not found" + (f" ({args.chromium})" if args.chromium else ""))
        return 77
    os.makedirs(args.out_dir, exist_ok=True)
    failed = 0
    for path in args.files:
        problems = check_page(exe, path, args.out_dir, args.width, args.height, args.timeout)
        for p in problems:
            print(f"{path}: {p}")
        if problems:
            failed += 1
        else:
            stem = os.path.splitext(os.path.basename(path))[0]
            print(f"{path}: ok in Chromium, screenshot {os.path.join(args.out_dir, stem + '.png')}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
