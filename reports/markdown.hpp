#pragma once
// Markdown for design docs and pull requests: GitHub-flavoured pipe tables that render in any viewer.
#include <ostream>
#include <string>
#include <vector>

namespace trainsim::md {

// A pipe table; `numeric[i]` right-aligns column i. Cells are escaped by cell().
void table(std::ostream& os, const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows,
           const std::vector<bool>& numeric = {});
// The heading's text escaped as text() does.
void heading(std::ostream& os, const std::string& text, int level = 2);
// Text that stays one run of text: & < > as HTML entities (raw HTML in a model name or a trace is not passed
// through), line breaks and other control characters as spaces (they would start new rows, headings or blocks),
// bytes that are not UTF-8 as U+FFFD.
std::string text(const std::string& s);
std::string cell(const std::string& s);  // text(), and | escaped; an empty cell is one space

}  // namespace trainsim::md
