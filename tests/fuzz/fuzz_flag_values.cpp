// libFuzzer target: any bytes as the text of a flag that trainsim parses itself. The first byte picks the parser
// (and, where one is needed, the second a scenario field flag or a count); the rest is the flag's text. Each
// parser returns a value inside its documented range or throws InputError naming its flag:
//   field flags (--tp, --oversubscription, --sequence-parallel, --model, ...)  an integer, a finite number, a
//        boolean, or the text itself;
//   --straggler / --slow-node / --slow-link   an index in [0, count) or a non-empty id, a factor in [1, 1000];
//   plan --gpus        1 to 64 counts, each in [1, 2^20]; A..B doubling and increasing;
//   plan --budget      money or a duration, exactly one above 0, finite;
//   comma lists        no empty item, no comma;
//   cluster --policy   a registered ordering and a known placement;
//   quantities (units.hpp, every kind: --span, --time-margin, scenario values)  finite when read;
//   export --rdma-resource   DOMAIN/NAME with one '/', both parts non-empty, a count in [1, 1024].
// Another exception, a crash or a sanitizer report is a finding (abort).
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "cli/flag_values.hpp"
#include "models/core/errors.hpp"
#include "models/core/limits.hpp"
#include "models/core/units.hpp"
#include "sim/cluster/cluster_state.hpp"
#include "sim/cluster/policies/scheduler_policy.hpp"

using namespace trainsim;
using namespace trainsim::cli;

namespace {

[[noreturn]] void broken(const char* what, const std::string& in) {
  std::fprintf(stderr, "broken promise (%s): %zu bytes in\n", what, in.size());
  std::abort();
}

void check_field_flag(const FieldFlag& f, const std::string& text) {
  const nlohmann::json v = field_flag_value(f, text);
  const bool ok = f.type == FlagType::Integer   ? v.is_number_integer()
                  : f.type == FlagType::Number  ? v.is_number() && std::isfinite(v.get<double>())
                  : f.type == FlagType::Boolean ? v.is_boolean()
                                                : v.is_string() && v.get<std::string>() == text;
  if (!ok) broken(f.flag, text);
}

void check_slowdowns(const std::string& text, int count) {
  const auto [id, factor] = id_factor("--slow-link", text);
  if (id.empty() || !(factor >= 1 && factor <= 1000)) broken("id_factor", text);
  const auto [index, f] = index_factor("--straggler", text, count, "GPU", "GPU rank");
  if (index < 0 || index >= count || !(f >= 1 && f <= 1000)) broken("index_factor", text);
}

void check_gpu_counts(const std::string& text) {
  const std::vector<int> counts = parse_gpu_counts(text);
  if (counts.empty() || counts.size() > 64) broken("parse_gpu_counts: count", text);
  for (std::size_t i = 0; i < counts.size(); ++i) {
    if (counts[i] < 1 || counts[i] > limits::kMaxGpus) broken("parse_gpu_counts: range", text);
    if (text.find("..") != std::string::npos && i > 0 && counts[i] != 2 * counts[i - 1]) broken("parse_gpu_counts: doubling", text);
  }
}

void check_budget(const std::string& text) {
  const Budget b = parse_budget(text);
  if (!std::isfinite(b.max_cost) || !std::isfinite(b.max_time_s) || ((b.max_cost > 0) == (b.max_time_s > 0)) || b.max_cost < 0 || b.max_time_s < 0)
    broken("parse_budget", text);
}

void check_list(const std::string& text) {
  std::size_t total = 0;
  for (const std::string& item : split_list(text)) {
    if (item.empty() || item.find(',') != std::string::npos) broken("split_list", text);
    total += item.size();
  }
  if (total > text.size()) broken("split_list: longer than its text", text);
}

void check_policy(const std::string& text) {
  const sim::cluster::PolicyChoice c = sim::cluster::parse_policy_choice(text, "--policy");
  sim::cluster::PlacementKind kind;
  if (!sim::cluster::find_policy(c.ordering) || !sim::cluster::placement_from_string(c.placement, &kind)) broken("parse_policy_choice", text);
}

void check_quantities(const std::string& text) {
  for (Quantity q : {Quantity::Count, Quantity::Bytes, Quantity::Bandwidth, Quantity::FlopRate, Quantity::Time, Quantity::Power, Quantity::Money,
                     Quantity::Fraction}) {
    std::string why;
    const auto v = parse_quantity(text, q, &why);
    if (v && !std::isfinite(*v)) broken("parse_quantity: not finite", text);
    if (!v && why.empty()) broken("parse_quantity: no reason", text);
  }
}

void check_rdma_resource(const std::string& text) {
  const auto [name, count] = parse_rdma_resource(text);
  const std::size_t slash = name.find('/');
  if (slash == std::string::npos || slash == 0 || slash + 1 == name.size() || name.find('/', slash + 1) != std::string::npos || count < 1 ||
      count > 1024 || name.find_first_of(" \t\n\":=") != std::string::npos)
    broken("parse_rdma_resource", text);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  const int which = data[0] % 8, pick = data[1];
  const std::string text(reinterpret_cast<const char*>(data) + 2, size - 2);
  const char* flag = "";
  try {
    switch (which) {
      case 0: {
        const FieldFlag& f = field_flags()[static_cast<std::size_t>(pick) % field_flags().size()];
        flag = f.flag;
        check_field_flag(f, text);
        break;
      }
      case 1: flag = "--slow-link"; check_slowdowns(text, 1 + pick * 64); break;
      case 2: flag = "--gpus"; check_gpu_counts(text); break;
      case 3: flag = "--budget"; check_budget(text); break;
      case 4: check_list(text); break;
      case 5: flag = "--policy"; check_policy(text); break;
      case 6: check_quantities(text); break;
      case 7: flag = "--rdma-resource"; check_rdma_resource(text); break;
    }
  } catch (const InputError& e) {
    // The error names a flag of this parser (the slowdowns: either of the two tried).
    const std::string path = e.path();
    if (which == 1 ? path != "--slow-link" && path != "--straggler" : path != flag) broken("InputError names another flag", text);
  }
  return 0;
}
