#pragma once
// A self-contained HTML page for a report: inline CSS (screen and print), headings, paragraphs, tables and
// figures holding inline SVG charts (svg_chart.hpp). No script, no network: the file opens anywhere.
#include <string>
#include <vector>

namespace trainsim::html {

// Text and attribute values: & < > " ' escaped, control characters dropped (one escaping for the page and its charts).
std::string escape(const std::string& s);

// The href for a link: an https:// URL as it is (characters that may not appear in a URL percent-encoded), anything
// else as a file path, percent-encoded so that it can only ever resolve to a file beside the report.
std::string link_target(const std::string& target);

class Document {
 public:
  explicit Document(std::string title, std::string subtitle = "");
  void heading(const std::string& text, int level = 2);
  void paragraph(const std::string& text);
  // `numeric[i]`: column i right-aligned (numbers); cells are text (escaped).
  void table(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows, const std::vector<bool>& numeric = {});
  // An inline SVG chart (trusted markup from svg::render) with a caption.
  void figure(const std::string& svg, const std::string& caption);
  // Small multiples: several charts in a grid (as many columns as the page width holds), one caption for all.
  void figures(const std::vector<std::string>& svgs, const std::string& caption);
  // A paragraph holding a link to `target`: a local file written beside the report (relative paths stay valid
  // offline) or an https: URL, encoded by link_target().
  void link(const std::string& target, const std::string& text);
  // Key facts as a definition list ("Model": "llama3-8b, 8.03B parameters").
  void facts(const std::vector<std::pair<std::string, std::string>>& items);
  std::string str() const;  // the whole page, <!DOCTYPE html> first

 private:
  std::string title_, subtitle_, body_;
};

}  // namespace trainsim::html
