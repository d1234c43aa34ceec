#include "sim/iteration/iteration_sim.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <unordered_map>
#include <simgrid/s4u.hpp>

#include "models/comm/comm_backend.hpp"
#include "models/compute/transformer.hpp"
#include "models/core/errors.hpp"
#include "models/step/op_stream.hpp"
#include "models/step/pipeline_schedule.hpp"
#include "sim/iteration/fabric.hpp"
#include "sim/iteration/rank_grid.hpp"
#include "sim/iteration/simgrid_engine.hpp"

namespace sg4 = simgrid::s4u;

namespace trainsim::sim {

namespace {

// Communication of one kind, aggregated over a stage's layers (or a step): the analytic seconds it takes alone
// and the bytes it puts on each ring edge.
struct Traffic {
  double seconds = 0, bytes = 0;
  bool all_reduce = false;  // a ring all-reduce among its ops: 2(n-1) ring steps, else n-1
  void add(const CommOp& op, double times) {
    seconds += times * op.total_s();
    bytes += times * op.calls * op.bytes * bus_bandwidth_factor(op.collective, op.group.size);
    all_reduce = all_reduce || op.collective == Collective::AllReduce;
  }
  // Ring steps when the traffic runs as one collective over n members.
  int ring_steps(int n) const { return (all_reduce ? 2 : 1) * (n - 1); }
  Traffic part(double share) const { return {seconds * share, bytes * share, all_reduce}; }
};

// Traffic slots: the five parallel dimensions, then the expert-TP group's all-gather and reduce-scatter around the
// experts (ParallelDim::Ep ops that are not the all-to-all: their group is the etp group, not the EP group).
constexpr int kSlots = 6, kEtpSlot = 5;
int slot_of(const CommOp& op) {
  return op.dim == ParallelDim::Ep && op.collective != Collective::AllToAll ? kEtpSlot : static_cast<int>(op.dim);
}
ParallelDim slot_dim(int slot) { return slot == kEtpSlot ? ParallelDim::Ep : static_cast<ParallelDim>(slot); }

// What one pipeline stage does per micro-batch in one phase (forward: forward and DPO reference passes;
// backward: recompute and backward passes).
struct Phase {
  double compute = 0;
  Traffic blocking[kSlots];     // per traffic slot (slot_of)
  bool all_to_all[kSlots] = {}; // EP: dispatch/combine as permutation rounds
  struct Window {
    double compute = 0;         // the compute it hides behind in this phase
    Traffic traffic[kSlots];
  };
  Window windows[7];            // per OverlapWindow (LayerGemms .. LayerBackward)
};

bool in_phase(Pass pass, bool backward) {
  return backward ? (pass == Pass::Recompute || pass == Pass::Backward) : (pass == Pass::Forward || pass == Pass::Reference);
}

Phase stage_phase(const StepStream& s, int dense_layers, int moe_layers, bool backward) {
  Phase ph;
  auto add = [&](const LayerStream& layer, int count) {
    if (count == 0) return;
    const LayerCompute& lc = layer.compute;
    const double phase_compute = backward ? lc.backward_s + lc.recompute_s : lc.forward_s + lc.host_s;
    ph.compute += count * phase_compute;
    const double all = lc.forward_s + lc.backward_s + lc.recompute_s;
    for (const CommOp& op : layer.comm) {
      if (!in_phase(op.pass, backward)) continue;
      if (op.window == OverlapWindow::None) {
        ph.blocking[slot_of(op)].add(op, count);
        if (op.collective == Collective::AllToAll) ph.all_to_all[slot_of(op)] = true;
        continue;
      }
      ph.windows[static_cast<int>(op.window)].traffic[slot_of(op)].add(op, count);
    }
    // The windows' compute in this phase: the forward window is the forward pass, and in the backward phase the
    // recompute (its parameter gathers, pass Recompute, hide behind it); the backward window is the backward
    // pass; the GEMM and attention windows take this phase's share of the layer's GEMM or attention time.
    for (int w = 1; w <= 4; ++w) {
      const auto window = static_cast<OverlapWindow>(w);
      double c = window_compute(lc, window);
      if (window == OverlapWindow::LayerGemms || window == OverlapWindow::LayerAttention) c *= all > 0 ? phase_compute / all : 0;
      if (window == OverlapWindow::LayerForward) c = backward ? lc.recompute_s : lc.forward_s;
      if (window == OverlapWindow::LayerBackward && !backward) c = 0;
      ph.windows[w].compute += count * c;
    }
  };
  add(s.dense, dense_layers);
  add(s.moe, moe_layers);
  return ph;
}

const char* dim_category(int d) {
  static const char* names[kSlots] = {"tp", "cp", "ep", "pp", "dp", "ep"};
  return names[d];
}

class Simulation {
 public:
  Simulation(const Scenario& sc, const StepModel& model, const SimOptions& opt)
      : sc_(sc), opt_(opt), grid_(sc.parallel), stream_(model.stream(sc.parallel)),
        fabric_(sc.hardware, make_comm_model(sc.hardware), static_cast<int>(sc.parallel.world()), opt.fabric) {
    const ParallelLayout& p = sc.parallel;
    const int world = grid_.world();
    // One actor per tensor-parallel group where the group is the innermost block of ranks and the expert groups
    // keep its ranks together (etp = tp): its GPUs run the same work in lockstep (a TP collective every layer),
    // so one actor issues their flows, 1/tp of the actors and barrier waits.
    const bool tp_innermost = p.rank_order.rfind("tp", 0) == 0;
    width_ = tp_innermost && (p.ep == 1 || p.etp == p.tp) ? p.tp : 1;
    whole_node_tp_ = width_ > 1 && p.tp == sc.hardware.gpus_per_node;
    slow_.assign(static_cast<std::size_t>(world), 1.0);
    for (const auto& [gpu, factor] : opt.stragglers) {
      if (gpu < 0 || gpu >= world) throw InputError("--straggler", std::to_string(gpu), "a GPU rank from 0 to " + std::to_string(world - 1));
      slow_[static_cast<std::size_t>(gpu)] = factor;
    }
    for (const auto& [id, factor] : opt.slow_links)
      if (!fabric_.slow_link(id, factor)) throw InputError("--slow-link", id, "a link id of this fabric (nvlink<gpu>, nic<n>, leaf<l>-up, rail<g>.<r>-up, pod<p>-up)");
    // One piece of work per virtual stage v = chunk x pp + stage (a stage's model chunk under the interleaved
    // schedule; chunk 0 alone otherwise): its layers, the embedding on the first, the loss head on the last.
    const int chunks = std::max(1, p.vpp), virtual_count = virtual_stages(p);
    for (int v = 0; v < virtual_count; ++v) {
      int layers = layers_in_virtual_stage(sc.model.num_hidden_layers, p, v);
      const int first = first_layer_of_virtual_stage(sc.model.num_hidden_layers, p, v);
      int dense = std::clamp(sc.model.num_dense_layers() - first, 0, layers);
      if (v == virtual_count - 1) {  // the multi-token-prediction modules' layers, after the last
        layers += sc.model.mtp_layers;
        if (!sc.model.last_layer_moe()) dense += sc.model.mtp_layers;
      }
      StageWork w;
      w.forward = stage_phase(stream_, dense, layers - dense, false);
      w.backward = stage_phase(stream_, dense, layers - dense, true);
      if (v == 0) w.forward.compute += stream_.edge.embedding_s / 3, w.backward.compute += stream_.edge.embedding_s * 2 / 3;
      if (v == virtual_count - 1) w.forward.compute += stream_.edge.head_s / 3, w.backward.compute += stream_.edge.head_s * 2 / 3;
      stages_.push_back(w);
    }
    // ZeRO-3's unhidden first gather and last reduce, once per stage and micro-batch (as the analytic fold has
    // it): on the stage's first chunk that holds layers.
    for (int stage = 0; stage < p.pp; ++stage)
      for (int c = 0; c < chunks; ++c)
        if (layers_in_virtual_stage(sc.model.num_hidden_layers, p, c * p.pp + stage) > 0) {
          work(stage, c).zero3 = zero3_edge(stream_.first_layer_dense ? stream_.dense : stream_.moe);
          break;
        }
    // The units outside the layers: the embedding's on the first virtual stage, the head's on the last.
    auto add_unit = [](Zero3Edge& to, const Zero3Edge& unit) {
      to.forward_s += unit.forward_s, to.forward_bytes += unit.forward_bytes;
      to.backward_s += unit.backward_s, to.backward_bytes += unit.backward_bytes;
    };
    add_unit(work(0, 0).zero3, stream_.zero3_first);
    add_unit(work(p.pp - 1, chunks - 1).zero3, stream_.zero3_last);
    for (const CommOp& op : stream_.stage_comm) {
      if (op.collective == Collective::SendRecv) p2p_ = op;
      else p2p_gather_.add(op, 1 / op.calls);  // one gather per received tensor
    }
    ranks_.resize(static_cast<std::size_t>(world));
    rank_ids_.resize(static_cast<std::size_t>(world));
    for (int r = 0; r < world; ++r) rank_ids_[static_cast<std::size_t>(r)] = r;
    world_barrier_ = sg4::Barrier::create(static_cast<unsigned>(world / width_));
    rng_.seed(opt.seed);
  }

  // First each communication op of the stream alone on the fabric (a probe actor, both backends), then the
  // iterations: one actor per GPU or TP group.
  void run() {
    sg4::Actor::create("ops", fabric_.gpu(0), [this] {
      time_ops();
      for (int r = 0; r < grid_.world(); r += width_) sg4::Actor::create("rank" + std::to_string(r), fabric_.gpu(r), [this, r] { rank_main(r); });
    });
    sg4::Engine::get_instance()->run();
  }

  SimulationResult result() {
    SimulationResult out;
    out.ops = ops_;
    out.gpus = grid_.world();
    out.iteration_s = iteration_s_;
    double sum = 0;
    for (double t : iteration_s_) sum += t;
    out.step_time_s = iteration_s_.empty() ? 0 : sum / static_cast<double>(iteration_s_.size());
    // The slowest stage's first rank (most compute), per iteration.
    int best = 0;
    for (int r = 0; r < grid_.world(); r += width_)
      if (ranks_[static_cast<std::size_t>(r)].parts.compute_s > ranks_[static_cast<std::size_t>(best)].parts.compute_s * (1 + 1e-12)) best = r;
    out.reported_gpu = best;
    const double n = std::max(1, opt_.iterations);
    SimBreakdown b = ranks_[static_cast<std::size_t>(best)].parts;
    for (double* v : {&b.compute_s, &b.tp_s, &b.cp_s, &b.ep_s, &b.dp_s, &b.pp_s, &b.wait_s, &b.optimizer_s, &b.overhead_s}) *v /= n;
    out.breakdown = b;
    const double total = sum > 0 ? sum : 1;
    for (const FabricLink& l : fabric_.links()) {
      const double up = link_effective_[l.up], down = link_effective_[l.down];
      const double bytes = link_bytes_[l.up] + link_bytes_[l.down];
      if (bytes <= 0) continue;
      out.links.push_back({l.id, bytes / n, std::max(up, down) / (l.bandwidth * total)});
    }
    std::sort(out.links.begin(), out.links.end(), [](const LinkUse& x, const LinkUse& y) { return x.utilization > y.utilization; });
    out.flows = flows_;
    out.checkpoint_s = checkpoint_s_;
    return out;
  }

 private:
  struct StageWork {
    Phase forward, backward;
    Zero3Edge zero3;
  };
  struct RankState {
    SimBreakdown parts;
  };

  void event(int rank, const std::string& name, const char* cat, double start) {
    if (!opt_.trace) return;
    const double now = sg4::Engine::get_clock();
    if (now <= start) return;
    // A group actor's timeline is each of its GPUs' timeline.
    TraceEvent e{rank, name, cat, start, now - start};
    for (int m = 0; m < width_; ++m, ++e.gpu) opt_.trace(e);
  }

  void compute(int rank, double seconds, const std::string& name) {
    if (seconds <= 0) return;
    // A group actor runs at the pace of its slowest GPU (the next TP collective waits for it).
    double factor = 0;
    for (int m = rank; m < rank + width_; ++m) {
      double f = slow_[static_cast<std::size_t>(m)];
      if (opt_.jitter > 0) {
        std::normal_distribution<double> n(0.0, opt_.jitter);
        f *= 1 + std::clamp(n(rng_), -3 * opt_.jitter, 3 * opt_.jitter);
      }
      factor = std::max(factor, f);
    }
    const double start = sg4::Engine::get_clock();
    sg4::this_actor::sleep_for(seconds * std::max(0.0, factor));
    ranks_[static_cast<std::size_t>(rank)].parts.compute_s += sg4::Engine::get_clock() - start;
    event(rank, name, "compute", start);
  }

  // One flow of `bytes` from GPU `from` to `to` that alone takes `seconds` (Fabric::transfer), its bytes counted
  // on the route's links; `simulate` false: counted only, nothing started (nullptr).
  sg4::CommPtr flow(int from, int to, double seconds, double bytes, bool simulate = true) {
    const double effective = seconds * fabric_.nominal_bandwidth(from, to);
    if (counting_)
      for (sg4::Link* l : fabric_.route(from, to)) link_effective_[l] += effective, link_bytes_[l] += bytes;
    if (!simulate) return nullptr;
    ++flows_;
    return fabric_.transfer(fabric_.gpu(from), fabric_.gpu(to), bytes, seconds);
  }

  // This rank's flows of a collective over `members` that alone takes `t.seconds` and puts `t.bytes` on each ring
  // edge: one flow to the ring successor, or n-1 permutation rounds (all-to-all). `simulate` false: the flows'
  // bytes are counted on their links, but none is started. `round` > 0: only that round of an all-to-all.
  std::vector<sg4::CommPtr> start_flows(int rank, const std::vector<int>& members, const Traffic& t, bool all_to_all, bool simulate = true,
                                        int round = 0) {
    std::vector<sg4::CommPtr> comms;
    const int n = static_cast<int>(members.size());
    if (n < 2 || t.seconds <= 0) return comms;
    const int me = static_cast<int>(std::find(members.begin(), members.end(), rank) - members.begin());
    const int rounds = all_to_all ? n - 1 : 1;
    // A ring that spans nodes runs as NCCL's channels do, one ring per NIC: every member's flow crosses to the
    // member at its own position on the next node, so each GPU's NIC carries the inter-node traffic.
    int step = 1;
    if (!all_to_all) {
      const int per_node = std::max(1, sc_.hardware.gpus_per_node), node = rank / per_node;
      const int local = static_cast<int>(std::count_if(members.begin(), members.end(), [&](int m) { return m / per_node == node; }));
      if (local < n) step = local;
    }
    const int first = round > 0 ? round : 1, last = round > 0 ? round : rounds;
    for (int k = first; k <= last; ++k) {
      const int peer = members[static_cast<std::size_t>((me + k * step) % n)];
      if (sg4::CommPtr c = flow(rank, peer, t.seconds / rounds, t.bytes / rounds, simulate)) comms.push_back(std::move(c));
    }
    return comms;
  }

  // The flows of a collective of this kind for every GPU of the actor `rank` leads.
  std::vector<sg4::CommPtr> start_group_flows(int rank, GroupKind kind, const Traffic& t, bool all_to_all, int round = 0) {
    std::vector<sg4::CommPtr> comms;
    for (int m = rank; m < rank + width_; ++m)
      for (auto& c : start_flows(m, grid_.group(kind, m), t, all_to_all, true, round)) comms.push_back(std::move(c));
    return comms;
  }

  sg4::BarrierPtr barrier(GroupKind kind, const std::vector<int>& members) {
    const auto key = std::make_pair(static_cast<int>(kind), members.front());
    auto it = barriers_.find(key);
    if (it == barriers_.end()) it = barriers_.emplace(key, sg4::Barrier::create(static_cast<unsigned>(members.size()))).first;
    return it->second;
  }

  // A blocking collective: every member arrives (the wait is skew and stragglers), the flows run, every member
  // leaves when the last flow of the group ends.
  void collective(int rank, GroupKind kind, const Traffic& t, bool all_to_all, double* in_flight, const char* cat) {
    if (t.seconds <= 0) return;
    const std::vector<int> members = grid_.group(kind, rank);
    if (members.size() < 2) return;
    // A group inside this actor needs no barrier; other groups join the actors that hold their members.
    // (An actor spans a TP group only where etp is tp or 1, so an etp group inside one is that TP group.)
    const bool inside = (kind == GroupKind::Tp || kind == GroupKind::Etp) && width_ > 1;
    sg4::BarrierPtr b = inside ? nullptr : barrier(kind, members);
    double start = sg4::Engine::get_clock();
    if (b) b->wait();
    ranks_[static_cast<std::size_t>(rank)].parts.wait_s += sg4::Engine::get_clock() - start;
    event(rank, std::string(cat) + " wait", "wait", start);
    start = sg4::Engine::get_clock();
    // Collapsed, a ring is one flow per edge carrying the whole collective; expanded (groups of at most
    // expand_rings_up_to members), its n-1 or 2(n-1) steps run one after another, the group in lockstep (a step
    // sends what the previous one received), each 1/steps of the bytes and time.
    const int n = static_cast<int>(members.size());
    const int steps = !all_to_all && n <= opt_.expand_rings_up_to ? t.ring_steps(n) : 1;
    const Traffic step = t.part(1.0 / steps);
    if (inside && whole_node_tp_) {
      // A blocking ring over a whole node's NVSwitch: every edge's bytes counted, one edge simulated. Its ports
      // carry nothing else meanwhile (other groups leave the node through the NICs), so every edge takes the
      // time of one, and SimGrid ends one flow instead of tp.
      for (int k = 0; k < steps; ++k)
        for (int m = rank; m < rank + width_; ++m)
          for (auto& c : start_flows(m, members, step, false, m == rank)) c->wait();
    } else if (all_to_all) {
      // Rounds one after another: each round's flow alone takes 1/(n-1) of the collective, so an idle fabric gives
      // the analytic time; started together, a GPU's inter-node rounds would share its NIC and finish early.
      for (int k = 1; k < static_cast<int>(members.size()); ++k)
        for (auto& c : start_group_flows(rank, kind, t, true, k)) c->wait();
    } else {
      for (int k = 0; k < steps; ++k) {
        if (b && k > 0) b->wait();
        for (auto& c : start_group_flows(rank, kind, step, false)) c->wait();
      }
    }
    if (b) b->wait();
    *in_flight += sg4::Engine::get_clock() - start;
    event(rank, cat, cat, start);
  }

  // The SimGrid backend: one call of an op with every group of its kind at once, its flows alone on the fabric
  // (not counted in the link statistics); all-to-all rounds one after another, pipeline sends from every stage
  // to the next. Negative where the op's group matches none of the layout's groups.
  class FabricBackend final : public CommBackend {
   public:
    explicit FabricBackend(Simulation& s) : s_(s) {}
    const char* name() const override { return "simgrid"; }
    double call_time(const CommOp& op) override { return s_.probe(op); }

   private:
    Simulation& s_;
  };

  double probe(const CommOp& op) {
    const int world = grid_.world();
    const double start = sg4::Engine::get_clock();
    std::vector<sg4::CommPtr> comms;
    if (op.dim == ParallelDim::Pp) {
      for (int r = 0; r < world; ++r) {
        const int stage = grid_.coordinate(GroupKind::Pp, r);
        if (stage + 1 < sc_.parallel.pp) comms.push_back(fabric_.transfer(fabric_.gpu(r), fabric_.gpu(grid_.at_stage(r, stage + 1)), op.bytes, op.call_s));
      }
      for (auto& c : comms) c->wait();
      return sg4::Engine::get_clock() - start;
    }
    GroupKind kind = group_of(slot_of(op));
    if (op.dim == ParallelDim::Dp && static_cast<int>(grid_.group(kind, 0).size()) != op.group.size) kind = GroupKind::Edp;
    const int n = static_cast<int>(grid_.group(kind, 0).size());
    if (n != op.group.size || n < 2) return -1;
    Traffic t;
    CommOp one = op;
    one.calls = 1;
    t.add(one, 1);
    const bool a2a = op.collective == Collective::AllToAll;
    const bool counting = counting_;
    counting_ = false;
    for (int round = a2a ? 1 : 0; round <= (a2a ? n - 1 : 0); ++round) {
      for (int r = 0; r < world; ++r)
        for (auto& c : start_flows(r, grid_.group(kind, r), t, a2a, true, round)) comms.push_back(std::move(c));
      for (auto& c : comms) c->wait();
      comms.clear();
    }
    counting_ = counting;
    return sg4::Engine::get_clock() - start;
  }

  void time_ops() {
    AnalyticCommBackend analytic;
    FabricBackend fabric(*this);
    const long long flows = flows_;
    auto time = [&](const char* scope, const CommOp& op) {
      const double simulated = fabric.call_time(op);
      if (simulated >= 0) ops_.push_back({scope, op, analytic.call_time(op), simulated});
    };
    if (sc_.model.num_dense_layers() > 0)
      for (const CommOp& op : stream_.dense.comm) time("dense layer", op);
    if (sc_.model.is_moe())
      for (const CommOp& op : stream_.moe.comm) time("MoE layer", op);
    for (const CommOp& op : stream_.stage_comm) time("stage", op);
    for (const CommOp& op : stream_.step_comm) time("step", op);
    flows_ = flows;  // the iterations' flows only
  }

  GroupKind group_of(int slot) const {
    if (slot == kEtpSlot) return GroupKind::Etp;
    switch (slot_dim(slot)) {
      case ParallelDim::Tp: return GroupKind::Tp;
      case ParallelDim::Cp: return GroupKind::Cp;
      case ParallelDim::Ep: return GroupKind::Ep;
      case ParallelDim::Pp: return GroupKind::Pp;
      case ParallelDim::Dp: return GroupKind::DpCp;
    }
    return GroupKind::Dp;
  }
  double* part(int rank, ParallelDim d) {
    SimBreakdown& b = ranks_[static_cast<std::size_t>(rank)].parts;
    switch (d) {
      case ParallelDim::Tp: return &b.tp_s;
      case ParallelDim::Cp: return &b.cp_s;
      case ParallelDim::Ep: return &b.ep_s;
      case ParallelDim::Pp: return &b.pp_s;
      case ParallelDim::Dp: return &b.dp_s;
    }
    return &b.dp_s;
  }

  // One phase of one micro-batch: overlapped flows start with the compute and are awaited at the end of their
  // window (shortest window first); NCCL's SM share stretches the compute by f x the overlapped seconds; then
  // the blocking collectives, one per parallel dimension.
  void phase(int rank, const Phase& ph, const std::string& name, std::vector<sg4::CommPtr>* extra, double extra_window) {
    struct Open {
      double window;
      std::vector<sg4::CommPtr> comms;
    };
    std::vector<Open> open;
    double stretch = 0;
    for (int w = 1; w < 7; ++w)
      for (int d = 0; d < kSlots; ++d) {
        const Traffic& t = ph.windows[w].traffic[d];
        if (t.seconds <= 0) continue;
        open.push_back({ph.windows[w].compute, start_group_flows(rank, group_of(d), t, false)});
        stretch += stream_.sm_share * t.seconds;
      }
    if (extra) open.push_back({extra_window, std::move(*extra)});
    std::sort(open.begin(), open.end(), [](const Open& a, const Open& b) { return a.window < b.window; });
    const double total = ph.compute + stretch;
    double done = 0;
    for (Open& o : open) {
      const double until = std::min(o.window, total);
      if (until > done) compute(rank, until - done, name), done = until;
      const double start = sg4::Engine::get_clock();
      for (auto& c : o.comms) c->wait();
      ranks_[static_cast<std::size_t>(rank)].parts.wait_s += sg4::Engine::get_clock() - start;
      event(rank, "overlapped comm", "wait", start);
    }
    if (total > done) compute(rank, total - done, name);
    for (int d = 0; d < kSlots; ++d)
      collective(rank, group_of(d), ph.blocking[d], ph.all_to_all[d], part(rank, slot_dim(d)), dim_category(d));
  }

  // Pipeline point-to-point. The sender leaves a notice naming itself; the receiver, once it is there, moves the
  // data from each of the sender's GPUs to its own (a transfer starts when both sides are ready, as Megatron's
  // batched isend/irecv). The sender does not wait: holding every send of the iteration until its end made each
  // completion cost SimGrid time in the number of sends in flight.
  void send(int rank, const std::string& mailbox) {
    sg4::Mailbox::by_name(mailbox)->put_init(&rank_ids_[static_cast<std::size_t>(rank)], 0)->detach();
  }
  void receive(int rank, const char* mailbox) {
    const double start = sg4::Engine::get_clock();
    const int from = *sg4::Mailbox::by_name(mailbox)->get<int>();
    std::vector<sg4::CommPtr> transfers;
    for (int m = 0; m < width_; ++m) transfers.push_back(flow(from + m, rank + m, p2p_.call_s, p2p_.bytes));
    for (auto& t : transfers) t->wait();
    ranks_[static_cast<std::size_t>(rank)].parts.pp_s += sg4::Engine::get_clock() - start;
    event(rank, mailbox[0] == 'a' ? "wait for activations" : "wait for gradients", "pp", start);
    // Scattered over the TP group (pipeline_p2p_scatter_gather): its GPUs all-gather what each received.
    collective(rank, GroupKind::Tp, p2p_gather_, false, &ranks_[static_cast<std::size_t>(rank)].parts.pp_s, "pp");
  }

  StageWork& work(int stage, int chunk) { return stages_[static_cast<std::size_t>(chunk * sc_.parallel.pp + stage)]; }
  // Mailboxes per receiving rank and chunk: each is fed by one sender in micro-batch order.
  static std::string box(const char* kind, int rank, int chunk) { return std::string(kind) + std::to_string(rank) + "." + std::to_string(chunk); }

  // Forward of one chunk and micro-batch: activations from the previous virtual stage (the previous stage's
  // same chunk, or the last stage's previous chunk), to the next one.
  void forward(int rank, int stage, int chunk, int mb, std::vector<sg4::CommPtr>* gather, double gather_window) {
    const int pp = sc_.parallel.pp, v = chunk * pp + stage;
    const StageWork& w = work(stage, chunk);
    if (v > 0) receive(rank, box("act", rank, chunk).c_str());
    Traffic edge;
    edge.seconds = w.zero3.forward_s, edge.bytes = w.zero3.forward_bytes;
    collective(rank, GroupKind::DpCp, edge, false, part(rank, ParallelDim::Dp), "dp");
    phase(rank, w.forward, "forward mb" + std::to_string(mb) + (chunk > 0 ? " chunk" + std::to_string(chunk) : ""), gather, gather_window);
    if (v + 1 < virtual_stages(sc_.parallel)) {
      const int to_stage = (v + 1) % pp, to_chunk = (v + 1) / pp;
      const int to = grid_.at_stage(rank, to_stage);
      send(rank, box("act", to, to_chunk));
    }
  }

  void backward(int rank, int stage, int chunk, int mb, std::vector<sg4::CommPtr>* reduce, double reduce_window) {
    const int pp = sc_.parallel.pp, v = chunk * pp + stage;
    const StageWork& w = work(stage, chunk);
    if (v + 1 < virtual_stages(sc_.parallel)) receive(rank, box("grad", rank, chunk).c_str());
    phase(rank, w.backward, "backward mb" + std::to_string(mb) + (chunk > 0 ? " chunk" + std::to_string(chunk) : ""), reduce, reduce_window);
    Traffic edge;
    edge.seconds = w.zero3.backward_s, edge.bytes = w.zero3.backward_bytes;
    collective(rank, GroupKind::DpCp, edge, false, part(rank, ParallelDim::Dp), "dp");
    if (v > 0) {
      const int to_stage = (v - 1) % pp, to_chunk = (v - 1) / pp;
      const int to = grid_.at_stage(rank, to_stage);
      send(rank, box("grad", to, to_chunk));
    }
  }

  // The step's DP ops of one window: per group the window's largest call blocking later (the last gradient bucket,
  // the first parameter bucket: the analytic fold's rule, op_stream.cpp), every other call overlapped (started here);
  // without a window, all of them blocking.
  struct StepSync {
    Traffic overlapped[2], last[2];  // dense (dp·cp group), expert (expert-dp group)
  };
  StepSync step_sync(OverlapWindow w) const {
    StepSync s;
    // The dense group's ops come first (StepStream::dense_step_comm), then the expert group's.
    auto group = [&](int i) { return i < stream_.dense_step_comm ? 0 : 1; };
    int largest[2] = {-1, -1};
    for (int i = 0; i < stream_.step_comm.size; ++i) {
      const CommOp& op = stream_.step_comm.ops[i];
      int& l = largest[group(i)];
      if (op.window == w && (l < 0 || op.call_s > stream_.step_comm.ops[l].call_s)) l = i;
    }
    for (int i = 0; i < stream_.step_comm.size; ++i) {
      const CommOp& op = stream_.step_comm.ops[i];
      if (op.window != w) continue;
      const int g = group(i);
      Traffic all;
      all.add(op, 1);
      const double blocking = op.window == OverlapWindow::None ? 1.0 : i == largest[g] ? 1.0 / op.calls : 0.0;
      s.overlapped[g].seconds += all.seconds * (1 - blocking), s.overlapped[g].bytes += all.bytes * (1 - blocking);
      s.last[g].seconds += all.seconds * blocking, s.last[g].bytes += all.bytes * blocking;
    }
    return s;
  }

  void rank_main(int rank) {
    const ParallelLayout& p = sc_.parallel;
    const int stage = grid_.coordinate(GroupKind::Pp, rank);
    const int m = stream_.micro_batches;
    // Megatron's schedules (pipeline_parallel/schedules.py). Virtual micro-batch k runs chunk (k / pp) mod vpp
    // (backward: counted from the last chunk) of micro-batch (k / (pp x vpp)) x pp + k mod pp, after the
    // schedule's warm-up forwards (models/step/pipeline_schedule.hpp), then one forward, one backward.
    const int chunks = std::max(1, p.vpp), total = m * chunks;
    const int warmup = std::min(total, pipeline_schedule(p.schedule).warmup_forwards(p, stage, m));
    auto chunk_of = [&](int k, bool backward) {
      const int c = (k / p.pp) % chunks;
      return backward ? chunks - 1 - c : c;
    };
    auto micro_batch_of = [&](int k) { return chunks > 1 ? (k / (p.pp * chunks)) * p.pp + k % p.pp : k; };
    const StepSync gather = step_sync(OverlapWindow::FirstForward), reduce = step_sync(OverlapWindow::LastBackward),
                   blocking = step_sync(OverlapWindow::None);
    const GroupKind sync_groups[2] = {GroupKind::DpCp, GroupKind::Edp};
    RankState& me = ranks_[static_cast<std::size_t>(rank)];
    for (int it = 0; it < opt_.iterations; ++it) {
      const double begin = sg4::Engine::get_clock();
      // The parameter gather: its first bucket before the first forward, the rest beside it.
      std::vector<sg4::CommPtr> gather_flows;
      for (int g = 0; g < 2; ++g) {
        collective(rank, sync_groups[g], gather.last[g], false, &me.parts.dp_s, "dp");
        for (auto& c : start_group_flows(rank, sync_groups[g], gather.overlapped[g], false)) gather_flows.push_back(c);
      }
      // The step's overlapped DP ops hide behind one micro-batch through all of the stage's chunks (the analytic
      // windows): the gather is awaited once that much forward work has run, the reduce starts when that much
      // backward work is left. Under 1F1B these are the first forward and the last backward.
      double forward_window = 0, backward_window = 0;
      for (int c = 0; c < chunks; ++c) forward_window += work(stage, c).forward.compute, backward_window += work(stage, c).backward.compute;
      int reduce_from = total - 1;
      for (double left = work(stage, chunk_of(reduce_from, true)).backward.compute; reduce_from > 0 && left < backward_window * (1 - 1e-12);)
        left += work(stage, chunk_of(--reduce_from, true)).backward.compute;
      double forward_done = 0;
      bool gather_pending = true;
      std::vector<sg4::CommPtr> reduce_flows;
      int fwd = 0, bwd = 0;
      auto next_forward = [&] {
        const int chunk = chunk_of(fwd, false);
        const double compute = work(stage, chunk).forward.compute;
        const bool await = gather_pending && forward_done + compute >= forward_window * (1 - 1e-12);
        forward(rank, stage, chunk, micro_batch_of(fwd), await ? &gather_flows : nullptr, forward_window - forward_done);
        gather_pending = gather_pending && !await;
        forward_done += compute;
        ++fwd;
      };
      auto next_backward = [&] {
        const bool last = bwd == total - 1;
        const int chunk = chunk_of(bwd, true);
        if (bwd == reduce_from)
          for (int g = 0; g < 2; ++g)
            for (auto& c : start_group_flows(rank, sync_groups[g], reduce.overlapped[g], false)) reduce_flows.push_back(c);
        backward(rank, stage, chunk, micro_batch_of(bwd), last ? &reduce_flows : nullptr, work(stage, chunk).backward.compute);
        ++bwd;
        // Progress within the iteration (rank 0's backwards): a large iteration takes minutes.
        if (rank == 0 && opt_.progress) opt_.progress((it + 0.95 * bwd / total) / opt_.iterations);
      };
      for (int i = 0; i < warmup; ++i) next_forward();
      while (fwd < total) {
        next_forward();
        next_backward();
      }
      while (bwd < total) next_backward();
      for (auto& c : gather_flows) c->wait();  // none left: the forwards exceed the window
      for (int g = 0; g < 2; ++g) {
        collective(rank, sync_groups[g], reduce.last[g], false, &me.parts.dp_s, "dp");
        collective(rank, sync_groups[g], blocking.last[g], false, &me.parts.dp_s, "dp");
      }
      double start = sg4::Engine::get_clock();
      sg4::this_actor::sleep_for(stream_.optimizer_s);
      me.parts.optimizer_s += stream_.optimizer_s;
      event(rank, "optimizer", "optimizer", start);
      start = sg4::Engine::get_clock();
      sg4::this_actor::sleep_for(stream_.overhead_s);
      me.parts.overhead_s += stream_.overhead_s;
      event(rank, "step overhead", "optimizer", start);
      start = sg4::Engine::get_clock();
      world_barrier_->wait();
      me.parts.wait_s += sg4::Engine::get_clock() - start;
      event(rank, "end-of-step barrier", "wait", start);
      if (rank == 0) {
        iteration_s_.push_back(sg4::Engine::get_clock() - begin);
        if (opt_.progress) opt_.progress(static_cast<double>(it + 1) / opt_.iterations);
      }
    }
    if (opt_.checkpoint.bytes > 0) write_checkpoint(rank);
  }

  // Every GPU of the actor writes its share, through its NIC and the fabric to the storage host (or to its
  // node's disks at its share of the node's rate); the checkpoint is done when the last write ends.
  void write_checkpoint(int rank) {
    const double start = sg4::Engine::get_clock();
    const double share = opt_.checkpoint.bytes / grid_.world(), rate = opt_.checkpoint.gpu_rate;
    if (fabric_.storage()) {
      std::vector<sg4::CommPtr> writes;
      for (int m = rank; m < rank + width_; ++m) writes.push_back(fabric_.write_to_storage(fabric_.gpu(m), share));
      for (auto& w : writes) w->wait();
    } else if (rate > 0) {
      sg4::this_actor::sleep_for(share / rate);
    }
    world_barrier_->wait();
    if (rank == 0) checkpoint_s_ = sg4::Engine::get_clock() - start;
    event(rank, "checkpoint write", "checkpoint", start);
  }

  const Scenario& sc_;
  const SimOptions& opt_;
  RankGrid grid_;
  StepStream stream_;
  Fabric fabric_;
  std::vector<StageWork> stages_;
  CommOp p2p_{};
  Traffic p2p_gather_{};  // the TP all-gather after each scattered receive (none: zero seconds)
  std::vector<double> slow_;
  std::vector<RankState> ranks_;
  std::map<std::pair<int, int>, sg4::BarrierPtr> barriers_;
  sg4::BarrierPtr world_barrier_;
  std::unordered_map<const sg4::Link*, double> link_effective_, link_bytes_;
  std::vector<double> iteration_s_;
  double checkpoint_s_ = 0;
  std::mt19937_64 rng_;
  long long flows_ = 0;
  int width_ = 1;  // GPUs per actor: the TP group, or 1
  bool whole_node_tp_ = false;  // the TP group is a whole node
  std::vector<int> rank_ids_;  // payloads of the pipeline notices
  std::vector<OpTiming> ops_;
  bool counting_ = true;       // flows count in the link statistics (not the op probes')
};

}  // namespace

SimulationResult simulate_iterations(const Scenario& sc, const StepModel& model, const SimOptions& options) {
  const ParallelLayout& p = sc.parallel;
  if (p.vpp > 1 && p.gradient_accumulation_steps % p.pp != 0)
    throw InputError("/parallel/gradient_accumulation_steps", std::to_string(p.gradient_accumulation_steps),
                     "a multiple of pp (" + std::to_string(p.pp) + ") under the interleaved schedule, as Megatron requires");
  if (pairs_stages(p))
    throw InputError("/parallel/schedule", std::string("\"") + to_string(p.schedule) + "\"", "gpipe, 1f1b or interleaved in trainsim simulate",
                     "the simulator runs Megatron's one-direction schedules; estimate and plan price this one");
  // The rank grid has one data-parallel group: hybrid sharding's shard and replica groups are not laid out.
  if (p.dp_replicate > 1)
    throw InputError("/parallel/dp_replicate", std::to_string(p.dp_replicate), "1 in trainsim simulate (hybrid sharding is priced by estimate and plan)",
                     "the simulator's rank grid has one data-parallel group");
  if (p.world() > kMaxSimulatedGpus)
    throw InputError("/parallel", std::to_string(p.world()) + " GPUs", "at most " + std::to_string(kMaxSimulatedGpus) + " GPUs in trainsim simulate",
                     "one iteration takes about 12 s at 4,096 GPUs and 5 min at 16,384; estimate and plan price any size, "
                     "and a slice with fewer data-parallel replicas (--dp) shows the same contention per group");
  static bool ran = false;
  if (ran) throw std::logic_error("simulate_iterations: one simulation per process (SimGrid engine)");
  ran = true;
  simgrid_engine();
  Simulation sim(sc, model, options);
  sim.run();
  return sim.result();
}

}  // namespace trainsim::sim
