#include "plan_report.hpp"

#include <algorithm>

#include "estimate_report.hpp"
#include "models/calibration/accuracy_bands.hpp"
#include "models/compute/recompute_policy.hpp"
#include "models/core/json_reader.hpp"
#include "models/core/units.hpp"
#include "models/scenario/framework.hpp"
#include "models/scenario/scenario.hpp"
#include "table.hpp"

namespace trainsim {

using Json = nlohmann::json;

namespace {
// The band of a step (models/calibration/accuracy_bands.hpp): speeds invert the time band.
Json band_json(const StepEstimate& s) {
  if (!s.band) return nullptr;
  const AccuracyBand& b = *s.band;
  return {{"group", b.group}, {"cases", b.cases}, {"p10", b.low}, {"median", b.median}, {"p90", b.high}, {"regime", b.regime},
          {"extrapolated", b.extrapolated},
          {"meaning", b.extrapolated ? "the scenario's regime has fewer than 5 measured runs: measured / predicted step time over the runs of the "
                                       "group named, widened by the spread between sources"
                                     : "measured / predicted step time for a run from a source not yet measured, from the reference runs of this "
                                       "framework family and regime (scale, dense or MoE): their scatter within a source, at the lowest and highest "
                                       "source median"}};
}
Json or_null(bool known, double v) { return known ? Json(v) : Json(nullptr); }
}  // namespace

Json step_json(const StepEstimate& s) {
  const StepBreakdown& b = s.breakdown;
  const bool band = s.band && s.time_s_low > 0 && s.time_s_high > 0;
  return {{"time_s", s.time_s},
          {"time_s_low", or_null(band, s.time_s_low)},
          {"time_s_high", or_null(band, s.time_s_high)},
          {"tokens_per_s_low", or_null(band, band ? s.tokens_per_s * s.time_s / s.time_s_high : 0)},
          {"tokens_per_s_high", or_null(band, band ? s.tokens_per_s * s.time_s / s.time_s_low : 0)},
          {"mfu_low", or_null(band, band ? s.mfu * s.time_s / s.time_s_high : 0)},
          {"mfu_high", or_null(band, band ? s.mfu * s.time_s / s.time_s_low : 0)},
          {"band", band_json(s)},
          {"tokens_per_s", s.tokens_per_s},
          {"mfu", s.mfu},
          {"hfu", s.hfu},
          {"model_flops", s.model_flops},
          {"hardware_flops", s.hardware_flops},
          {"breakdown",
           {{"compute_s", b.compute_s},
            {"host_s", b.host_s},
            {"recompute_s", b.recompute_s},
            {"tp_comm_s", b.tp_comm_s},
            {"cp_comm_s", b.cp_comm_s},
            {"ep_comm_s", b.ep_comm_s},
            {"pp_comm_s", b.pp_comm_s},
            {"dp_comm_s", b.dp_comm_s},
            {"bubble_s", b.bubble_s},
            {"optimizer_s", b.optimizer_s},
            {"overhead_s", b.overhead_s}}}};
}

Json training_cost_json(const TrainingCost& c) {
  // An unknown price is null, never 0.
  return {{"iterations", c.iterations}, {"time_to_train_s", c.time_to_train_s}, {"gpu_hours", c.gpu_hours},
          {"cost", c.priced && c.time_to_train_s > 0 ? Json(c.cost) : Json(nullptr)},
          {"energy_kwh", c.energy_known && c.time_to_train_s > 0 ? Json(c.energy_kwh) : Json(nullptr)}};
}

Json layout_json(const ParallelLayout& p, const TrainingSpec& t) {
  Json j = {{"tp", p.tp},
          {"pp", p.pp},
          {"vpp", p.vpp},
          {"dp", p.dp},
          {"cp", p.cp},
          {"ep", p.ep},
          {"etp", p.etp},
          {"micro_batch_size", p.micro_batch_size},
          {"gradient_accumulation_steps", p.gradient_accumulation_steps},
          {"recompute", to_string(t.recompute)},
          {"zero_stage", t.zero_stage},
          {"offload_optimizer", t.offload_optimizer},
          {"tp_comm_overlap", p.tp_comm_overlap},
          {"sequence_parallel", p.sequence_parallel},
          {"schedule", to_string(p.schedule)},
          {"dp_replicate", p.dp_replicate}};
  // Megatron's --recompute-modules under selective recompute (core_attn alone is the default).
  if (t.recompute == Recompute::Selective) j["recompute_modules"] = recompute_module_list(t.recompute_modules);
  return j;
}

Json plan_json(const Plan& p) {
  return {{"num_gpus", p.num_gpus},
          {"layout", layout_json(p.layout, p.training)},
          {"framework", framework_result_json(p.training, p.layout)},
          {"memory", stage_memory_json(p.memory, p.capacity)},
          {"step", step_json(p.step)},
          {"training", training_cost_json(p.cost)},
          {"pareto", p.pareto}};
}

Json plan_report_json(const PlanReport& r) {
  Json plans = Json::array(), pareto = Json::array(), per_count = Json::array();
  for (const auto& p : r.result.plans) plans.push_back(plan_json(p));
  for (const auto& p : r.result.pareto) pareto.push_back(plan_json(p));
  for (const auto& p : r.result.best_per_count) per_count.push_back(plan_json(p));
  return {{"command", "plan"},
          {"scenario_source", r.scenario_label},
          {"scenario", to_json(r.scenario)},
          {"defaults", defaults_to_json(r.scenario)},
          {"gpu_counts", r.result.gpu_counts},
          {"searched", r.result.searched},
          {"fit_memory", r.result.fit_memory},
          {"feasible", r.result.feasible},
          {"budget", r.budget_text.empty() ? Json(nullptr) : Json(r.budget_text)},
          {"notes", r.scenario.notes},
          {"plans", plans},
          {"pareto", pareto},
          {"best_per_count", per_count}};
}


std::string layout_text(const Plan& p) {
  const ParallelLayout& l = p.layout;
  std::string s = "tp" + std::to_string(l.tp) + (l.sequence_parallel && l.tp > 1 ? "+sp" : "") + " pp" + std::to_string(l.pp);
  if (l.vpp > 1) s += "x" + std::to_string(l.vpp);
  s += " dp" + std::to_string(l.dp);
  if (l.dp_replicate > 1) s += "/" + std::to_string(l.dp_replicate) + "r";  // hybrid sharding: shards replicated r times
  if (l.cp > 1) s += " cp" + std::to_string(l.cp);
  if (l.ep > 1) s += " ep" + std::to_string(l.ep);
  if (l.etp > 1) s += " etp" + std::to_string(l.etp);
  if (l.schedule == Schedule::Gpipe) s += " gpipe";
  if (p.training.offload_optimizer) s += " +offload";
  return s;
}

namespace {
std::string days_or_hours(double s) { return s <= 0 ? "-" : format_seconds(s); }
std::string band_text(const StepEstimate& st) {
  return st.band ? format_seconds(st.time_s_low) + " - " + format_seconds(st.time_s_high) : std::string("-");
}
// Two plans whose likely step times overlap are not told apart by the model's known error.
bool bands_overlap(const StepEstimate& a, const StepEstimate& b) {
  return a.band && b.band && a.time_s_low <= b.time_s_high && b.time_s_low <= a.time_s_high;
}
// "-" when the price or the amount of training is unknown.
std::string money(const TrainingCost& c) { return c.priced && c.time_to_train_s > 0 ? format_usd(c.cost) : "-"; }
}  // namespace

const std::vector<std::string>& plan_table_header() {
  static const std::vector<std::string> h{"#", "GPUs", "layout", "mbs", "recompute", "zero", "framework", "step", "likely step", "tokens/s", "MFU",
                                          "mem GiB", "time", "cost", "pareto"};
  return h;
}

std::vector<std::vector<std::string>> plan_table_rows(const PlanReport& r) {
  std::vector<std::vector<std::string>> rows;
  if (r.result.plans.empty()) return rows;
  const Plan& best = r.result.plans.front();
  int i = 1;
  for (const auto& p : r.result.plans) {
    const bool close = i > 1 && bands_overlap(p.step, best.step);
    rows.push_back({std::to_string(i++), std::to_string(p.num_gpus), layout_text(p), std::to_string(p.layout.micro_batch_size), recompute_text(p.training),
                    std::to_string(p.training.zero_stage), framework_for(p.training, p.layout).name, format_seconds(p.step.time_s),
                    band_text(p.step) + (close ? " ~" : ""), format_count(p.step.tokens_per_s), fixed(100 * p.step.mfu, 1) + "%",
                    gib(p.memory.total, 1), days_or_hours(p.cost.time_to_train_s), money(p.cost), p.pareto ? "*" : ""});
  }
  return rows;
}

const std::vector<std::string>& per_count_header() {
  static const std::vector<std::string> header{"GPUs", "layout", "step", "time", "cost", "MFU", "mem GiB", "headroom GiB", "pareto"};
  return header;
}

std::vector<std::vector<std::string>> per_count_rows(const PlanReport& r) {
  std::vector<std::vector<std::string>> rows;
  for (const Plan& p : r.result.best_per_count)
    rows.push_back({std::to_string(p.num_gpus), layout_text(p), fixed(p.step.time_s, 2) + " s", days_or_hours(p.cost.time_to_train_s), money(p.cost),
                    fixed(100 * p.step.mfu, 1) + "%", gib(p.memory.total, 1), gib(p.capacity - p.memory.total, 1), p.pareto ? "*" : ""});
  return rows;
}

std::string framework_summary(const PlanReport& r) {
  const TrainingSpec& t = r.scenario.training;
  if (!t.framework.name.empty()) return describe_framework(t, r.scenario.parallel);
  std::vector<std::string> shown;
  for (const Plan& p : r.result.plans) {
    const std::string& name = framework_for(p.training, p.layout).name;
    if (std::find(shown.begin(), shown.end(), name) == shown.end()) shown.push_back(name);
  }
  std::string out = std::string("implied by each layout (") + kImpliedFrameworkRule + ")";
  if (shown.size() > 1)
    out += "; these plans mix " + join(shown) + ", each priced for its own: --framework NAME ranks within one, and trainsim export re-prices a "
           "plan for the stack it writes";
  return out;
}

void print_plan_table(std::ostream& os, const PlanReport& r) {
  const Scenario& s = r.scenario;
  os << "Scenario   " << r.scenario_label << "\n";
  os << "Model      " << s.model.name << ", " << to_string(s.training.mode) << ", seq " << s.training.seq_len << ", global batch "
     << s.training.global_batch_size;
  if (s.training.train_tokens > 0) os << ", " << format_count(s.training.train_tokens) << " tokens";
  os << "\nHardware   " << s.hardware.gpu.name << " x {";
  for (std::size_t i = 0; i < r.result.gpu_counts.size(); ++i) os << (i ? ", " : "") << r.result.gpu_counts[i];
  os << "} GPUs, " << s.hardware.gpus_per_node << " per node, " << s.hardware.intra_node.name << " + " << s.hardware.inter_node.name
     << ", " << (s.hardware.has_price() ? "$" + fixed(s.hardware.price_per_gpu_hour, 2) + "/GPU-hour" : std::string("price unknown")) << "\n";
  os << "Framework  " << framework_summary(r) << "\n";
  const SearchResult& res = r.result;
  os << "Searched   " << res.searched << " layouts in " << fixed(r.seconds, 2) << " s on " << r.threads << " threads; " << res.fit_memory
     << " fit in memory";
  if (r.budget_text.empty()) os << "\n\n";
  else os << ", " << res.feasible << " within the budget " << r.budget_text << "\n\n";
  if (res.plans.empty()) {
    if (res.fit_memory == 0) {
      os << "No layout fits in memory. Try more GPUs, a GPU with more memory, a shorter sequence or a smaller micro-batch.\n";
    } else {
      os << "No layout is within the budget " << r.budget_text << ": of the " << res.fit_memory << " that fit, the cheapest costs "
         << (res.cheapest_cost > 0 ? format_usd(res.cheapest_cost) : std::string("an unknown amount")) << " and the fastest takes "
         << format_seconds(res.fastest_time_s) << " to train. Raise the budget, or try other GPU counts (--gpus A..B).\n";
    }
    for (const auto& n : s.notes) os << "Note: " << n << "\n";
    return;
  }
  TextTable t(plan_table_header());
  for (auto& row : plan_table_rows(r)) t.add_row(std::move(row));
  t.print(os);
  const Plan& best = r.result.plans.front();
  if (best.step.band)
    os << "likely step: the step time x the 10th-90th percentile of measured / predicted time for a run from a new source, from the\n"
          "reference runs of the plan's framework family and regime (each predicted without its source in the fit: their scatter within a\n"
          "source, at the lowest and highest source median); ~: overlaps plan 1's range, so the ranking between them is within the\n"
          "model's known error.\n";

  os << "\nBest plan, step breakdown (critical pipeline stage, exposed communication only)\n";
  print_step_table(os, best.step, best.cost, s);
  if (r.result.best_per_count.size() > 1) {
    os << "\nFastest plan per GPU count (headroom: the GPU's memory left over)\n";
    TextTable bt(per_count_header());
    for (auto& row : per_count_rows(r)) bt.add_row(std::move(row));
    bt.print(os);
  }
  if (r.result.pareto.size() > 1) {
    os << "\nPareto front (GPUs vs time vs cost)\n";
    TextTable pt({"GPUs", "layout", "time", "cost", "MFU"});
    for (const auto& p : r.result.pareto)
      pt.add_row({std::to_string(p.num_gpus), layout_text(p), days_or_hours(p.cost.time_to_train_s), money(p.cost), fixed(100 * p.step.mfu, 1) + "%"});
    pt.print(os);
  }
  for (const auto& n : s.notes) os << "Note: " << n << "\n";
}

std::vector<std::pair<std::string, double>> step_parts(const StepBreakdown& b) {
  const std::pair<const char*, double> all[] = {{"compute", b.compute_s}, {"host", b.host_s},       {"recompute", b.recompute_s},
                                                {"tp comm", b.tp_comm_s}, {"cp comm", b.cp_comm_s}, {"ep comm", b.ep_comm_s},
                                                {"pp comm", b.pp_comm_s}, {"dp comm", b.dp_comm_s}, {"bubble", b.bubble_s},
                                                {"optimizer", b.optimizer_s}, {"grad norm, clip, zero", b.overhead_s}};
  std::vector<std::pair<std::string, double>> out;
  for (const auto& [name, v] : all)
    if (v > 0 || std::string(name) == "compute") out.emplace_back(name, v);
  return out;
}

void print_step_table(std::ostream& os, const StepEstimate& st, const TrainingCost& c, const Scenario& s) {
  TextTable t({"part", "seconds", "share"});
  for (const auto& [name, v] : step_parts(st.breakdown)) t.add_row({name, fixed(v, 4), fixed(100 * v / st.time_s, 1) + "%"});
  t.add_row({"step", fixed(st.time_s, 4), "100.0%"});
  t.print(os);
  if (st.band)
    os << "  likely " << fixed(st.time_s_low, 2) << "-" << fixed(st.time_s_high, 2) << " s a step (MFU " << fixed(100 * st.mfu * st.time_s / st.time_s_high, 1)
       << "-" << fixed(100 * st.mfu * st.time_s / st.time_s_low, 1) << "%): measured / predicted time would be "
       << fixed(st.band->low, 2) << "-" << fixed(st.band->high, 2) << " (10th-90th percentile for a run from a new source, median "
       << fixed(st.band->median, 2) << "), from " << st.band->cases << " published " << st.band->group << " runs"
       << (st.band->extrapolated ? "; an extrapolation: " + st.band->regime + " has fewer than 5 measured runs, so the range is widened by the spread between sources" : "")
       << "\n";
  os << "  " << format_count(st.tokens_per_s) << " tokens/s, MFU " << fixed(100 * st.mfu, 1) << "%, HFU " << fixed(100 * st.hfu, 1)
     << "% of " << format_rate(s.hardware.gpu.peak_flops(s.training.precision)) << " " << to_string(s.training.precision) << " peak\n";
  if (c.time_to_train_s > 0)
    os << "  " << format_count(s.training.train_tokens) << " tokens: " << fixed(c.iterations, 0) << " steps, " << format_seconds(c.time_to_train_s)
       << ", " << fixed(c.gpu_hours, 0) << " GPU-hours, " << (c.priced ? format_usd(c.cost) : std::string("cost unknown (no price)")) << ", "
       << (c.energy_known ? fixed(c.energy_kwh, 0) + " kWh at TDP" : std::string("energy unknown (no TDP)")) << "\n";
}

void print_plan_csv(std::ostream& os, const PlanReport& r) {
  // Every layout field of the JSON is a column, so rows that differ only in one of them stay distinguishable; an
  // unknown cost is an empty field (pandas reads NaN).
  os << "rank,num_gpus,tp,pp,vpp,dp,cp,ep,etp,micro_batch_size,gradient_accumulation_steps,sequence_parallel,tp_comm_overlap,schedule,recompute,"
        "zero_stage,offload_optimizer,framework,memory_total_bytes,step_time_s,step_time_s_low,step_time_s_high,tokens_per_s,mfu,hfu,time_to_train_s,gpu_hours,cost,pareto,recompute_modules,dp_replicate\n";
  int i = 1;
  for (const auto& p : r.result.plans) {
    const ParallelLayout& l = p.layout;
    os << i++ << ',' << p.num_gpus << ',' << l.tp << ',' << l.pp << ',' << l.vpp << ',' << l.dp << ',' << l.cp << ',' << l.ep << ',' << l.etp << ','
       << l.micro_batch_size << ',' << l.gradient_accumulation_steps << ',' << (l.sequence_parallel ? "true" : "false") << ','
       << (l.tp_comm_overlap ? "true" : "false") << ',' << to_string(l.schedule) << ',' << to_string(p.training.recompute) << ','
       << p.training.zero_stage << ',' << (p.training.offload_optimizer ? "true" : "false") << ',' << framework_for(p.training, p.layout).name << ','
       << fixed(p.memory.total, 0) << ','
       << p.step.time_s << ',' << p.step.time_s_low << ',' << p.step.time_s_high << ',' << p.step.tokens_per_s << ',' << p.step.mfu << ',' << p.step.hfu << ',' << p.cost.time_to_train_s << ','
       << p.cost.gpu_hours << ',';
    if (p.cost.priced && p.cost.time_to_train_s > 0) os << p.cost.cost;
    os << ',' << (p.pareto ? "true" : "false") << ',';
    if (p.training.recompute == Recompute::Selective) {
      const std::vector<std::string> names = recompute_module_list(p.training.recompute_modules);
      for (std::size_t k = 0; k < names.size(); ++k) os << (k ? " " : "") << names[k];
    }
    os << ',' << l.dp_replicate << '\n';
  }
}

}  // namespace trainsim
