#pragma once
// What the collective models of each library share (internal to models/comm/collectives*.cpp): the shape of a group
// on nodes, and the bandwidth one rank can use inside its node and through its NICs.
#include "models/comm/collectives.hpp"

namespace trainsim::collective_detail {

struct Shape {
  int n;      // ranks
  int g;      // ranks per node
  int nodes;  // nodes the group spans
};

int floor_log2(int x);
int ceil_log2(int x);

// Achievable node-link bandwidth for a rank talking to g-1 peers of its node. On a switch (NVSwitch, PCIe
// switch) the full per-GPU link; on a full mesh only the links to the g-1 peers (fabrics.json, MI300X:
// one peer pair gets 1/7 of the aggregate).
double intra_bw(const CommModel& m, int g);
// NIC bandwidth per rank when every rank of a node runs its group's collective at once (nics / gpus of it).
double nic_share(const CommModel& m);
// All-to-all and send/recv do not aggregate several NICs per GPU ([MB] nccl_caveats, nccl-tests #267).
double nic_single(const CommModel& m);

// HCCL's collectives on Ascend (collectives_hccl.cpp): the time of the fastest algorithm HCCL offers for the
// op on this shape, its name in `name`.
double hccl_time(Collective op, double bytes, Shape s, const CommModel& m, const char** name);

}  // namespace trainsim::collective_detail
