#include "models/step/op_stream.hpp"

#include <algorithm>

#include "models/compute/transformer.hpp"
#include "models/step/pipeline_schedule.hpp"

namespace trainsim {

const char* to_string(ParallelDim d) {
  switch (d) {
    case ParallelDim::Tp: return "tp";
    case ParallelDim::Cp: return "cp";
    case ParallelDim::Ep: return "ep";
    case ParallelDim::Pp: return "pp";
    case ParallelDim::Dp: return "dp";
  }
  return "?";
}

const char* to_string(Pass p) {
  switch (p) {
    case Pass::Forward: return "forward";
    case Pass::Reference: return "reference";
    case Pass::Recompute: return "recompute";
    case Pass::Backward: return "backward";
    case Pass::Step: return "step";
  }
  return "?";
}

const char* to_string(OverlapWindow w) {
  switch (w) {
    case OverlapWindow::None: return "none";
    case OverlapWindow::LayerGemms: return "layer-gemms";
    case OverlapWindow::LayerAttention: return "layer-attention";
    case OverlapWindow::LayerForward: return "layer-forward";
    case OverlapWindow::LayerBackward: return "layer-backward";
    case OverlapWindow::LastBackward: return "last-backward";
    case OverlapWindow::FirstForward: return "first-forward";
    case OverlapWindow::PairedChunk: return "paired-chunk";
  }
  return "?";
}

double window_compute(const LayerCompute& lc, OverlapWindow w) {
  switch (w) {
    case OverlapWindow::LayerGemms: return lc.gemm_s;
    case OverlapWindow::LayerAttention: return lc.attention_s;
    case OverlapWindow::LayerForward: return lc.forward_s + lc.recompute_s;
    case OverlapWindow::LayerBackward: return lc.backward_s;
    // Every pass of the layer: each pass's communication runs under the other direction's pass.
    case OverlapWindow::PairedChunk: return lc.forward_s + lc.backward_s + lc.recompute_s;
    default: return 0;
  }
}

namespace {

// c of communication under w of compute, on a share f of the SMs: max(c - w, f·c) exposed (step.cpp explains f).
double exposed(double comm, double compute, double sm_share) {
  if (comm <= 0) return 0;
  return std::max(comm - compute, sm_share * comm);
}

// Exposed communication of one layer and micro-batch per parallel dimension: the ops of a window fold
// together against its compute, and the exposed time is shared among their dimensions by their volume.
struct DimTime {
  double by_dim[5] = {0, 0, 0, 0, 0};
  double& operator[](ParallelDim d) { return by_dim[static_cast<int>(d)]; }
};
DimTime layer_exposed(const LayerStream& layer, double sm_share) {
  constexpr int kWindows = 8;
  double total[kWindows] = {}, per_dim[kWindows][5] = {};
  for (const CommOp& op : layer.comm) {
    const int w = static_cast<int>(op.window);
    total[w] += op.total_s();
    per_dim[w][static_cast<int>(op.dim)] += op.total_s();
  }
  DimTime out;
  for (int w = 0; w < kWindows; ++w) {
    if (total[w] <= 0) continue;
    const auto window = static_cast<OverlapWindow>(w);
    const double e = window == OverlapWindow::None ? total[w] : exposed(total[w], window_compute(layer.compute, window), sm_share);
    for (int d = 0; d < 5; ++d) out.by_dim[d] += e * per_dim[w][d] / total[w];
  }
  return out;
}

}  // namespace

Zero3Edge zero3_edge(const LayerStream& first) {
  Zero3Edge e;
  for (const CommOp& op : first.comm) {
    if (op.dim != ParallelDim::Dp) continue;
    if (op.window == OverlapWindow::LayerForward) e.forward_s += op.call_s, e.forward_bytes += op.bytes;
    if (op.window == OverlapWindow::LayerBackward && op.collective == Collective::ReduceScatter && op.call_s > e.backward_s)
      e.backward_s = op.call_s, e.backward_bytes = op.bytes;
  }
  return e;
}

StageTime fold_stage(const StepStream& s, int dense_layers, int moe_layers, bool first_stage, bool last_stage) {
  StageTime t;
  auto add_layers = [&](const LayerStream& layer, int count) {
    if (count == 0) return;
    DimTime e = layer_exposed(layer, s.sm_share);
    t.compute += count * (layer.compute.forward_s + layer.compute.backward_s);
    t.host += count * layer.compute.host_s;
    t.recompute += count * layer.compute.recompute_s;
    t.tp += count * e[ParallelDim::Tp];
    t.cp += count * e[ParallelDim::Cp];
    t.ep += count * e[ParallelDim::Ep];
    t.dp += count * e[ParallelDim::Dp];
  };
  add_layers(s.dense, dense_layers);
  add_layers(s.moe, moe_layers);
  if (dense_layers + moe_layers > 0) {
    const Zero3Edge edge = zero3_edge(s.first_layer_dense ? s.dense : s.moe);
    t.dp += edge.forward_s + edge.backward_s;
  }
  if (first_stage) t.dp += s.zero3_first.forward_s + s.zero3_first.backward_s;
  if (last_stage) t.dp += s.zero3_last.forward_s + s.zero3_last.backward_s;
  // Pipeline send/recv: blocking, or under the stage's compute of the other direction (paired chunks).
  double pp_paired = 0;
  for (const CommOp& op : s.stage_comm) (op.window == OverlapWindow::PairedChunk ? pp_paired : t.pp) += op.total_s();
  t.pp += exposed(pp_paired, t.compute + t.recompute, s.sm_share);
  t.edges = (first_stage ? s.edge.embedding_s : 0.0) + (last_stage ? s.edge.head_s : 0.0);
  return t;
}

namespace {
StageTime fold_stage_of(const StepStream& s, const ModelSpec& m, const ParallelLayout& p, int stage) {
  int layers = layers_in_stage(m.num_hidden_layers, p, stage);
  int dense = dense_layers_in_stage(m.num_hidden_layers, m.num_dense_layers(), p, stage);
  if (stage == p.pp - 1) {  // the multi-token-prediction modules' layers (ModelSpec::mtp_layers)
    layers += m.mtp_layers;
    if (!m.last_layer_moe()) dense += m.mtp_layers;
  }
  return fold_stage(s, dense, layers - dense, stage == 0, stage == p.pp - 1);
}

// A bidirectional schedule's rank r runs half the micro-batches through stage r and half through pp - 1 - r:
// per micro-batch, the mean of the two.
StageTime mean_of(const StageTime& a, const StageTime& b) {
  StageTime t;
  t.compute = (a.compute + b.compute) / 2, t.host = (a.host + b.host) / 2, t.recompute = (a.recompute + b.recompute) / 2;
  t.tp = (a.tp + b.tp) / 2, t.cp = (a.cp + b.cp) / 2, t.ep = (a.ep + b.ep) / 2, t.pp = (a.pp + b.pp) / 2, t.dp = (a.dp + b.dp) / 2;
  t.edges = (a.edges + b.edges) / 2;
  return t;
}
}  // namespace

StepBreakdown fold_step(const StepStream& s, const ModelSpec& m, const ParallelLayout& p) {
  // Per micro-batch time of every stage (or rank); the slowest sets the pace (Narayanan et al. SC'21, §2.2):
  // iteration = m·t_max + (Σ t_s − t_max)/v, i.e. (m + (p−1)/v)·t for equal stages.
  const PipelineSchedule& schedule = pipeline_schedule(p.schedule);
  const bool paired = pairs_stages(p);
  double sum = 0, worst = -1;
  StageTime slowest;
  // Paired, ranks r and pp - 1 - r hold the same two stages: each pair is folded once and counted twice.
  for (int stage = 0; stage < (paired ? p.pp / 2 : p.pp); ++stage) {
    const StageTime st = paired ? mean_of(fold_stage_of(s, m, p, stage), fold_stage_of(s, m, p, p.pp - 1 - stage)) : fold_stage_of(s, m, p, stage);
    const double ts = st.total();
    sum += paired ? 2 * ts : ts;
    if (ts > worst) {
      worst = ts;
      slowest = st;
    }
  }
  const double mb = s.micro_batches;
  const double pipeline = p.pp == 1 ? mb * worst : schedule.pipeline_time(s.micro_batches, worst, sum, p);

  StepBreakdown b;
  b.compute_s = mb * (slowest.compute + slowest.edges);
  b.host_s = mb * slowest.host;
  b.recompute_s = mb * slowest.recompute;
  b.tp_comm_s = mb * slowest.tp;
  b.cp_comm_s = mb * slowest.cp;
  b.ep_comm_s = mb * slowest.ep;
  b.pp_comm_s = mb * slowest.pp;
  b.dp_comm_s = mb * slowest.dp;
  b.bubble_s = pipeline - mb * worst;

  // Step ops: the windows are the slowest stage's last backward and first forward (backward ~2/3 of the
  // forward + backward). All but one call hide; the one next to the window's edge stays exposed.
  const double last_backward = slowest.compute * 2.0 / 3.0, first_forward = slowest.compute / 3.0;
  double step_dp = 0;
  for (OverlapWindow w : {OverlapWindow::LastBackward, OverlapWindow::FirstForward}) {
    double total = 0, one = 0;
    for (const CommOp& op : s.step_comm)
      if (op.window == w) {
        total += op.total_s();
        one = std::max(one, op.call_s);
      }
    if (total > 0) step_dp += one + exposed(total - one, w == OverlapWindow::LastBackward ? last_backward : first_forward, s.sm_share);
  }
  for (const CommOp& op : s.step_comm)
    if (op.window == OverlapWindow::None) step_dp += op.total_s();
  b.dp_comm_s += step_dp;

  b.optimizer_s = s.optimizer_s;
  b.overhead_s = s.overhead_s;
  b.total_s = pipeline + step_dp + b.optimizer_s + b.overhead_s;
  return b;
}

}  // namespace trainsim
