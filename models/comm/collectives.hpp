#pragma once
// Collective-communication cost model: the time of one NCCL collective (HCCL's on Ascend NPUs,
// collectives_hccl.cpp) on a group of GPUs placed on nodes, from the node fabric (NVLink / PCIe / mesh) and the
// network (NICs). Alpha-beta form
//   T = latency + bytes * factor / bandwidth
// with the ring factors of Thakur, Rabenseifner & Gropp 2005 (IJHPCA 19(1)) and nccl-tests'
// bus-bandwidth definitions (NVIDIA/nccl-tests doc/PERFORMANCE.md), latencies from NCCL's own tuning
// model (NVIDIA/nccl src/graph/tuning.cc), and the achievable fraction of each link from published
// nccl-tests numbers (../shared/reference/microbenchmarks.json), one row per fabric kind / NVLink
// generation. Pure functions; the hot path (collective_time on a CommModel) neither allocates nor throws.
#include <span>

#include "models/scenario/spec.hpp"

namespace trainsim {

class CollectiveFit;  // models/calibration/calibration.hpp

enum class Collective { AllReduce, AllGather, ReduceScatter, AllToAll, SendRecv };

// Algorithms NCCL chooses among ("auto" = the fastest applicable one, as NCCL's tuner does).
enum class CollectiveAlgorithm {
  Auto,
  Ring,          // all-reduce / all-gather / reduce-scatter; spans nodes
  Tree,          // all-reduce only: intra-node chain + inter-node double binary tree (NCCL 2.4+)
  Nvls,          // NVLink SHARP in-switch reduction/multicast; one node, fabric with has_nvls
  Hierarchical,  // all-reduce: intra-node reduce-scatter, inter-node all-reduce per local rank, intra-node all-gather
  Pairwise,      // all-to-all: n-1 pairwise exchanges (Thakur et al. 2005 §3.5)
  PointToPoint,  // send/recv
};

const char* to_string(Collective c);
const char* to_string(CollectiveAlgorithm a);

// A communication group of `size` ranks, `ranks_per_node` of which share a node
// (1 = every rank on a different node; size = all in one node).
struct GroupPlacement {
  int size = 1;
  int ranks_per_node = 1;
};

struct CollectiveCost {
  double time_s = 0;
  const char* algorithm = "none";  // static string: "ring", "tree", "nvls", "hierarchical", "pairwise", "p2p", "none";
                                   // HCCL also "mesh", "nhr", "pipeline"
  double bus_bandwidth = 0;        // bytes/s, nccl-tests definition: algbw * bus_bandwidth_factor
};

// nccl-tests doc/PERFORMANCE.md: busbw = algbw * factor; all-reduce 2(n-1)/n, all-gather and
// reduce-scatter (n-1)/n, all-to-all (n-1)/n, send/recv 1.
double bus_bandwidth_factor(Collective c, int n);

// Large-message efficiency of a fabric: what NCCL reaches, as a fraction of the preset's one-direction
// link bandwidth. Rows of the table in collectives.cpp, each traced to microbenchmarks.json.
struct FabricEfficiency {
  const char* name;  // "nvlink3", "nvlink4", ... (NVLink generation or fabric kind)
  double ring;       // ring bus bandwidth / link bandwidth (also all-gather, reduce-scatter, all-to-all, p2p)
  double nvls;       // NVLS all-reduce algorithm bandwidth / link bandwidth; 0 = no NVLS
  bool measured;     // false: no published row for this fabric, borrowed from the row `source` names
  const char* source;
};
std::span<const FabricEfficiency> fabric_efficiency_table();
// The row for a fabric: NVLink by generation (preset name nvlink3*/nvlink4*/nvlink5*; a custom NVLink
// fabric is NVLink4 when it has NVLS, else NVLink3), other fabrics by kind.
const FabricEfficiency& fabric_efficiency(const FabricSpec& fabric);

// A HardwareSpec resolved once into the numbers the cost model needs (bytes/s, seconds), so the layout
// search can price millions of collectives without string look-ups.
struct CommModel {
  int gpus_per_node = 8;
  int nics_per_node = 8;
  double intra_bandwidth = 0;       // achievable ring bandwidth per GPU, one direction: link * ring efficiency
  double intra_nvls_bandwidth = 0;  // achievable NVLS all-reduce algorithm bandwidth; 0 = no NVLS
  double intra_latency_s = 0;       // per ring step (preset `latency`: NCCL's LL hop; other protocols scale it)
  bool intra_nvlink = true;         // NVLink node fabric: NCCL's NVLink hop latencies and LL128 apply
  double ll_max_bus_bandwidth[3] = {141e9, 45e9, 35e9};  // NCCL's LL cap (bytes/s) on 1 / 2 / more nodes
  bool intra_mesh = false;          // full mesh (Infinity Fabric, HCCS): g ranks use (g-1)/(gpus_per_node-1) of it
  double nic_bandwidth = 0;         // achievable per NIC, one direction: line rate (nic_line_rate) * efficiency
  double gpu_link_bandwidth = 0;    // the GPU's PCIe link at the same efficiency: its share of the NICs' ceiling (0: not stated)
  double inter_latency_s = 0;       // per network hop (preset `latency`)
  bool hccl = false;                // Ascend: HCCL's algorithms (collectives_hccl.cpp) instead of NCCL's tuner
  const FabricEfficiency* intra_efficiency = nullptr;
  const FabricEfficiency* inter_efficiency = nullptr;
  // Calibration profile (make_comm_model(hardware, const CalibrationFit*) in calibration.hpp): measured
  // alpha-beta fits per op and scope, used for Auto-algorithm collectives they cover (rules in
  // calibration.hpp); nullptr = the default model only. Owned by the CalibrationFit.
  const CollectiveFit* calibration = nullptr;
};
CommModel make_comm_model(const HardwareSpec& hardware);

// Time of one collective. `bytes` is the per-rank buffer as nccl-tests counts it: all-reduce the full
// buffer, all-gather the gathered output, reduce-scatter the input, all-to-all the per-rank send buffer,
// send/recv the message. A forced algorithm that does not apply returns time_s = +infinity (forced algorithms
// are NCCL's, on any hardware). With model.calibration, a covered op reports algorithm "calibrated".
CollectiveCost collective_time(Collective op, double bytes, GroupPlacement group, const CommModel& model,
                               CollectiveAlgorithm algorithm = CollectiveAlgorithm::Auto) noexcept;
CollectiveCost collective_time(Collective op, double bytes, GroupPlacement group, const HardwareSpec& hardware,
                               CollectiveAlgorithm algorithm = CollectiveAlgorithm::Auto);

// Where the communication groups of a layout fall on nodes of `gpus_per_node` GPUs, for Megatron-core's
// rank orders (layout.rank_order, e.g. "tp-cp-ep-dp-pp": tp innermost). Dense groups come from the order
// with ep = 1; expert groups (ep, etp, edp) from the same order with tp -> etp, cp -> 1, dp -> expert dp
// (megatron/core/parallel_state.py, the decoder and expert RankGenerators).
struct LayoutGroups {
  GroupPlacement tp, cp, ep, dp, pp;
  GroupPlacement etp, edp;  // expert tensor parallel, expert data parallel (expert gradients)
};
LayoutGroups group_placements(const ParallelLayout& layout, int gpus_per_node);

// A group of `size` ranks r0, r0+stride, ..., in a job of `world` ranks filling nodes of `gpus_per_node`
// in rank order. ranks_per_node is the fewest members of any such group found on one node (conservative
// when groups straddle node boundaries unevenly).
GroupPlacement strided_group_placement(int size, int stride, int world, int gpus_per_node);

}  // namespace trainsim
