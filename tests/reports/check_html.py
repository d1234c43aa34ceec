#!/usr/bin/env python3
"""Strict checks of one trainsim HTML report, before any browser sees it.

  check_html.py FILE.html [--max-bytes N] [--min-charts K]

A report must open anywhere, offline, years from now, and its charts must show what the numbers say. So:
  - `<!DOCTYPE html>` first, `<html lang=...>`, `<meta charset="utf-8">`, a non-empty `<title>`, a `<body>`;
  - every non-void element closed explicitly and properly nested (a stack over html.parser events; SVG
    elements may self-close `<circle/>`, HTML ones may not); no attribute twice in a tag; no id twice in the page;
  - with python3-html5lib installed, also no parse error of the WHATWG algorithm (catches what a stack cannot,
    such as a `<div>` inside a `<p>`, which browsers silently split);
  - self-contained: no `<script src>`, nothing loaded from elsewhere (src, srcset, poster, object data, svg
    `<image>`/`<use>` href, `<link>` href, CSS `url()` / `@import`) unless it is a data: URI or a #fragment;
    no href or src at all pointing at http(s):// or protocol-relative //. A plain `<a href>` to a relative
    path is allowed: the report links files written beside it, and following a link loads nothing on open;
  - each `<svg class="chart">` has data-marks equal to the number of its descendants whose class list
    holds `mark`, and at least one, unless its aria-label or text says "no data";
  - no non-finite number (nan, -nan, inf, -inf, Infinity, NaN in any case) in text, attributes or CSS:
    what C++ prints for a NaN/inf double, and what would make an SVG shape vanish. A token counts only as
    a whole word, optionally after one SVG path command letter ("Mnan,5"), so "banana", "InfiniBand",
    "isNaN" and AMD's "Infinity Fabric" / "infinity-fabric-mi300x" are not numbers. `<script>` is not scanned;
  - at least --min-charts charts, and the file under --max-bytes (2,000,000 by default).
Prints "FILE:LINE: problem" for each problem and exits 1; exits 0 when the page is valid.
"""
import argparse
import re
import sys
from html.parser import HTMLParser

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}
# Attributes that make the browser fetch something as the page opens.
LOADING_ATTRS = {"src", "srcset", "poster", "data", "background"}
EXTERNAL = re.compile(r"^\s*(?:https?:)?//", re.I)
INLINE = re.compile(r"^\s*(?:data:|#)", re.I)
CSS_URL = re.compile(r"url\(\s*['\"]?([^'\")]*)|@import", re.I)
NONFINITE = re.compile(r"[-+]?(?:nan|inf(?:inity)?)", re.I)
# After a number: an SVG path command and its next number ("M0,nanL5,5"), or a CSS unit ("NaNpx").
NUMBER_GOES_ON = re.compile(r"[MLHVCSQTA](?=[-+.,\d]|nan|inf)|Z(?![A-Z])|(?:px|em|rem|pt)(?![A-Z])", re.I)
NO_DATA = re.compile(r"\bno data\b", re.I)


def nonfinite_numbers(text):
    """The tokens in `text` that are a NaN or an infinity written as a number (rules in the module docstring)."""
    found = []
    for m in NONFINITE.finditer(text):
        before, after = text[max(0, m.start() - 2):m.start()], text[m.end():]
        if (after[:1].isalnum() or after[:1] == "_" or before[-1:] == "_") and not NUMBER_GOES_ON.match(after):
            continue  # banana, info, infinite, InfiniBand, has_nan; but "nanL5" (path) and "NaNpx" (CSS) stay
        if before[-1:].isalpha() and before[-2:-1].isalpha():
            continue  # isNaN, financial, chart-nan; but "Mnan" and " L-inf" (path commands) stay
        if m.group().lower().lstrip("+-") == "infinity" and re.match(r"[\s-]+[A-Za-z]", after):
            continue  # Infinity Fabric, infinity-fabric-mi300x
        found.append(m.group())
    return found


class Checker(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.problems = []  # (line, message)
        self.stack = []  # (tag, line)
        self.ids = {}
        self.charts = []  # open charts: dicts with line, marks, declared, label, text, depth
        self.done_charts = []
        self.seen = {"html_lang": False, "charset": False, "title": "", "body": False}
        self.in_title = False

    def problem(self, msg, line=None):
        self.problems.append((line or self.getpos()[0], msg))

    def handle_decl(self, decl):
        if decl.strip().lower() != "doctype html":
            self.problem(f"doctype is <!{decl}>, expected <!DOCTYPE html>")

    def handle_starttag(self, tag, attrs):
        self.open_tag(tag, attrs, self_closing=False)

    def handle_startendtag(self, tag, attrs):
        self.open_tag(tag, attrs, self_closing=True)

    def open_tag(self, tag, attrs, self_closing):
        line = self.getpos()[0]
        names = [k for k, _ in attrs]
        for k in sorted({k for k in names if names.count(k) > 1}):
            self.problem(f"<{tag}> has attribute {k} twice")
        a = {k: (v or "") for k, v in attrs}
        self.check_attrs(tag, a)
        in_svg = any(t == "svg" for t, _ in self.stack) or tag == "svg"
        if tag == "html":
            self.seen["html_lang"] = bool(a.get("lang", "").strip())
        if tag == "meta" and "charset" in a:
            self.seen["charset"] = True
            if a["charset"].lower() != "utf-8":
                self.problem(f'<meta charset="{a["charset"]}">, expected utf-8')
        if tag == "body":
            self.seen["body"] = True
        if "mark" in a.get("class", "").split():
            for chart in self.charts:
                chart["marks"] += 1
        if tag == "svg" and "chart" in a.get("class", "").split():
            self.charts.append({"line": line, "marks": 0, "declared": a.get("data-marks"),
                                "label": a.get("aria-label", ""), "text": "", "depth": len(self.stack)})
        if tag in VOID:
            return
        if self_closing and not in_svg:
            self.problem(f"<{tag}/>: a non-void HTML element cannot self-close; write <{tag}></{tag}>")
        if self_closing:
            self.close_charts(len(self.stack))  # an empty <svg class="chart"/>
            return
        self.stack.append((tag, line))
        self.in_title = tag == "title" and not in_svg

    def check_attrs(self, tag, a):
        for k, v in a.items():
            if k in ("href", "xlink:href", "src") and EXTERNAL.match(v):
                self.problem(f"<{tag} {k}=\"{v}\">: external resource; a report must be self-contained")
            elif (k in LOADING_ATTRS or (k in ("href", "xlink:href") and tag != "a")) and v and not INLINE.match(v):
                self.problem(f"<{tag} {k}=\"{v}\">: loads a file; inline it (data: URI) or drop it")
            if k == "style":
                self.check_css(v)
            for token in nonfinite_numbers(v):
                self.problem(f"<{tag} {k}=\"...{token}...\">: non-finite number")
        if tag == "script" and "src" in a:
            self.problem("<script src=...>: scripts must be inline")
        if "id" in a:
            if a["id"] in self.ids:
                self.problem(f'id="{a["id"]}" also used at line {self.ids[a["id"]]}')
            else:
                self.ids[a["id"]] = self.getpos()[0]

    def check_css(self, css, line=None):
        for m in CSS_URL.finditer(css):
            if m.group(0).lower() == "@import" or not INLINE.match(m.group(1) or ""):
                self.problem(f"CSS {m.group(0)}...: loads a file; a report must be self-contained", line)

    def handle_endtag(self, tag):
        if tag in VOID:
            return
        if not any(t == tag for t, _ in self.stack):
            self.problem(f"</{tag}> closes nothing")
            return
        while self.stack:
            open_tag, open_line = self.stack.pop()
            if open_tag == tag:
                break
            self.problem(f"<{open_tag}> opened at line {open_line} is not closed before </{tag}>")
        self.in_title = False
        self.close_charts(len(self.stack))

    def close_charts(self, depth):
        while self.charts and self.charts[-1]["depth"] >= depth:
            self.done_charts.append(self.charts.pop())

    def handle_data(self, data):
        line = self.getpos()[0]
        top = self.stack[-1][0] if self.stack else ""
        if self.in_title:
            self.seen["title"] += data
        for chart in self.charts:
            chart["text"] += data
        if top == "script":
            return
        if top == "style":
            self.check_css(data, line)
        for token in nonfinite_numbers(data):
            at = line + data[:data.find(token)].count("\n")
            self.problem(f'text "{token}": non-finite number', at)

    def finish(self):
        self.close()
        for tag, line in reversed(self.stack):
            self.problem(f"<{tag}> opened at line {line} is never closed", line)
        if not self.seen["html_lang"]:
            self.problem("no <html lang=...>", 1)
        if not self.seen["charset"]:
            self.problem('no <meta charset="utf-8">', 1)
        if not self.seen["title"].strip():
            self.problem("no <title> with text", 1)
        if not self.seen["body"]:
            self.problem("no <body>", 1)
        for c in self.done_charts:
            no_data = NO_DATA.search(c["label"]) or NO_DATA.search(c["text"])
            if c["declared"] is None or not c["declared"].isdigit():
                self.problem(f"chart: data-marks=\"{c['declared']}\", expected a count", c["line"])
            elif int(c["declared"]) != c["marks"]:
                self.problem(f"chart: data-marks=\"{c['declared']}\" but {c['marks']} elements have class mark", c["line"])
            if c["marks"] == 0 and not no_data:
                self.problem("chart draws no mark and does not say \"no data\"", c["line"])


def html5lib_problems(text):
    """Parse errors of the WHATWG algorithm, when Debian's python3-html5lib is installed."""
    try:
        import html5lib
        from html5lib.constants import E
    except ImportError:
        return []
    parser = html5lib.HTMLParser(strict=False)
    parser.parse(text)
    out = []
    for (line, _col), code, data in parser.errors:
        try:
            msg = E.get(code, code) % (data or {})
        except (KeyError, TypeError, ValueError):
            msg = code
        out.append((line, f"html5lib: {msg}"))
    return out


def check(path, max_bytes, min_charts):
    with open(path, "rb") as f:
        raw = f.read()
    problems = []
    if len(raw) >= max_bytes:
        problems.append((1, f"{len(raw):,} bytes, limit {max_bytes:,}"))
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        return problems + [(raw[:e.start].count(b"\n") + 1, f"not UTF-8: {e.reason}")]
    if not re.match(r"<!DOCTYPE html>", text, re.I):
        problems.append((1, "the file must start with <!DOCTYPE html>"))
    checker = Checker()
    checker.feed(text)
    checker.finish()
    problems += checker.problems + html5lib_problems(text)
    if len(checker.done_charts) < min_charts:
        problems.append((1, f"{len(checker.done_charts)} charts (svg class=\"chart\"), expected at least {min_charts}"))
    return sorted(set(problems))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("file")
    ap.add_argument("--max-bytes", type=int, default=2_000_000)
    ap.add_argument("--min-charts", type=int, default=0)
    args = ap.parse_args()
    problems = check(args.file, args.max_bytes, args.min_charts)
    for line, msg in problems:
        print(f"{args.file}:{line}: {msg}")
    if not problems:
        print(f"{args.file}: valid")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
