// HCCL's collectives on Ascend NPUs, in HCCL's own alpha-beta-gamma cost model. Sources:
//  [HA]  hicann/hccl, docs/en/user_guide/coll_algo_intro at commit bf07f6e: algo_intro.md (the Hockney model,
//        one step of n bytes D = α + nβ + nγ; inside a server Mesh, chosen by the topology; between servers Ring,
//        RHD, NHR, NB and Pipeline, chosen adaptively by product, data size and server count; the hierarchical
//        phases per operator on Atlas A2: all-reduce = intra-server reduce-scatter, inter-server all-reduce,
//        intra-server all-gather; all-to-all = intra-server then inter-server), and each algorithm's time:
//        Mesh.md (AG, RS: α + n/p β; AR 2α + 2n/p β), Ring.md ((p-1)α + (p-1)/p nβ per phase), NHR.md and
//        NB.md (⌈log2 p⌉α + (p-1)/p nβ per phase), RHD.md (log2 p α at powers of two, more elsewhere: never
//        below NHR), Pipeline.md (per phase max(s/p β_inter + α_inter, s/p β_intra + α_intra)(p_inter - 1) +
//        s/p β_intra + α_intra), Pairwise.md (one peer per step).
//  γ = 0: on Atlas A2 HCCL reduces inline, in the engines that move the data (its executors' reduceAttr
//  INLINE_REDUCE_BITMASK), for the sums training runs.
//  α: the fabric presets' latencies (HCCS inside the server, the network's between servers). β: one over what one
//  rank's transfer gets: a link to one HCCS peer (the full-mesh aggregate over the 7 peers) or its NIC share. No
//  public HCCL per-call launch figure: NCCL's ring base latency (6.6 us) stands in for it.
#include <algorithm>
#include <limits>

#include "models/comm/collective_shape.hpp"

namespace trainsim::collective_detail {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kCallLatency = 6.6e-6;

// All-reduce runs a reduce-scatter phase and an all-gather phase; the others one.
int phases(Collective op) { return op == Collective::AllReduce ? 2 : 1; }

// [HA Mesh] inside one server: each rank reads from or writes to its g-1 peers at once, one α per phase;
// (g-1)/g of the buffer per phase over the links to those peers.
double mesh_time(Collective op, double bytes, int g, const CommModel& m) {
  const double per_phase = static_cast<double>(g - 1) / g * bytes / intra_bw(m, g);
  return phases(op) * (m.intra_latency_s + per_phase);
}

// [HA Ring, NHR, NB] between servers, one rank per server (or each rank of a server on its slice): (p-1)/p of
// the buffer per phase through the rank's NIC share; Ring pays p-1 latencies a phase, NHR and NB ⌈log2 p⌉.
double inter_time(Collective op, double bytes, int nodes, const CommModel& m, const char** name) {
  const double per_phase = static_cast<double>(nodes - 1) / nodes * bytes / nic_share(m);
  const double ring = phases(op) * ((nodes - 1) * m.inter_latency_s + per_phase);
  const double nhr = phases(op) * (ceil_log2(nodes) * m.inter_latency_s + per_phase);
  if (name) *name = nhr < ring ? "nhr" : "ring";
  return std::min(ring, nhr);
}

// [HA hierarchical phases] a group of g ranks on each of several servers: the servers' slices (1/g of the
// buffer per rank) cross the network while the rest moves on HCCS, one phase after the other.
double hierarchical_time(Collective op, double bytes, Shape s, const CommModel& m) {
  const double slice = bytes / s.g;
  switch (op) {
    case Collective::AllReduce:
      return mesh_time(Collective::ReduceScatter, bytes, s.g, m) + inter_time(Collective::AllReduce, slice, s.nodes, m, nullptr) +
             mesh_time(Collective::AllGather, bytes, s.g, m);
    case Collective::AllGather:
    case Collective::ReduceScatter: return mesh_time(op, bytes, s.g, m) + inter_time(op, slice, s.nodes, m, nullptr);
    default: return kInf;
  }
}

// [HA Pipeline] the same phases overlapped: while a block crosses the network, the block received the step
// before goes to the g-1 server peers; p_inter - 1 such steps and one last on HCCS, per phase.
double pipeline_time(Collective op, double bytes, Shape s, const CommModel& m) {
  const double block = bytes / s.n;
  const double intra = m.intra_latency_s + block * (s.g - 1) / intra_bw(m, s.g);
  const double inter = m.inter_latency_s + block / nic_share(m);
  return phases(op) * (std::max(inter, intra) * (s.nodes - 1) + intra);
}

// [HA Mesh, Pairwise] all-to-all: on one server every peer at once; across servers the server's data is first
// regrouped on HCCS by destination rank index, then exchanged with one server a step.
double all_to_all_time(double bytes, Shape s, const CommModel& m) {
  const double intra = s.g > 1 ? m.intra_latency_s + static_cast<double>(s.g - 1) / s.g * bytes / intra_bw(m, s.g) : 0.0;
  if (s.nodes <= 1) return intra;
  return intra + (s.nodes - 1) * m.inter_latency_s + static_cast<double>(s.nodes - 1) / s.nodes * bytes / nic_single(m);
}

}  // namespace

double hccl_time(Collective op, double bytes, Shape s, const CommModel& m, const char** name) {
  double t = kInf;
  const char* chosen = "none";
  switch (op) {
    case Collective::AllReduce:
    case Collective::AllGather:
    case Collective::ReduceScatter:
      if (s.nodes <= 1) {
        t = mesh_time(op, bytes, s.g, m);
        chosen = "mesh";
      } else if (s.g <= 1) {
        t = inter_time(op, bytes, s.nodes, m, &chosen);
      } else {
        t = hierarchical_time(op, bytes, s, m);
        chosen = "hierarchical";
        if (const double p = pipeline_time(op, bytes, s, m); p < t) t = p, chosen = "pipeline";
      }
      break;
    case Collective::AllToAll:
      t = all_to_all_time(bytes, s, m);
      chosen = s.nodes > 1 ? "pairwise" : "mesh";
      break;
    case Collective::SendRecv:
      t = s.nodes > 1 ? m.inter_latency_s + bytes / nic_single(m) : m.intra_latency_s + bytes / intra_bw(m, 2);
      chosen = "p2p";
      break;
  }
  if (name) *name = chosen;
  return kCallLatency + t;
}

}  // namespace trainsim::collective_detail
