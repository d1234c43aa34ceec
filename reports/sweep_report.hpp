#pragma once
// A merged sweep: one row per point (its inputs, the columns the sweep keeps of its result, its exit code and
// error), built from the points' records, and printed as a table, CSV, Markdown or an HTML report whose charts put a
// numeric axis on x, one line per value of the other axes, a chart per numeric column. Deterministic: the same
// records give the same bytes, whichever shards ran them.
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace trainsim::sweep_report {

struct Column {
  std::string name, pointer;
};

// The merged result ("command": "sweep merge") from the sweep's header fields and the records found, in index order
// (a missing point is nullopt). Axis names in order; columns as the sweep keeps them.
nlohmann::json merge(const nlohmann::json& header, const std::vector<std::string>& axes, const std::vector<Column>& columns,
                     const std::vector<std::string>& charts, const std::vector<std::optional<nlohmann::json>>& records);

void print_table(std::ostream& os, const nlohmann::json& merged);
void print_csv(std::ostream& os, const nlohmann::json& merged);
void print_markdown(std::ostream& os, const nlohmann::json& merged);
std::string html(const nlohmann::json& merged);

}  // namespace trainsim::sweep_report
