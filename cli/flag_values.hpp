#pragma once
// Flag values given as text that trainsim parses itself (CLI11 checks plain numbers and paths): the scenario
// field flags, slowdowns (ID:FACTOR), lists of GPU counts, budgets and comma lists. Pure functions, each fuzzed
// (tests/fuzz/fuzz_flag_values.cpp): a value inside its documented range, or InputError naming the flag.
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

namespace trainsim::cli {

enum class FlagType { Text, Integer, Number, Boolean };

// A flag that sets exactly one scenario field (a contract: scripts depend on these names).
struct FieldFlag {
  const char* flag;
  const char* pointer;
  FlagType type;
  const char* help;
};
const std::vector<FieldFlag>& field_flags();
const FieldFlag& field_flag_for(const std::string& pointer);  // the first flag when none sets `pointer`
// The field's JSON value: an integer, a finite number, a boolean (true/false, 1/0, yes/no) or the text itself.
nlohmann::json field_flag_value(const FieldFlag& f, const std::string& text);

// "ID:FACTOR" (the last ':' splits), ID not empty, FACTOR a slowdown from 1 to 1000.
std::pair<std::string, double> id_factor(const std::string& flag, const std::string& text);
// "INDEX:FACTOR" with INDEX a whole number from 0 to count - 1; the error calls it `index_name` ("GPU") and
// `noun` ("GPU rank").
std::pair<int, double> index_factor(const std::string& flag, const std::string& text, int count, const std::string& index_name,
                                    const std::string& noun);

// plan --gpus: "N", "A..B" (doubling from A up to B) or "A,B,C"; each from 1 to limits::kMaxGpus, at most 64.
std::vector<int> parse_gpu_counts(const std::string& text);

// plan --budget: money ("$250000", "250000USD") or a duration with its unit ("30d"); exactly one is above 0.
struct Budget {
  double max_cost = 0, max_time_s = 0;
};
Budget parse_budget(const std::string& text);

// export --rdma-resource: "DOMAIN/NAME[=COUNT]", a Kubernetes extended resource as device plugins register them,
// COUNT from 1 to 1024 (default 1).
std::pair<std::string, int> parse_rdma_resource(const std::string& text);

// "a,b,,c" -> a, b, c (empty items dropped).
std::vector<std::string> split_list(const std::string& text);

}  // namespace trainsim::cli
