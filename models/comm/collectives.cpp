// Collective-communication cost model. Sources:
//  [T05]  Thakur, Rabenseifner, Gropp, "Optimization of Collective Communication Operations in MPICH",
//         IJHPCA 19(1), 2005: ring all-gather (p-1)a + (p-1)/p nb; ring reduce-scatter likewise;
//         all-reduce = reduce-scatter + all-gather, 2(p-1)a + 2(p-1)/p nb; pairwise-exchange all-to-all
//         (p-1)a + (p-1)/p nb; binomial/binary trees with ceil(log2 p) latency terms.
//  [PERF] NVIDIA/nccl-tests doc/PERFORMANCE.md: busbw = algbw * 2(n-1)/n (all-reduce), (n-1)/n (all-gather,
//         reduce-scatter, all-to-all), 1 (send/recv); algbw = S / t with S as nccl-tests counts it.
//  [TUNE] NVIDIA/nccl src/graph/tuning.cc (2.19+), ncclTopoTuneModel: ring latency = base + (nsteps -
//         nInterSteps) intraLat + nInterSteps interLat, nInterSteps = 2 nNodes (all-reduce) or nNodes - 1
//         (all-gather, reduce-scatter); tree latency = base + 2((ppn-1) intraLat + log2i(nNodes) interLat);
//         NVLS latency = hwLat[NVLINK][NVLS][Simple] = 23 us on one node. Per protocol (LL / LL128 / Simple):
//         baseLat Ring 6.6 / 14.0 / 8.4 us, Tree 6.8 / 14.0 / 8.4 us; hwLat Ring NVLink 0.6 / 1.9 / 3.4, PCI
//         1.0 / 2.5 / 5.7, NET 2.7 / 4.0 / 14.0 us; Tree NVLink 0.6 / 1.25 / 4.0, PCI 1.0 / 1.9 / 4.0, NET
//         5.0 / 8.5 / 14.0 us; LL intra-node hops x1.8 on several nodes; bandwidth LL = busBw/4 (several
//         nodes or all-reduce) or /3, capped at llMaxBws (Ampere 87.7 / 22.5 / 19.0, Hopper 141 / 45 / 35,
//         Blackwell twice Hopper, GB/s for 1 / 2 / more nodes), LL128 = 0.92 busBw (0.7 with one rank per
//         node), tree LL busBw/3.8, tree LL128 0.915 busBw (7/9 on one node); LL128 only on NVLink nodes;
//         ring Simple all-reduce over several nodes: latency x1.9 from nRanks/16 x 64 KiB up (plateau).
//         The tuner takes the fastest (algorithm, protocol): small messages go LL at a quarter of the
//         bandwidth, large ones Simple with its higher per-hop latency, which long rings pay in full.
//  [MB]   ../shared/reference/microbenchmarks.json: published nccl-tests bus bandwidths (the efficiency table).
#include "models/comm/collectives.hpp"

#include <algorithm>
#include <bit>
#include <limits>
#include <string_view>

#include "models/calibration/calibration.hpp"
#include "models/comm/collective_shape.hpp"
#include "models/core/errors.hpp"

namespace trainsim {

using namespace collective_detail;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// [TUNE] per-collective base latencies (seconds).
constexpr double kRingBaseLatency = 6.6e-6;  // baseLat[Ring][LL]; also used for all-to-all and send/recv
constexpr double kNvlsLatency = 23e-6;       // hwLat[NVLINK][NVLS][Simple], the whole NVLS latency on one node
// [TUNE] "if (a == NCCL_ALGO_TREE) busBw = std::min(busBw*.92, ...)": NCCL's tree reaches 92% of the ring's
// per-channel bandwidth (tree channels forward chunks through a parent and two children).
constexpr double kTreeBandwidthFactor = 0.92;

// NCCL's protocols [TUNE]. A fabric preset's `latency` is NCCL's LL hop latency for its kind (hwLat[..][Ring]
// [LL]: NVLink 0.6, PCI 1.0, NET 2.7 us); the other protocols' hops are NCCL's ratios to it, so a custom
// fabric's latency scales all three.
enum Protocol { kLL, kLL128, kSimple, kProtocols };
struct ProtocolCosts {
  double base_s;                        // baseLat[algorithm][protocol]
  double nvlink_hop, pci_hop, net_hop;  // hwLat[kind][algorithm][protocol] / hwLat[kind][Ring][LL]
  double bandwidth;                     // fraction of the Simple bus bandwidth (LL: several nodes / all-reduce)
  double bandwidth_one_node;            // the same for a one-node all-gather / reduce-scatter
};
constexpr ProtocolCosts kRingProtocols[kProtocols] = {
    {6.6e-6, 1.0, 1.0, 1.0, 1.0 / 4.0, 1.0 / 3.0},
    {14.0e-6, 1.9 / 0.6, 2.5 / 1.0, 4.0 / 2.7, 0.92, 0.92},
    {8.4e-6, 3.4 / 0.6, 5.7 / 1.0, 14.0 / 2.7, 1.0, 1.0},
};
constexpr ProtocolCosts kTreeProtocols[kProtocols] = {
    {6.8e-6, 1.0, 1.0, 5.0 / 2.7, 1.0 / 3.8, 1.0 / 3.8},
    {14.0e-6, 1.25 / 0.6, 1.9 / 1.0, 8.5 / 2.7, 0.915, 7.0 / 9.0},
    {8.4e-6, 4.0 / 0.6, 4.0 / 1.0, 14.0 / 2.7, 1.0, 1.0},
};
constexpr double kLLIntraHopOnSeveralNodes = 1.8;  // "if (nNodes > 1 && p == LL) intraLat *= 1.8"
constexpr double kRingPlateauLatency = 1.9;        // ring Simple all-reduce over nodes, large messages
constexpr double kLL128OneRankPerNode = 0.7;       // "ppn < 2 ? 0.7 : 0.92": sending and receiving through one NIC

// Large-message efficiency per fabric kind / NVLink generation: published nccl-tests bus bandwidth over
// the preset's one-direction link bandwidth (presets/fabrics.json). Grouped by generation, never by GPU:
// the A800 (nvlink3, 200 GB/s) and H800 (nvlink4, 200 GB/s) rows of [MB] are predictions, not inputs.
//
// NVLS all-reduce: each GPU pushes its buffer S once into the switch (multimem.ld_reduce) and receives the
// reduced S once (multimem.st multicast), so a GPU link carries ~S per direction whatever n is:
// algbw = link * nvls. From the 8x H100 row, busbw 480 = algbw * 2*7/8 -> algbw 274.3 GB/s = 0.610 of 450.
// The same ratio gives the H800 (200 GB/s link, NVLS): 0.610 * 200 * 1.75 = 213 GB/s busbw vs 215
// published; its busbw above the link rate is NVLS's in-switch reduction, impossible for a ring (<= 200).
constexpr FabricEfficiency kEfficiency[] = {
    {"nvlink3", 232.5 / 300.0, 0.0, true,
     "8x A100 SXM (NVLink3 + NVSwitch), one node: all-reduce busbw 232.5 GB/s (NVIDIA/nccl-tests #175, -e 4G) of the "
     "300 GB/s link of preset nvlink3-nvswitch = 0.775; no NVLS on this generation"},
    {"nvlink4", 370.0 / 450.0, 480.0 / (450.0 * 2.0 * 7.0 / 8.0), true,
     "8x H100 SXM (NVLink4 + NVSwitch), one node (NVIDIA/nccl-tests #212, NCCL maintainer): ring and non-all-reduce ops "
     "~370 GB/s busbw of the 450 GB/s link of preset nvlink4-nvswitch = 0.822; NVLS all-reduce 480 GB/s busbw = "
     "274.3 GB/s algbw at n = 8 = 0.610 of the link"},
    {"nvlink5", 370.0 / 450.0, 480.0 / (450.0 * 2.0 * 7.0 / 8.0), false,
     "no NVLink5 (B200) row in microbenchmarks.json: NVLink4's ratios (8x H100, NVIDIA/nccl-tests #212) applied to "
     "the 900 GB/s link; unvalidated"},
    {"infiniband", 47.5 / 50.0, 0.0, true,
     "per NDR 400 Gb/s NIC (ConnectX-7): 46-49 GB/s busbw (NVIDIA/nccl-tests #290, #267), midpoint 47.5 of 50 GB/s "
     "= 0.95; the HDR row (24 of 25 GB/s = 0.96, NVIDIA/nccl #412) agrees within 1%"},
    {"network", 47.5 / 50.0, 0.0, false,
     "RoCE, Omni-Path: no row in microbenchmarks.json; InfiniBand NDR's 0.95 (NVIDIA/nccl-tests #290, #267) borrowed "
     "(RDMA, as InfiniBand; TCP sockets have a row of their own)"},
    {"socket", 0.5, 0.0, true,
     "NCCL's socket transport (TCP over Ethernet, no RDMA): all-reduce busbw 4-6 GB/s on 4 nodes x 8 V100 joined by "
     "100 Gb/s TCP, the best of many NCCL_SOCKET_NTHREADS / NCCL_NSOCKS_PERTHREAD settings (NVIDIA/nccl #450: 5 of 12.5 "
     "GB/s = 0.40), and at most 60% of wire speed on 32 Gb/s (NVIDIA/nccl #209): 0.5, between the two; the copies "
     "through host memory and the kernel's TCP stack cost the rest"},
    {"point-to-point", 232.5 / 300.0, 0.0, false,
     "PCIe, Infinity Fabric, HCCS: no row in microbenchmarks.json; NVLink3's ring ratio 0.775 (8x A100, "
     "NVIDIA/nccl-tests #175) borrowed (on PCIe 4.0 x16: 24.4 of 31.5 GB/s, near the ~25 GB/s the pcie4 preset "
     "quotes as typical)"},
};
enum EfficiencyRow { kNvlink3, kNvlink4, kNvlink5, kInfiniband, kNetwork, kSocket, kPointToPoint };

bool starts_with(const std::string& s, std::string_view prefix) { return std::string_view(s).starts_with(prefix); }

// The bottleneck of a ring or tree spanning the shape: a GPU's node link, or the NICs the group's ranks on a
// node drive together. Ring all-reduce sends 2(n-1)/n S over every edge; across nodes each node's NICs carry
// that once in total (summed over channels), hence g * nic_share: DGX-A100, 8 x 24 GB/s = 192 ([MB]).
double spanning_bw(const CommModel& m, Shape s) {
  if (s.nodes <= 1) return intra_bw(m, s.g);
  const double net = static_cast<double>(s.g) * nic_share(m);
  return s.g > 1 ? std::min(intra_bw(m, s.g), net) : net;
}

// [TUNE] one protocol's hop latencies and bandwidth for this shape.
struct ProtocolTerms {
  double intra_hop_s, inter_hop_s, bandwidth;
};
ProtocolTerms protocol_terms(const ProtocolCosts& c, Protocol p, bool all_reduce, Shape s, const CommModel& m, double simple_bw) {
  ProtocolTerms t;
  t.intra_hop_s = m.intra_latency_s * (m.intra_nvlink ? c.nvlink_hop : c.pci_hop);
  if (p == kLL && s.nodes > 1) t.intra_hop_s *= kLLIntraHopOnSeveralNodes;
  t.inter_hop_s = m.inter_latency_s * c.net_hop;
  t.bandwidth = simple_bw * (s.nodes > 1 || all_reduce ? c.bandwidth : c.bandwidth_one_node);
  if (p == kLL128 && s.g < 2 && s.nodes > 1) t.bandwidth = simple_bw * kLL128OneRankPerNode;
  if (p == kLL) t.bandwidth = std::min(t.bandwidth, m.ll_max_bus_bandwidth[std::min(s.nodes, 3) - 1]);
  return t;
}

bool protocol_enabled(Protocol p, const CommModel& m) { return p != kLL128 || m.intra_nvlink; }

// [T05] ring, latency and protocol per [TUNE]: the fastest protocol.
double ring_time(Collective op, double bytes, Shape s, const CommModel& m) {
  const bool ar = op == Collective::AllReduce;
  const int steps = ar ? 2 * (s.n - 1) : s.n - 1;
  const int inter = s.nodes > 1 ? std::min(steps, ar ? 2 * s.nodes : s.nodes - 1) : 0;
  const double volume = bus_bandwidth_factor(op, s.n) * bytes, simple_bw = spanning_bw(m, s);
  double best = kInf;
  for (int p = 0; p < kProtocols; ++p) {
    const Protocol proto = static_cast<Protocol>(p);
    if (!protocol_enabled(proto, m)) continue;
    const ProtocolTerms t = protocol_terms(kRingProtocols[p], proto, ar, s, m, simple_bw);
    double latency = kRingProtocols[p].base_s + (steps - inter) * t.intra_hop_s + inter * t.inter_hop_s;
    if (proto == kSimple && ar && s.nodes > 1 && bytes >= s.n / 16.0 * 65536.0) latency *= kRingPlateauLatency;
    best = std::min(best, latency + volume / t.bandwidth);
  }
  return best;
}

// All-reduce on NCCL's tree: a chain inside each node and a double binary tree across nodes (NCCL 2.4,
// Sanders et al. 2009). Each rank (and each node's NICs) sends and receives ~2S per direction, so the
// bandwidth term is 2S / (0.92 B) against the ring's 2(n-1)/n S / B; the latency is logarithmic in nodes
// [TUNE], so the tree wins small messages over many nodes and the ring large ones.
double tree_time(double bytes, Shape s, const CommModel& m) {
  const double simple_bw = kTreeBandwidthFactor * spanning_bw(m, s);
  double best = kInf;
  for (int p = 0; p < kProtocols; ++p) {
    const Protocol proto = static_cast<Protocol>(p);
    if (!protocol_enabled(proto, m)) continue;
    const ProtocolTerms t = protocol_terms(kTreeProtocols[p], proto, true, s, m, simple_bw);
    const double latency =
        kTreeProtocols[p].base_s + 2.0 * ((s.g - 1) * t.intra_hop_s + floor_log2(s.nodes) * t.inter_hop_s);
    best = std::min(best, latency + 2.0 * bytes / t.bandwidth);
  }
  return best;
}

bool nvls_applies(Collective op, Shape s, const CommModel& m) {
  return m.intra_nvls_bandwidth > 0 && s.nodes == 1 && s.n > 1 &&
         (op == Collective::AllReduce || op == Collective::AllGather || op == Collective::ReduceScatter);
}

// NVLink SHARP, one node. All-reduce: ~S per link direction at the NVLS efficiency (table comment).
// All-gather / reduce-scatter: the receive (send) side still carries (n-1)/n S per GPU, at the ring
// efficiency ([MB]: "non-all-reduce ops ~370 GB/s" with NVLS on H100); only the latency differs.
double nvls_time(Collective op, double bytes, Shape s, const CommModel& m) {
  if (op == Collective::AllReduce) return kNvlsLatency + bytes / m.intra_nvls_bandwidth;
  return kNvlsLatency + bus_bandwidth_factor(op, s.n) * bytes / intra_bw(m, s.n);
}

double best_intra(Collective op, double bytes, int g, const CommModel& m) {
  const Shape s{g, g, 1};
  double t = ring_time(op, bytes, s, m);
  if (nvls_applies(op, s, m)) t = std::min(t, nvls_time(op, bytes, s, m));
  return t;
}

double best_inter(Collective op, double bytes, int nodes, const CommModel& m) {
  const Shape s{nodes, 1, nodes};
  double t = ring_time(op, bytes, s, m);
  if (op == Collective::AllReduce) t = std::min(t, tree_time(bytes, s, m));
  return t;
}

// Two-level all-reduce for a group spanning nodes with g > 1 ranks on each: the g local ranks each own 1/g of
// the buffer and run the inter-node step on it in parallel, one per local rank, each over its NIC share
// (together the node's NICs the group can use). Phases run one after the other (no pipelining). All-reduce
// only: NCCL runs all-gather and reduce-scatter as a ring over every rank (or PAT at one GPU per node, NVLS and
// CollNet where the hardware has them), never in two levels (src/graph/tuning.cc: the algorithms it allows per
// collective), so their latency grows with the ranks, not the nodes.
double hierarchical_time(Collective op, double bytes, Shape s, const CommModel& m) {
  if (op != Collective::AllReduce || s.nodes <= 1 || s.g <= 1) return kInf;
  return best_intra(Collective::ReduceScatter, bytes, s.g, m) + best_inter(Collective::AllReduce, bytes / s.g, s.nodes, m) +
         best_intra(Collective::AllGather, bytes, s.g, m);
}

// [T05] pairwise exchange: n-1 steps, S/n to each peer. Local peers go over the node link, remote peers over
// this GPU's one NIC, at the same time; latency one hop per peer.
double pairwise_time(double bytes, Shape s, const CommModel& m) {
  const double chunk = bytes / s.n;
  const int local = s.g - 1, remote = s.n - s.g;
  const double latency = kRingBaseLatency + local * m.intra_latency_s + remote * m.inter_latency_s;
  const double t_local = local > 0 ? local * chunk / intra_bw(m, s.g) : 0.0;
  const double t_remote = remote > 0 ? remote * chunk / nic_single(m) : 0.0;
  return latency + std::max(t_local, t_remote);
}

// One message between neighbours of the group; it crosses the network when the group spans nodes (the
// slowest hop of a pipeline sets its pace).
double p2p_time(double bytes, Shape s, const CommModel& m) {
  if (s.nodes > 1) return kRingBaseLatency + m.inter_latency_s + bytes / nic_single(m);
  return kRingBaseLatency + m.intra_latency_s + bytes / intra_bw(m, 2);
}

double algorithm_time(Collective op, CollectiveAlgorithm a, double bytes, Shape s, const CommModel& m) {
  const bool reduction_like = op == Collective::AllReduce || op == Collective::AllGather || op == Collective::ReduceScatter;
  switch (a) {
    case CollectiveAlgorithm::Ring: return reduction_like ? ring_time(op, bytes, s, m) : kInf;
    case CollectiveAlgorithm::Tree: return op == Collective::AllReduce ? tree_time(bytes, s, m) : kInf;
    case CollectiveAlgorithm::Nvls: return nvls_applies(op, s, m) ? nvls_time(op, bytes, s, m) : kInf;
    case CollectiveAlgorithm::Hierarchical: return reduction_like ? hierarchical_time(op, bytes, s, m) : kInf;
    case CollectiveAlgorithm::Pairwise: return op == Collective::AllToAll ? pairwise_time(bytes, s, m) : kInf;
    case CollectiveAlgorithm::PointToPoint: return op == Collective::SendRecv ? p2p_time(bytes, s, m) : kInf;
    case CollectiveAlgorithm::Auto: break;
  }
  return kInf;
}

const char* algorithm_name(CollectiveAlgorithm a) {
  switch (a) {
    case CollectiveAlgorithm::Ring: return "ring";
    case CollectiveAlgorithm::Tree: return "tree";
    case CollectiveAlgorithm::Nvls: return "nvls";
    case CollectiveAlgorithm::Hierarchical: return "hierarchical";
    case CollectiveAlgorithm::Pairwise: return "pairwise";
    case CollectiveAlgorithm::PointToPoint: return "p2p";
    case CollectiveAlgorithm::Auto: return "auto";
  }
  return "none";
}

// NCCL's tuner: the fastest of the algorithms that apply.
double auto_time(Collective op, double bytes, Shape s, const CommModel& m, const char** name) {
  double best = kInf;
  for (CollectiveAlgorithm a : {CollectiveAlgorithm::Ring, CollectiveAlgorithm::Tree, CollectiveAlgorithm::Nvls,
                                CollectiveAlgorithm::Hierarchical, CollectiveAlgorithm::Pairwise,
                                CollectiveAlgorithm::PointToPoint}) {
    const double t = algorithm_time(op, a, bytes, s, m);
    if (t < best) {
      best = t;
      if (name) *name = algorithm_name(a);
    }
  }
  return best;
}

// What the library picks by itself: NCCL's tuner, or HCCL's choice on Ascend.
double library_time(Collective op, double bytes, Shape s, const CommModel& m, const char** name) {
  return m.hccl ? hccl_time(op, bytes, s, m, name) : auto_time(op, bytes, s, m, name);
}

// Calibration profile (rules in calibration.hpp): the measured alpha-beta fit at the measured placement;
// elsewhere in the scope, the default time scaled by measured / default at the nearest measured placement
// for the same message size. Returns a negative time when the profile does not cover (op, scope).
double calibrated_time(Collective op, double bytes, Shape s, const CommModel& m) {
  const CommScope scope = s.nodes > 1 ? CommScope::Inter : CommScope::Intra;
  const CollectiveFit::Curve* c = m.calibration->nearest(op, scope, s.n, s.g);
  if (!c) return -1;
  const double measured = c->fit.alpha_s + bus_bandwidth_factor(op, c->group_size) * bytes / c->fit.beta;
  if (c->group_size == s.n && c->ranks_per_node == s.g) return measured;
  Shape e;
  e.n = c->group_size;
  e.g = std::clamp(c->ranks_per_node, 1, std::min(c->group_size, m.gpus_per_node));
  e.nodes = (e.n + e.g - 1) / e.g;
  const double default_there = library_time(op, bytes, e, m, nullptr);
  const double default_here = library_time(op, bytes, s, m, nullptr);
  if (!(default_there > 0) || default_there == kInf || default_here == kInf) return -1;
  return default_here * measured / default_there;
}

}  // namespace

namespace collective_detail {

int floor_log2(int x) { return x > 1 ? static_cast<int>(std::bit_width(static_cast<unsigned>(x))) - 1 : 0; }
int ceil_log2(int x) { return x > 1 ? static_cast<int>(std::bit_width(static_cast<unsigned>(x - 1))) : 0; }

double intra_bw(const CommModel& m, int g) {
  if (!m.intra_mesh || m.gpus_per_node <= 1) return m.intra_bandwidth;
  return m.intra_bandwidth * static_cast<double>(std::max(1, g - 1)) / static_cast<double>(m.gpus_per_node - 1);
}

// NCCL spreads a collective's channels over the node's NICs, and in a training step every GPU of the node runs
// its own group's collective at the same time (Megatron's groups of one kind are symmetric), so each rank gets
// nics_per_node / gpus_per_node NICs: 8 GPUs, 8 NICs -> one NIC per rank; a group with 8 ranks on the node
// drives all 8 NICs in aggregate.
// A GPU's traffic to the NICs crosses its own PCIe link too, so more NICs than GPUs add nothing past that link.
double nic_share(const CommModel& m) {
  const double share = m.nic_bandwidth * static_cast<double>(m.nics_per_node) / static_cast<double>(m.gpus_per_node);
  return m.gpu_link_bandwidth > 0 ? std::min(share, m.gpu_link_bandwidth) : share;
}

double nic_single(const CommModel& m) { return std::min(m.nic_bandwidth, nic_share(m)); }

}  // namespace collective_detail

const char* to_string(Collective c) {
  switch (c) {
    case Collective::AllReduce: return "all-reduce";
    case Collective::AllGather: return "all-gather";
    case Collective::ReduceScatter: return "reduce-scatter";
    case Collective::AllToAll: return "all-to-all";
    case Collective::SendRecv: return "send-recv";
  }
  return "?";
}

const char* to_string(CollectiveAlgorithm a) { return algorithm_name(a); }

double bus_bandwidth_factor(Collective c, int n) {
  if (n <= 1) return 0.0;
  const double frac = static_cast<double>(n - 1) / static_cast<double>(n);
  switch (c) {
    case Collective::AllReduce: return 2.0 * frac;
    case Collective::AllGather:
    case Collective::ReduceScatter:
    case Collective::AllToAll: return frac;
    case Collective::SendRecv: return 1.0;
  }
  return 1.0;
}

std::span<const FabricEfficiency> fabric_efficiency_table() { return kEfficiency; }

const FabricEfficiency& fabric_efficiency(const FabricSpec& f) {
  if (f.kind == "nvlink") {
    if (starts_with(f.name, "nvlink3")) return kEfficiency[kNvlink3];
    if (starts_with(f.name, "nvlink4")) return kEfficiency[kNvlink4];
    if (starts_with(f.name, "nvlink5")) return kEfficiency[kNvlink5];
    return kEfficiency[f.has_nvls ? kNvlink4 : kNvlink3];  // NVLS exists from NVLink4 on
  }
  if (f.kind == "infiniband") return kEfficiency[kInfiniband];
  if (f.kind == "roce" || f.kind == "omnipath") return kEfficiency[kNetwork];
  if (f.kind == "ethernet") return kEfficiency[kSocket];
  return kEfficiency[kPointToPoint];  // pcie, infinity-fabric, hccs
}

CommModel make_comm_model(const HardwareSpec& h) {
  CommModel m;
  m.gpus_per_node = std::max(1, h.gpus_per_node);
  m.nics_per_node = std::max(1, h.nics_per_node);
  m.intra_efficiency = &fabric_efficiency(h.intra_node);
  m.inter_efficiency = &fabric_efficiency(h.inter_node);
  m.intra_bandwidth = h.intra_node.bandwidth * m.intra_efficiency->ring;
  // NVLS needs the switch feature (has_nvls) and a measured NVLS ratio for the generation.
  m.intra_nvls_bandwidth = h.intra_node.has_nvls ? h.intra_node.bandwidth * m.intra_efficiency->nvls : 0.0;
  m.intra_latency_s = h.intra_node.latency_s;
  m.intra_nvlink = h.intra_node.kind == "nvlink";
  // [TUNE] llMaxBws by GPU generation, read off the NVLink generation that ships with it (GB/s, 1 / 2 / more nodes).
  const FabricEfficiency* gen = m.intra_efficiency;
  const double scale = gen == &kEfficiency[kNvlink5] ? 2.0 : 1.0;
  const bool hopper = gen == &kEfficiency[kNvlink4] || gen == &kEfficiency[kNvlink5];
  const double ll_caps[3] = {hopper ? 141.0 : 87.7, hopper ? 45.0 : 22.5, hopper ? 35.0 : 19.0};
  for (int i = 0; i < 3; ++i) m.ll_max_bus_bandwidth[i] = ll_caps[i] * scale * 1e9;
  m.intra_mesh = h.intra_node.kind == "infinity-fabric" || h.intra_node.kind == "hccs";
  m.hccl = h.gpu.vendor == "huawei";
  m.nic_bandwidth = nic_line_rate(h) * m.inter_efficiency->ring;
  m.gpu_link_bandwidth = h.gpu.host_link_rate * m.inter_efficiency->ring;
  m.inter_latency_s = h.inter_node.latency_s;
  return m;
}

CollectiveCost collective_time(Collective op, double bytes, GroupPlacement group, const CommModel& m,
                               CollectiveAlgorithm algorithm) noexcept {
  CollectiveCost cost;
  if (group.size <= 1 || !(bytes > 0)) return cost;  // nothing to communicate
  Shape s;
  s.n = group.size;
  s.g = std::clamp(group.ranks_per_node, 1, std::min(group.size, m.gpus_per_node));
  s.nodes = (s.n + s.g - 1) / s.g;

  if (algorithm != CollectiveAlgorithm::Auto) {
    cost.algorithm = algorithm_name(algorithm);
    cost.time_s = algorithm_time(op, algorithm, bytes, s, m);
  } else if (const double t = m.calibration ? calibrated_time(op, bytes, s, m) : -1.0; t >= 0) {
    cost.algorithm = "calibrated";
    cost.time_s = t;
  } else {
    cost.time_s = library_time(op, bytes, s, m, &cost.algorithm);
  }
  cost.bus_bandwidth = cost.time_s < kInf ? bus_bandwidth_factor(op, s.n) * bytes / cost.time_s : 0.0;
  return cost;
}

CollectiveCost collective_time(Collective op, double bytes, GroupPlacement group, const HardwareSpec& hardware,
                               CollectiveAlgorithm algorithm) {
  return collective_time(op, bytes, group, make_comm_model(hardware), algorithm);
}

// ---- group placement -------------------------------------------------------------------------------

GroupPlacement strided_group_placement(int size, int stride, int world, int gpus_per_node) {
  const int k = std::max(1, size), s = std::max(1, stride), G = std::max(1, gpus_per_node);
  if (k == 1 || world <= G) return {k, k};  // one member, or the whole job on one node
  if (s >= G) return {k, 1};                // consecutive members are >= one node apart
  if (G % s != 0) return {k, 1};            // node boundaries cut the stride pattern unevenly: conservative
  // Members with the same offset inside the stride form a chain r0 + t*s; a node holds per = G/s consecutive
  // chain elements, a group k consecutive ones starting at a multiple of k. The pieces a group is cut into
  // are all min(k, per) when one divides the other; otherwise the smallest piece is gcd(k, per).
  const int per = G / s;
  if (per % k == 0 || k % per == 0) return {k, std::min(k, per)};
  int a = k, b = per;
  while (b != 0) {
    const int r = a % b;
    a = b;
    b = r;
  }
  return {k, a};
}

LayoutGroups group_placements(const ParallelLayout& p, int gpus_per_node) {
  enum Dim { Tp, Cp, Ep, Dp, Pp, kDims };
  constexpr std::string_view names[kDims] = {"tp", "cp", "ep", "dp", "pp"};
  const int world = static_cast<int>(p.world());  // a checked layout: at most limits::kMaxGpus
  const int dense[kDims] = {p.tp, p.cp, 1, p.dp, p.pp};
  const int expert[kDims] = {p.etp, 1, p.ep, p.expert_dp(), p.pp};

  // Parse the order (innermost first); dimensions it leaves out must have size 1 (Megatron's RankGenerator
  // appends them, and rejects an order that omits a dimension of size > 1).
  int order[kDims];
  int count = 0;
  bool seen[kDims] = {false, false, false, false, false};
  std::string_view rest = p.rank_order;
  while (!rest.empty()) {
    const size_t dash = rest.find('-');
    const std::string_view token = rest.substr(0, dash);
    rest = dash == std::string_view::npos ? std::string_view{} : rest.substr(dash + 1);
    int d = 0;
    while (d < kDims && names[d] != token) ++d;
    if (d == kDims || seen[d])
      throw InputError("/parallel/rank_order", p.rank_order, "a '-'-separated order of tp, cp, ep, dp, pp, each once",
                       "e.g. tp-cp-ep-dp-pp (Megatron-LM's default)");
    seen[d] = true;
    order[count++] = d;
  }
  for (int d = 0; d < kDims; ++d) {
    if (seen[d]) continue;
    if (dense[d] > 1 || expert[d] > 1)
      throw InputError("/parallel/rank_order", p.rank_order, std::string("an order naming ") + std::string(names[d]) +
                                                                  " (its degree is > 1)",
                       "use tp-cp-ep-dp-pp");
    order[count++] = d;
  }

  GroupPlacement dense_groups[kDims], expert_groups[kDims];
  int dense_stride = 1, expert_stride = 1;
  for (int i = 0; i < kDims; ++i) {
    const int d = order[i];
    dense_groups[d] = strided_group_placement(dense[d], dense_stride, world, gpus_per_node);
    expert_groups[d] = strided_group_placement(expert[d], expert_stride, world, gpus_per_node);
    dense_stride *= dense[d];
    expert_stride *= expert[d];
  }
  LayoutGroups out;
  out.tp = dense_groups[Tp];
  out.cp = dense_groups[Cp];
  out.dp = dense_groups[Dp];
  out.pp = dense_groups[Pp];
  out.ep = expert_groups[Ep];
  out.etp = expert_groups[Tp];
  out.edp = expert_groups[Dp];
  return out;
}

}  // namespace trainsim
