#!/usr/bin/env python3
"""Each rule of check_html.py, proven on its own: one defect per page must be reported (and nothing else
needed to fail it), and pages that only look suspicious ("Infinity Fabric", a relative <a href>, a chart
saying "no data") must pass. Also: bad_report.html is rejected for each of its four planted defects."""
import os
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from check_html import check  # noqa: E402

HEAD = '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n<title>t</title>\n</head>\n<body>\n'
CHART = '<svg class="chart" data-marks="1" viewBox="0 0 9 9"><rect class="mark" x="1" y="1" width="2" height="{h}"/></svg>'


def problems(page, max_bytes=2_000_000, min_charts=0):
    with tempfile.NamedTemporaryFile("w", suffix=".html", delete=False, encoding="utf-8") as f:
        f.write(page)
    try:
        return [msg for _line, msg in check(f.name, max_bytes, min_charts)]
    finally:
        os.remove(f.name)


def body(html):
    return HEAD + "<p>text</p>\n" + html + "\n</body>\n</html>\n"


class Rules(unittest.TestCase):
    def assertReports(self, page, fragment, **kw):
        found = problems(page, **kw)
        self.assertTrue(any(fragment in p for p in found), f"expected {fragment!r} among {found}")

    def test_valid_pages_pass(self):
        for html in ["", CHART.format(h=3), '<p><a href="plan.trace.json">trace</a></p>',
                     '<img src="data:image/png;base64,AAAA" alt="">', "<p>AMD Infinity Fabric, infinity-fabric-mi300x, "
                     "InfiniBand, information, isNaN, banana</p>",
                     '<svg class="chart" data-marks="0" aria-label="Failures: no data"></svg>',
                     '<svg class="chart" data-marks="0"><text>No data</text></svg>',
                     '<svg><defs><circle id="m" r="2"/></defs><use href="#m"/></svg><br><hr/>']:
            self.assertEqual(problems(body(html)), [], html)

    def test_document_shell(self):
        self.assertReports(body("").replace("<!DOCTYPE html>\n", ""), "must start with <!DOCTYPE html>")
        self.assertReports(body("").replace(' lang="en"', ""), "no <html lang")
        self.assertReports(body("").replace('<meta charset="utf-8">', ""), "no <meta charset")
        self.assertReports(body("").replace('utf-8', "latin1"), "expected utf-8")
        self.assertReports(body("").replace("<title>t</title>", "<title> </title>"), "no <title>")

    def test_nesting(self):
        self.assertReports(body("<div><span>x</div>"), "<span> opened at line")
        self.assertReports(body("<div>x"), "<div> opened at line 9 is not closed before </body>")
        self.assertReports(HEAD + "<p>x</p>\n", "<body> opened at line 7 is never closed")
        self.assertReports(body("</span>"), "</span> closes nothing")
        self.assertReports(body("<div/>"), "cannot self-close")

    def test_attributes_and_ids(self):
        self.assertReports(body('<p id="a">x</p><p id="a">y</p>'), 'id="a" also used')
        self.assertReports(body('<p class="a" class="b">x</p>'), "attribute class twice")

    def test_self_contained(self):
        self.assertReports(body('<script src="app.js"></script>'), "scripts must be inline")
        self.assertReports(body('<img src="https://example.com/x.png" alt="">'), "external resource")
        self.assertReports(body('<img src="//example.com/x.png" alt="">'), "external resource")
        self.assertReports(body('<img src="x.png" alt="">'), "loads a file")
        self.assertReports(body('<link rel="stylesheet" href="style.css">'), "loads a file")
        self.assertReports(body('<a href="https://example.com">x</a>'), "external resource")
        self.assertReports(body('<p style="background:url(x.png)">x</p>'), "loads a file")
        self.assertReports(body("<style>@import 'x.css';</style>"), "loads a file")

    def test_charts(self):
        self.assertReports(body('<svg class="chart" data-marks="0"></svg>'), 'does not say "no data"')
        self.assertReports(body(CHART.format(h=3).replace(' data-marks="1"', "")), "expected a count")
        self.assertReports(body(CHART.format(h=3).replace('"1"', '"2"')), "but 1 elements have class mark")
        self.assertReports(body(""), "expected at least 1", min_charts=1)

    def test_non_finite_numbers(self):
        self.assertReports(body("<td>nan GiB</td>".join(["<table><tr>", "</tr></table>"])), 'text "nan"')
        self.assertReports(body("<p>-inf s</p>"), 'text "-inf"')
        self.assertReports(body(CHART.format(h="NaN")), "non-finite number")
        self.assertReports(body('<svg><path d="M0,0Lnan,5"/></svg>'), "non-finite number")
        self.assertReports(body('<svg><path d="M0,infL5,5"/></svg>'), "non-finite number")

    def test_size(self):
        self.assertReports(body("<p>" + "x" * 1000 + "</p>"), "limit 1,000", max_bytes=1000)

    def test_bad_fixture_has_each_defect(self):
        found = "\n".join(p for _l, p in check(os.path.join(HERE, "fixtures", "bad_report.html"), 2_000_000, 0))
        for fragment in ["<span> opened", "NaN", "scripts must be inline", 'data-marks="3" but 2']:
            self.assertIn(fragment, found)

    def test_good_fixture(self):
        self.assertEqual(check(os.path.join(HERE, "fixtures", "good_report.html"), 2_000_000, 2), [])


if __name__ == "__main__":
    unittest.main()
