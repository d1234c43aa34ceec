#include "models/step/pipeline_schedule.hpp"

#include <algorithm>
#include <memory>

#include "models/core/name_registry.hpp"

namespace trainsim {

namespace {

// GPipe (Huang et al. 2019): every forward, then every backward. Bubble (pp - 1) stage times; a stage holds all
// m micro-batches' activations.
class Gpipe final : public PipelineSchedule {
 public:
  Schedule id() const override { return Schedule::Gpipe; }
  const char* name() const override { return "gpipe"; }
  std::string description() const override { return "all forwards, then all backwards"; }
  std::string source() const override { return "Huang et al. 2019, GPipe (arXiv 1811.06965)"; }
  double pipeline_time(int m, double worst, double sum, const ParallelLayout&) const override { return m * worst + (sum - worst); }
  double micro_batches_in_flight(const ParallelLayout&, int, int m) const override { return m; }
  int warmup_forwards(const ParallelLayout&, int, int m) const override { return m; }
};

// 1F1B (PipeDream-Flush, Narayanan et al. 2021): the same bubble as GPipe, but stage s starts backwards after
// pp - s - 1 warm-up forwards, so it holds at most pp - s micro-batches.
class OneFOneB final : public PipelineSchedule {
 public:
  Schedule id() const override { return Schedule::OneFOneB; }
  const char* name() const override { return "1f1b"; }
  std::string description() const override { return "one forward, one backward after pp - stage - 1 warm-up forwards (PipeDream-Flush)"; }
  std::string source() const override { return "Narayanan et al. SC'21 §2.2.1; Megatron-LM schedules.py forward_backward_pipelining_without_interleaving"; }
  double pipeline_time(int m, double worst, double sum, const ParallelLayout&) const override { return m * worst + (sum - worst); }
  double micro_batches_in_flight(const ParallelLayout& p, int stage, int m) const override { return std::min(p.pp - stage, m); }
  int warmup_forwards(const ParallelLayout& p, int stage, int m) const override { return std::min(m, p.pp - stage - 1); }
};

// Interleaved 1F1B (Narayanan et al. SC'21 §2.2.2): vpp model chunks per stage shrink the bubble vpp-fold;
// warm-up (pp - stage - 1) x 2 + (vpp - 1) x pp chunk forwards (all of them when m = pp), each chunk 1/vpp of the
// stage's layers (for stage 0, Korthikanti's factor 1 + (pp - 1)/(pp x vpp) on pp micro-batches).
class Interleaved final : public PipelineSchedule {
 public:
  Schedule id() const override { return Schedule::Interleaved; }
  const char* name() const override { return "interleaved"; }
  std::string description() const override { return "1F1B over vpp model chunks per stage: the bubble divided by vpp"; }
  std::string source() const override { return "Narayanan et al. SC'21 §2.2.2; Megatron-LM schedules.py forward_backward_pipelining_with_interleaving"; }
  bool uses_model_chunks() const override { return true; }
  double pipeline_time(int m, double worst, double sum, const ParallelLayout& p) const override {
    return m * worst + (sum - worst) / std::max(1, p.vpp);
  }
  double micro_batches_in_flight(const ParallelLayout& p, int stage, int m) const override {
    return static_cast<double>(std::min(warmup_forwards(p, stage, m) + 1, m * p.vpp)) / p.vpp;
  }
  int warmup_forwards(const ParallelLayout& p, int stage, int m) const override {
    const int total = m * p.vpp;
    return m == p.pp ? total : std::min(total, (p.pp - stage - 1) * 2 + (p.vpp - 1) * p.pp);
  }
};

// DualPipe (DeepSeek-V3 report §3.2.1, Table 2; deepseek-ai/DualPipe): micro-batches enter from both ends, so
// rank r holds stages r and pp - 1 - r (two copies of the parameters, as the report says) and runs half of the
// micro-batches through each; a forward chunk of one direction runs beside a backward chunk of the other, each
// one's communication under the other's computation (the stream's paired-chunk window), and the zero-bubble split
// of the backward into input (B) and weight (W) gradients fills the rest. Bubble (pp/2 - 1)(F&B + B - 3W): with a
// chunk's forward F = T/3 of its forward + backward T, the backward B = 2T/3, the weight half of it W = T/3 and the
// overlapped pair F&B = T (compute-bound once the communication hides), (pp/2 - 1)·2T/3 of the mean rank's T.
// Activations: pp + 1 chunks at the peak (Table 2), (pp + 1)/2 of each stage. dualpipe.py asserts an even pp and
// an even number of micro-batches, at least 2 pp. Not in any framework preset (the library is called from the
// training code), so the search does not propose it.
class DualPipe final : public PipelineSchedule {
 public:
  Schedule id() const override { return Schedule::DualPipe; }
  const char* name() const override { return "dualpipe"; }
  std::string description() const override {
    return "bidirectional: rank r holds stages r and pp-1-r, a forward and a backward chunk overlapped (DeepSeek-V3)";
  }
  std::string source() const override { return "DeepSeek-V3 technical report (arXiv 2412.19437) §3.2.1 and Table 2; deepseek-ai/DualPipe dualpipe.py"; }
  bool bidirectional() const override { return true; }
  bool searched() const override { return false; }
  double pipeline_time(int m, double worst, double sum, const ParallelLayout& p) const override {
    const double mean_rank = sum / std::max(1, p.pp);
    return m * worst + std::max(0.0, p.pp / 2.0 - 1.0) * (2.0 / 3.0) * mean_rank;
  }
  double micro_batches_in_flight(const ParallelLayout& p, int, int m) const override { return std::min(p.pp + 1.0, static_cast<double>(m)) / 2.0; }
  // Steps 1 and 2 of dualpipe.py: 2(pp/2 - h - 1) + 2(h + 1) = pp chunk forwards before the first backward.
  int warmup_forwards(const ParallelLayout& p, int, int m) const override { return std::min(m, p.pp); }
};

// In Schedule order, the order listings show.
const NameRegistry<const PipelineSchedule*>& registry() {
  static const Gpipe gpipe;
  static const OneFOneB one_f_one_b;
  static const Interleaved interleaved;
  static const DualPipe dualpipe;
  static const NameRegistry<const PipelineSchedule*> all = [] {
    NameRegistry<const PipelineSchedule*> r(NameOrder::Registration);
    r.add(&gpipe);
    r.add(&one_f_one_b);
    r.add(&interleaved);
    r.add(&dualpipe);
    return r;
  }();
  return all;
}

}  // namespace

const std::vector<const PipelineSchedule*>& pipeline_schedules() { return registry().entries(); }

const PipelineSchedule& pipeline_schedule(Schedule s) {
  for (const PipelineSchedule* p : registry().entries())
    if (p->id() == s) return *p;
  return *registry().entries()[1];
}

bool pairs_stages(const ParallelLayout& p) { return p.pp > 1 && pipeline_schedule(p.schedule).bidirectional(); }

const PipelineSchedule* find_pipeline_schedule(const std::string& name) {
  const PipelineSchedule* const* p = registry().find(name);
  return p ? *p : nullptr;
}

std::vector<std::string> pipeline_schedule_names() { return registry().names(); }

}  // namespace trainsim
