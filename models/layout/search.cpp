#include "models/layout/search.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <tuple>

#include "models/compute/recompute_policy.hpp"
#include "models/layout/layout_check.hpp"
#include "models/scenario/framework.hpp"
#include "models/step/pipeline_schedule.hpp"

namespace trainsim {

SearchSpace search_space_from(const Scenario& s) {
  auto free_field = [&](const char* path) {
    for (const auto& d : s.defaults)
      if (d.path == path) return true;
    return false;
  };
  SearchSpace sp;
  sp.tp = free_field("/parallel/tp");
  sp.pp = free_field("/parallel/pp");
  sp.dp = free_field("/parallel/dp");
  sp.cp = free_field("/parallel/cp");
  sp.ep = free_field("/parallel/ep");
  sp.etp = free_field("/parallel/etp");
  sp.vpp = free_field("/parallel/vpp");
  sp.micro_batch = free_field("/parallel/micro_batch_size") && free_field("/parallel/gradient_accumulation_steps");
  sp.recompute = free_field("/training/recompute");
  sp.zero_stage = free_field("/training/zero_stage") && free_field("/training/distributed_optimizer");
  sp.sequence_parallel = free_field("/parallel/sequence_parallel");
  sp.schedule = free_field("/parallel/schedule");
  sp.offload_optimizer = free_field("/training/offload_optimizer");
  sp.dp_replicate = free_field("/parallel/dp_replicate");
  return sp;
}

namespace {

std::vector<int> divisors(int n, int max_value) {
  std::vector<int> out;
  for (int d = 1; d <= n && d <= max_value; ++d)
    if (n % d == 0) out.push_back(d);
  return out;
}

std::vector<int> powers_of_two(int max_value) {
  std::vector<int> out;
  for (int v = 1; v <= max_value; v *= 2) out.push_back(v);
  return out;
}

struct Scored {
  double score;
  Plan plan;
};

// Total order for deterministic results: score, then fewer GPUs, then the layout tuple.
bool better(const Scored& a, const Scored& b) {
  if (a.score != b.score) return a.score < b.score;
  const ParallelLayout &x = a.plan.layout, &y = b.plan.layout;
  return std::make_tuple(a.plan.num_gpus, x.tp, x.pp, x.vpp, x.cp, x.ep, x.etp, x.micro_batch_size, int(x.sequence_parallel),
                         int(a.plan.training.recompute), a.plan.training.recompute_modules, a.plan.training.zero_stage, int(a.plan.training.offload_optimizer),
                         int(x.schedule), x.dp_replicate) <
         std::make_tuple(b.plan.num_gpus, y.tp, y.pp, y.vpp, y.cp, y.ep, y.etp, y.micro_batch_size, int(y.sequence_parallel),
                         int(b.plan.training.recompute), b.plan.training.recompute_modules, b.plan.training.zero_stage, int(b.plan.training.offload_optimizer),
                         int(y.schedule), y.dp_replicate);
}

struct WorkItem {
  int gpu_index, tp, cp, pp;
};

struct ThreadResult {
  std::vector<Scored> top;
  std::vector<Scored> best_per_count;  // index = gpu count index; score < 0 = none
  std::vector<long long> searched_per_count;  // index = gpu count index
  long long searched = 0, fit_memory = 0, feasible = 0;
  double cheapest_cost = 0, fastest_time_s = 0;  // among those that fit in memory (0 = none yet)
};

void keep_top(std::vector<Scored>& top, Scored&& s, std::size_t n) {
  if (top.size() == n && !better(s, top.back())) return;
  auto it = std::upper_bound(top.begin(), top.end(), s, better);
  top.insert(it, std::move(s));
  if (top.size() > n) top.pop_back();
}

// The search's inputs that hold for every work item: the hardware per GPU count and the training variants
// (ZeRO stage x offload x recompute, recompute innermost: variant v has recompute choice v % modes, and the
// per-layer work, which depends on the recompute mode, the framework and the weight gradients' traffic, is shared by
// the variants that agree on them), and the
// work items: every (GPU count, tp, cp, pp) that divides.
struct SearchSetup {
  std::vector<HardwareSpec> hardware;
  std::vector<TrainingSpec> trainings;
  std::size_t modes = 1;
  std::vector<WorkItem> work;
};

SearchSetup prepare_search(const Scenario& base, const std::vector<int>& gpu_counts, const SearchSpace& space) {
  const ModelSpec& model = base.model;
  const ParallelLayout& fixed = base.parallel;
  const int gpn = base.hardware.gpus_per_node;
  // Tensor parallel within a node: every divisor of the KV heads up to the node size (3 and 6 included).
  const std::vector<int> tps = space.tp ? divisors(model.num_key_value_heads, gpn) : std::vector<int>{fixed.tp};
  const std::vector<int> cps = space.cp ? std::vector<int>{1, 2, 4, 8} : std::vector<int>{fixed.cp};
  const std::vector<RecomputeChoice> recomputes =
      space.recompute ? searched_recompute_choices(model) : std::vector<RecomputeChoice>{{base.training.recompute, base.training.recompute_modules}};
  const std::vector<int> zeros = space.zero_stage ? std::vector<int>{0, 1, 2, 3} : std::vector<int>{base.training.zero_stage};
  const std::vector<bool> offloads = space.offload_optimizer ? std::vector<bool>{false, true} : std::vector<bool>{base.training.offload_optimizer};

  SearchSetup setup;
  setup.hardware.assign(gpu_counts.size(), base.hardware);
  for (std::size_t i = 0; i < gpu_counts.size(); ++i) {
    setup.hardware[i].num_gpus = gpu_counts[i];
    setup.hardware[i].num_nodes = (gpu_counts[i] + gpn - 1) / gpn;
  }
  for (int z : zeros)
    for (bool off : offloads)
      for (const RecomputeChoice& r : recomputes) {
        TrainingSpec t = base.training;
        t.zero_stage = z;
        t.offload_optimizer = off;
        t.recompute = r.mode;
        t.recompute_modules = r.modules;
        setup.trainings.push_back(t);
      }
  setup.modes = recomputes.size();
  if (setup.modes > kMaxSearchedRecomputeChoices) throw std::logic_error("search_plans: more recompute choices than the per-layout work arrays hold");
  for (std::size_t g = 0; g < gpu_counts.size(); ++g)
    for (int tp : tps)
      for (int cp : cps) {
        if (gpu_counts[g] % (tp * cp)) continue;
        const int rest = gpu_counts[g] / (tp * cp);
        const std::vector<int> pps = space.pp ? divisors(rest, model.num_hidden_layers) : std::vector<int>{fixed.pp};
        for (int pp : pps)
          if (rest % pp == 0) setup.work.push_back({int(g), tp, cp, pp});
      }
  return setup;
}

// The registered pipeline schedules (models/step/pipeline_schedule.hpp) that run model chunks, or those that do not:
// a schedule registered there is searched without a change here (unless it says it is not searched).
std::vector<Schedule> schedules_where(bool model_chunks) {
  std::vector<Schedule> v;
  for (const PipelineSchedule* p : pipeline_schedules())
    if (p->searched() && p->uses_model_chunks() == model_chunks) v.push_back(p->id());
  return v;
}
const std::vector<Schedule>& registered_schedules(bool model_chunks) {
  static const std::vector<Schedule> flat = schedules_where(false), chunked = schedules_where(true);
  return model_chunks ? chunked : flat;
}

// The choices left once a work item fixes the GPU count, tp, cp and pp (so dp): micro-batch, interleaving and
// schedule, expert layout, sequence parallelism, hybrid-sharding replicas.
struct ItemChoices {
  int dp = 0, per_rank = 0;
  std::vector<int> micro_batches, vpps{1}, eps{1}, etps{1}, replicates;
  std::vector<Schedule> schedules;
  std::vector<bool> sequence_parallel;
};

// False where the work item cannot hold the batch (or the fixed dp).
bool item_choices(const Scenario& base, const SearchSpace& space, const WorkItem& w, int gpus, ItemChoices& c) {
  const ModelSpec& model = base.model;
  const ParallelLayout& fixed = base.parallel;
  const int gbs = base.training.global_batch_size;
  c.dp = gpus / (w.tp * w.cp * w.pp);
  if (!space.dp && c.dp != fixed.dp) return false;
  if (gbs % c.dp) return false;
  c.per_rank = gbs / c.dp;
  if (space.micro_batch) c.micro_batches = divisors(c.per_rank, 64);
  else if (fixed.micro_batch_size > 0 && c.per_rank % fixed.micro_batch_size == 0) c.micro_batches = {fixed.micro_batch_size};
  if (!space.vpp) c.vpps = {fixed.vpp};
  else if (w.pp > 1)  // uneven splits included (Megatron's layouts); check_layout refuses empty virtual stages
    for (int v : {2, 3, 4, 6, 8}) c.vpps.push_back(v);
  if (model.is_moe()) {
    c.eps = space.ep ? powers_of_two(std::min(model.num_experts, gpus / w.pp)) : std::vector<int>{fixed.ep};
    c.etps = space.etp ? (w.tp > 1 ? std::vector<int>{1, w.tp} : std::vector<int>{1}) : std::vector<int>{fixed.etp};
  } else if (!space.ep || !space.etp) {
    c.eps = {fixed.ep};
    c.etps = {fixed.etp};
  }
  c.schedules = {fixed.schedule};
  // With one stage every schedule runs the same: the default one.
  if (space.schedule) c.schedules = w.pp > 1 ? registered_schedules(false) : std::vector<Schedule>{Schedule::OneFOneB};
  c.sequence_parallel =
      space.sequence_parallel ? (w.tp > 1 ? std::vector<bool>{false, true} : std::vector<bool>{false}) : std::vector<bool>{fixed.sequence_parallel};
  // Hybrid sharding: shard groups of one node's data-parallel ranks (gpus_per_node / tp, with the default rank
  // order tp innermost), when there is more than one node's worth of them.
  c.replicates = {fixed.dp_replicate};
  if (space.dp_replicate) {
    const int gpn = base.hardware.gpus_per_node;
    c.replicates = {1};
    const int node_shard = gpn / w.tp;
    if (node_shard >= 2 && gpn % w.tp == 0 && c.dp * w.cp > node_shard && (c.dp * w.cp) % node_shard == 0) c.replicates.push_back(c.dp * w.cp / node_shard);
  }
  return true;
}

// One thread's models (per GPU count and training variant; they hold references into the setup) and what it found.
class SearchWorker {
 public:
  SearchWorker(const Scenario& base, const SearchSpace& space, const SearchOptions& options, const SearchSetup& setup, ThreadResult& out)
      : base_(base), space_(space), options_(options), setup_(setup), out_(out), top_n_(std::max(1, options.top)) {
    const std::size_t counts = setup.hardware.size();
    out.best_per_count.assign(counts, Scored{-1, {}});
    out.searched_per_count.assign(counts, 0);
    memories_.resize(counts);
    steps_.resize(counts);
    for (std::size_t g = 0; g < counts; ++g)
      for (const auto& t : setup.trainings) {
        memories_[g].emplace_back(base.model, t, setup.hardware[g]);
        steps_[g].emplace_back(base.model, t, setup.hardware[g], options.calibration, options.fitted);
      }
  }

  // Every training variant of one layout: checked, its memory, and where it fits its step and cost, scored.
  void layout(const ParallelLayout& p, int gpu_index, int gpus) {
    // Per-layer work once per recompute mode, framework (the implied one changes with the ZeRO stage),
    // weight-gradient traffic (Megatron's fused accumulation stops at ZeRO-2) and autograd's gradient accumulation
    // (below ZeRO only), computed when a variant of that mode first fits.
    std::array<StepModel::LayoutWork, kMaxSearchedRecomputeChoices> layer_work;
    std::array<const FrameworkTraits*, kMaxSearchedRecomputeChoices> work_framework{};
    std::array<double, kMaxSearchedRecomputeChoices> work_wgrad_bytes{};
    std::array<double, kMaxSearchedRecomputeChoices> work_accumulation{};
    for (std::size_t v = 0; v < setup_.trainings.size(); ++v) {
      const TrainingSpec& t = setup_.trainings[v];
      if (check_layout(base_.model, t, p, gpus) != LayoutIssue::None) continue;
      // Megatron's recompute modules mean nothing to a framework with another selective policy: the
      // candidate would repeat its plain selective one.
      if (space_.recompute && t.recompute == Recompute::Selective && t.recompute_modules != kRecomputeCoreAttn &&
          framework_for(t, p).selective_recompute != SelectiveRecompute::AttentionCore)
        continue;
      ++out_.searched;
      ++out_.searched_per_count[gpu_index];
      const MemoryModel& mm = memories_[gpu_index][v];
      const StageMemory mem = mm.worst_stage(p);
      if (mem.total > base_.hardware.gpu.memory_bytes || (mem.host > 0 && !mm.host_fits(mem.host))) continue;
      const StepModel& sm = steps_[gpu_index][v];
      const std::size_t mode = v % setup_.modes;
      const FrameworkTraits& fw = framework_for(t, p);
      const double wgrad_bytes = wgrad_accumulation_bytes(t, p), accumulation = autograd_accumulation_share(t, p);
      if (!work_framework[mode] || work_framework[mode]->name != fw.name || work_wgrad_bytes[mode] != wgrad_bytes ||
          work_accumulation[mode] != accumulation) {
        layer_work[mode] = sm.work(p);
        work_framework[mode] = &fw;
        work_wgrad_bytes[mode] = wgrad_bytes;
        work_accumulation[mode] = accumulation;
      }
      const StepEstimate st = sm.estimate(p, layer_work[mode]);
      const TrainingCost cost = sm.training_cost(st, p);
      ++out_.fit_memory;
      if (cost.priced && (out_.cheapest_cost == 0 || cost.cost < out_.cheapest_cost)) out_.cheapest_cost = cost.cost;
      if (out_.fastest_time_s == 0 || cost.time_to_train_s < out_.fastest_time_s) out_.fastest_time_s = cost.time_to_train_s;
      if (options_.max_cost > 0 && !(cost.priced && cost.cost <= options_.max_cost)) continue;
      if (options_.max_time_s > 0 && cost.time_to_train_s > options_.max_time_s) continue;
      ++out_.feasible;
      // Without train_tokens, rank by iteration time per sequence (same order as time to train).
      const double time_score = cost.time_to_train_s > 0 ? cost.time_to_train_s : st.time_s / base_.training.global_batch_size;
      const double score = options_.objective == Objective::Cost && cost.priced && cost.cost > 0 ? cost.cost
                           : options_.objective == Objective::Cost ? time_score * gpus
                                                                   : time_score;
      Scored s{score, Plan{p, t, gpus, mem, base_.hardware.gpu.memory_bytes, st, cost, false}};
      Scored& best = out_.best_per_count[gpu_index];
      // Per GPU count the fastest plan (cost is proportional to time at a fixed count).
      if (best.score < 0 || time_score < best.score || (time_score == best.score && better(s, best))) {
        best = s;
        best.score = time_score;
      }
      keep_top(out_.top, std::move(s), top_n_);
    }
  }

  // Every layout of one work item.
  void item(const WorkItem& w, int gpus) {
    ItemChoices c;
    if (!item_choices(base_, space_, w, gpus, c)) return;
    for (int vpp : c.vpps)
      for (Schedule sched : vpp > 1 && space_.schedule ? registered_schedules(true) : c.schedules)
        for (int ep : c.eps)
          for (int etp : c.etps)
            for (bool seqp : c.sequence_parallel)
              for (int replicate : c.replicates)
                for (int mbs : c.micro_batches) {
                  ParallelLayout p = base_.parallel;
                  p.tp = w.tp;
                  p.cp = w.cp;
                  p.pp = w.pp;
                  p.dp = c.dp;
                  p.vpp = vpp;
                  p.ep = ep;
                  p.etp = etp;
                  p.sequence_parallel = seqp;
                  p.dp_replicate = replicate;
                  p.micro_batch_size = mbs;
                  p.gradient_accumulation_steps = c.per_rank / mbs;
                  p.schedule = sched;
                  layout(p, w.gpu_index, gpus);
                }
  }

 private:
  const Scenario& base_;
  const SearchSpace& space_;
  const SearchOptions& options_;
  const SearchSetup& setup_;
  ThreadResult& out_;
  std::size_t top_n_;
  std::vector<std::vector<MemoryModel>> memories_;
  std::vector<std::vector<StepModel>> steps_;
};

bool same_plan(const Plan& a, const Plan& b) {
  return a.num_gpus == b.num_gpus && a.layout.tp == b.layout.tp && a.layout.pp == b.layout.pp && a.layout.vpp == b.layout.vpp &&
         a.layout.cp == b.layout.cp && a.layout.ep == b.layout.ep && a.layout.etp == b.layout.etp &&
         a.layout.micro_batch_size == b.layout.micro_batch_size && a.layout.sequence_parallel == b.layout.sequence_parallel &&
         a.training.recompute == b.training.recompute && a.training.recompute_modules == b.training.recompute_modules &&
         a.training.zero_stage == b.training.zero_stage && a.training.offload_optimizer == b.training.offload_optimizer &&
         a.layout.schedule == b.layout.schedule && a.layout.dp_replicate == b.layout.dp_replicate;
}

// The threads' findings in one result: counts summed, the ranked top and each count's best merged, and the
// Pareto front over (GPUs, time to train, cost): a count is on it unless one with fewer or equal GPUs is at
// least as fast and as cheap.
SearchResult merge_results(std::vector<ThreadResult>& results, const std::vector<int>& gpu_counts, std::size_t top_n) {
  SearchResult r;
  r.gpu_counts = gpu_counts;
  r.searched_per_count.assign(gpu_counts.size(), 0);
  std::vector<Scored> top, best(gpu_counts.size(), Scored{-1, {}});
  for (auto& tr : results) {
    r.searched += tr.searched;
    for (std::size_t g = 0; g < tr.searched_per_count.size(); ++g) r.searched_per_count[g] += tr.searched_per_count[g];
    r.fit_memory += tr.fit_memory;
    r.feasible += tr.feasible;
    if (tr.cheapest_cost > 0 && (r.cheapest_cost == 0 || tr.cheapest_cost < r.cheapest_cost)) r.cheapest_cost = tr.cheapest_cost;
    if (tr.fastest_time_s > 0 && (r.fastest_time_s == 0 || tr.fastest_time_s < r.fastest_time_s)) r.fastest_time_s = tr.fastest_time_s;
    for (auto& s : tr.top) keep_top(top, std::move(s), top_n);
    for (std::size_t g = 0; g < gpu_counts.size(); ++g) {
      const Scored& b = tr.best_per_count[g];
      if (b.score >= 0 && (best[g].score < 0 || b.score < best[g].score || (b.score == best[g].score && better(b, best[g])))) best[g] = b;
    }
  }
  std::vector<std::size_t> order(gpu_counts.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return gpu_counts[a] < gpu_counts[b]; });
  double best_time = std::numeric_limits<double>::infinity();
  for (std::size_t i : order) {
    if (best[i].score < 0) continue;
    r.best_per_count.push_back(best[i].plan);
    const double t = best[i].plan.step.time_s * (best[i].plan.cost.iterations > 0 ? best[i].plan.cost.iterations : 1);
    if (t < best_time) {
      best_time = t;
      best[i].plan.pareto = true;
      r.pareto.push_back(best[i].plan);
    }
  }
  for (auto& s : top) {
    for (const auto& f : r.pareto) s.plan.pareto |= same_plan(s.plan, f);
    r.plans.push_back(std::move(s.plan));
  }
  for (auto& p : r.best_per_count)
    for (const auto& f : r.pareto) p.pareto |= same_plan(p, f);
  return r;
}

}  // namespace

SearchResult search_plans(const Scenario& base, const std::vector<int>& gpu_counts, const SearchSpace& space,
                          const SearchOptions& options) {
  const SearchSetup setup = prepare_search(base, gpu_counts, space);
  std::atomic<std::size_t> next{0}, done{0};
  const int threads = std::max(1, options.threads > 0 ? options.threads : int(std::thread::hardware_concurrency()));
  std::vector<ThreadResult> results(threads);
  // The calling thread works too and reports progress between work items, about ten times a second.
  auto worker = [&](ThreadResult& out, bool reports) {
    auto last_report = std::chrono::steady_clock::now();
    SearchWorker searcher(base, space, options, setup, out);
    for (std::size_t i = next++; i < setup.work.size(); i = next++) {
      if (reports && options.progress && std::chrono::steady_clock::now() - last_report > std::chrono::milliseconds(100)) {
        options.progress(double(done.load()) / double(setup.work.size()));
        last_report = std::chrono::steady_clock::now();
      }
      const WorkItem& w = setup.work[i];
      done++;
      searcher.item(w, gpu_counts[w.gpu_index]);
    }
  };
  std::vector<std::thread> pool;
  for (int i = 1; i < threads; ++i) pool.emplace_back(worker, std::ref(results[i]), false);
  worker(results[0], true);
  for (auto& t : pool) t.join();
  if (options.progress) options.progress(1.0);
  return merge_results(results, gpu_counts, std::max(1, options.top));
}

}  // namespace trainsim
