#pragma once
// Markdown for design docs and pull requests: GitHub-flavoured pipe tables that render in any viewer.
#include <ostream>
#include <string>
#include <vector>

namespace trainsim::md {

// A pipe table; `numeric[i]` right-aligns column i. Pipes and newlines in cells are escaped.
void table(std::ostream& os, const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows,
           const std::vector<bool>& numeric = {});
void heading(std::ostream& os, const std::string& text, int level = 2);
std::string cell(const std::string& s);  // escapes | and line breaks

}  // namespace trainsim::md
