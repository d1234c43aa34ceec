#pragma once
// NCCL collectives for the calibration sweep and the proxy run's tensor-parallel collectives, as nccl-tests
// runs them: out of place, bf16 elements (sum for the reductions), the message size counted as nccl-tests'
// "size" column (results.hpp collective_counts); all-to-all as grouped send/recv to every peer, send/recv as a
// ring (each rank sends to the next and receives from the previous one).
//
// Two ways to form a group:
//   - one process drives several local GPUs: ncclCommInitAll, one communicator and stream per device; every
//     collective is issued for all of them inside one ncclGroupStart/End;
//   - one rank per process (a launcher such as torchrun or mpirun started the processes, launcher.hpp):
//     ncclCommInitRank with the unique id rank 0 handed out.
// A sample's time is the slowest local rank's (events on every stream), and across processes the largest over
// all ranks (an NCCL all-reduce max of the time), as nccl-tests reports the slowest rank.
#include <nccl.h>

#include <memory>
#include <string>
#include <vector>

#include "calibrate/gpu/cuda_util.hpp"
#include "models/comm/collectives.hpp"

namespace trainsim::gpu {

[[noreturn]] void throw_nccl_error(ncclResult_t status, const char* call, const char* file, int line);
inline void check_nccl(ncclResult_t status, const char* call, const char* file, int line) {
  if (status != ncclSuccess) throw_nccl_error(status, call, file, line);
}
#define TRAINSIM_NCCL_CHECK(call) ::trainsim::gpu::check_nccl((call), #call, __FILE__, __LINE__)

std::string nccl_version();  // of the library loaded, "2.28.9"

class NcclGroup {
 public:
  // One process, every rank local: devices[i] is rank i.
  explicit NcclGroup(const std::vector<int>& devices);
  // One rank of a group spread over processes, on `device`.
  NcclGroup(int device, int nranks, int rank, const ncclUniqueId& id);
  ~NcclGroup();
  NcclGroup(const NcclGroup&) = delete;
  NcclGroup& operator=(const NcclGroup&) = delete;

  int ranks() const { return nranks_; }
  int local_ranks() const { return static_cast<int>(comms_.size()); }
  bool multi_process() const { return multi_process_; }
  const std::vector<int>& devices() const { return devices_; }

  // Send and receive buffers of `max_bytes` on every local device (send: random bf16). Throws GpuError when
  // they do not fit in free memory.
  void reserve(double max_bytes);
  double reserved_bytes() const { return reserved_; }
  // The bytes a message of `bytes` moves once rounded to whole elements per rank (0: too small for the group).
  double bytes_used(Collective op, double bytes) const;
  // Enqueues one collective of `bytes` (nccl-tests' size) on every local rank.
  void launch(Collective op, double bytes);
  // The receive buffer of local rank i, as host bytes (tests).
  std::vector<unsigned char> download_recv(int local_rank, std::size_t bytes) const;
  // Copies host bytes into the send buffer of local rank i (tests).
  void upload_send(int local_rank, const std::vector<unsigned char>& bytes);

  EventTimer& timer() { return *timer_; }
  // The largest of `v` over every rank of the group (one process: v itself).
  double max_over_ranks(double v);
  // Throws when a communicator reports an asynchronous error.
  void check_async();

 private:
  void init_streams();
  int nranks_ = 0, rank_ = 0;  // rank_: the first local rank's
  bool multi_process_ = false, failed_ = false;
  std::vector<int> devices_;
  std::vector<ncclComm_t> comms_;
  std::vector<std::unique_ptr<Stream>> streams_;
  std::vector<DeviceBuffer> send_, recv_;
  double reserved_ = 0;
  std::unique_ptr<EventTimer> timer_;
  DeviceBuffer scratch_;  // one double for max_over_ranks
};

}  // namespace trainsim::gpu
