// What user-given text becomes in each output format: HTML (escape, link_target), Markdown (md::text, md::cell)
// and CSV (csv_field). Expected strings are written out by hand from the rules each function cites.
#include <doctest/doctest.h>

#include <sstream>

#include "reports/html_document.hpp"
#include "reports/markdown.hpp"
#include "reports/table.hpp"

using namespace trainsim;

TEST_CASE("link_target: a file path can only resolve to a file; https URLs pass") {
  // RFC 3986 section 2.1: every byte outside ALPHA / DIGIT / "-" / "." / "_" / "~" (and the path's "/") as %XX.
  CHECK(html::link_target("javascript:void(document.title='x')") == "./javascript%3Avoid%28document.title%3D%27x%27%29");
  CHECK(html::link_target("data:text/html,<script>alert(1)</script>") == "./data%3Atext/html%2C%3Cscript%3Ealert%281%29%3C/script%3E");
  CHECK(html::link_target("q\"onmouseover=alert(1) x=\".json") == "./q%22onmouseover%3Dalert%281%29%20x%3D%22.json");
  CHECK(html::link_target("trace.json") == "./trace.json");
  CHECK(html::link_target("../runs/trace 1.json") == "../runs/trace%201.json");
  CHECK(html::link_target("/tmp/t.json") == "/tmp/t.json");
  CHECK(html::link_target("https://ui.perfetto.dev/#!/viewer?x=1") == "https://ui.perfetto.dev/#!/viewer?x=1");
  CHECK(html::link_target("https://a.example/\"><b>") == "https://a.example/%22%3E%3Cb%3E");
  CHECK(html::link_target("HTTPS://a.example") == "./HTTPS%3A//a.example");  // not the lower-case scheme: a file name
  // In a URL a '%' stays only as an escape's start (RFC 3986 section 2.4); a stray one is encoded (found by fuzz_output_escaping).
  CHECK(html::link_target("https://a.example/a%20b") == "https://a.example/a%20b");
  CHECK(html::link_target("https://a.example/100%") == "https://a.example/100%25");
  CHECK(html::link_target("https://a.example/%zz") == "https://a.example/%25zz");
}

TEST_CASE("a link in a Document is the encoded target, escaped for the attribute") {
  html::Document d("t");
  d.link("javascript:alert(1)", "x");
  CHECK(d.str().find("<a href=\"./javascript%3Aalert%281%29\">x</a>") != std::string::npos);
  CHECK(d.str().find("href=\"javascript") == std::string::npos);
}

TEST_CASE("html::escape: entities, no control characters, invalid UTF-8 as U+FFFD") {
  CHECK(html::escape("<b>\"a\" & 'b'</b>") == "&lt;b&gt;&quot;a&quot; &amp; &apos;b&apos;&lt;/b&gt;");
  CHECK(html::escape(std::string("a\0b\x01" "c", 5)) == "abc");
  CHECK(html::escape("caf\xc3\xa9") == "caf\xc3\xa9");                    // valid two-byte sequence kept
  CHECK(html::escape("x\xff" "y") == "x\xef\xbf\xbdy");                   // 0xFF never starts a sequence
  CHECK(html::escape("\xe2\x82") == "\xef\xbf\xbd\xef\xbf\xbd");          // truncated three-byte sequence
  CHECK(html::escape("\xed\xa0\x80") == "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");  // a UTF-16 surrogate (RFC 3629 section 3)
}

TEST_CASE("Markdown: a newline or raw HTML in a name stays text") {
  CHECK(md::text("llama\n# Injected heading") == "llama # Injected heading");
  CHECK(md::text("<img src=x onerror=alert(1)>") == "&lt;img src=x onerror=alert(1)&gt;");
  CHECK(md::text("a & b") == "a &amp; b");
  CHECK(md::text(std::string("nul\0byte", 8)) == "nul byte");
  CHECK(md::text("\xc3") == "\xef\xbf\xbd");
  CHECK(md::cell("a|b\r\nc") == "a\\|b  c");
  CHECK(md::cell("") == " ");
  std::ostringstream os;
  md::heading(os, "model\n| x | y |\n<script>", 1);
  CHECK(os.str() == "# model | x | y | &lt;script&gt;\n\n");
}

TEST_CASE("csv_field: RFC 4180 quoting, formulas made text (OWASP), numbers left alone") {
  CHECK(csv_field("fifo") == "fifo");
  CHECK(csv_field("a,b") == "\"a,b\"");
  CHECK(csv_field("say \"hi\"") == "\"say \"\"hi\"\"\"");
  // OWASP "CSV Injection": a leading = + - @ tab or CR is prefixed with ' and the cell quoted.
  CHECK(csv_field("=HYPERLINK(\"http://x\")") == "\"'=HYPERLINK(\"\"http://x\"\")\"");
  CHECK(csv_field("+cmd") == "\"'+cmd\"");
  CHECK(csv_field("-2+3") == "\"'-2+3\"");
  CHECK(csv_field("@SUM(A1)") == "\"'@SUM(A1)\"");
  CHECK(csv_field("\tx") == "\"'\tx\"");
  CHECK(csv_field("-12") == "-12");
  CHECK(csv_field("+1.5e-3") == "+1.5e-3");
  CHECK(csv_field("-1e") == "\"'-1e\"");
  CHECK(csv_field(std::string("a\0b", 3)) == "ab");
  CHECK(csv_field("j\xff") == "j\xef\xbf\xbd");
}
