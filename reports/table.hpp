#pragma once
// A plain terminal table: left-aligned text columns, right-aligned numbers, one space of padding.
#include <ostream>
#include <string>
#include <vector>

#include "models/core/units.hpp"

namespace trainsim {

class TextTable {
 public:
  explicit TextTable(std::vector<std::string> header) : header_(std::move(header)) {}
  void add_row(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  void print(std::ostream& os, const std::string& indent = "  ") const;

 private:
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
};

// Bytes as GiB with `digits` decimals (GiB columns).
std::string gib(double bytes, int digits = 2);

// A unit for a chart's time axis that keeps its numbers readable: days from two days up, hours from two hours,
// else minutes.
struct TimeUnit {
  const char* name;
  double seconds;
};
TimeUnit time_unit_for(double max_seconds);

// A CSV field from a user-given string: RFC 4180 quoting, valid UTF-8 without control bytes, and a leading ' on a
// cell a spreadsheet would run as a formula (OWASP).
std::string csv_field(const std::string& s);

}  // namespace trainsim
