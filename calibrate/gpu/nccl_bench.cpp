#include "calibrate/gpu/nccl_bench.hpp"

#include <algorithm>
#include <cmath>

#include "calibrate/gpu/dynamic_libs.hpp"
#include "calibrate/gpu/results.hpp"

namespace trainsim::gpu {

namespace {
constexpr std::size_t kElement = 2;  // bf16
}  // namespace

void throw_nccl_error(ncclResult_t status, const char* call, const char* file, int line) {
  static_cast<void>(cudaGetLastError());
  throw GpuError(std::string("NCCL error: ") + nccl().get_error_string(status) + " in " + call + " at " + source_location(file, line) +
                 " (NCCL_DEBUG=WARN prints NCCL's own reason)");
}

std::string nccl_version() {
  int v = 0;
  try {
    if (nccl().get_version(&v) != ncclSuccess) return "unknown";
  } catch (const GpuError&) {
    return "not loaded";
  }
  // NCCL_VERSION(X,Y,Z): X*10000 + Y*100 + Z since 2.9 (X*1000 + Y*100 + Z before).
  const int major = v >= 10000 ? v / 10000 : v / 1000;
  const int minor = v >= 10000 ? (v / 100) % 100 : (v / 100) % 10;
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(v % 100);
}

NcclGroup::NcclGroup(const std::vector<int>& devices) : nranks_(static_cast<int>(devices.size())), devices_(devices) {
  if (devices.size() < 2) throw GpuError("an NCCL group needs at least 2 GPUs");
  comms_.assign(devices.size(), nullptr);
  TRAINSIM_NCCL_CHECK(nccl().comm_init_all(comms_.data(), nranks_, devices_.data()));
  try {
    init_streams();
  } catch (...) {
    for (ncclComm_t c : comms_)
      if (c) static_cast<void>(nccl().comm_destroy(c));
    comms_.clear();
    throw;
  }
}

NcclGroup::NcclGroup(int device, int nranks, int rank, const ncclUniqueId& id)
    : nranks_(nranks), rank_(rank), multi_process_(true), devices_{device} {
  if (nranks < 2 || rank < 0 || rank >= nranks) throw GpuError("NCCL rank " + std::to_string(rank) + " of " + std::to_string(nranks) + ": not a group");
  DeviceGuard g(device);
  comms_.assign(1, nullptr);
  TRAINSIM_NCCL_CHECK(nccl().comm_init_rank(&comms_[0], nranks, id, rank));
  try {
    init_streams();
    scratch_ = DeviceBuffer(sizeof(double));
  } catch (...) {
    static_cast<void>(nccl().comm_destroy(comms_[0]));
    comms_.clear();
    throw;
  }
}

void NcclGroup::init_streams() {
  std::vector<cudaStream_t> raw;
  for (int d : devices_) {
    DeviceGuard g(d);
    streams_.push_back(std::make_unique<Stream>());
    raw.push_back(streams_.back()->get());
  }
  timer_ = std::make_unique<EventTimer>(devices_, raw);
}

NcclGroup::~NcclGroup() {
  timer_.reset();
  for (std::size_t i = 0; i < comms_.size(); ++i) {
    if (!comms_[i]) continue;
    int current = -1;
    const bool switched = cudaGetDevice(&current) == cudaSuccess && current != devices_[i] && cudaSetDevice(devices_[i]) == cudaSuccess;
    if (failed_) static_cast<void>(nccl().comm_abort(comms_[i]));
    else if (nccl().comm_destroy(comms_[i]) != ncclSuccess) static_cast<void>(cudaGetLastError());
    if (switched) static_cast<void>(cudaSetDevice(current));
  }
}

void NcclGroup::reserve(double max_bytes) {
  if (max_bytes <= reserved_) return;
  const auto bytes = static_cast<std::size_t>(std::ceil(max_bytes / kElement)) * kElement;
  send_.clear();
  recv_.clear();
  reserved_ = 0;
  for (std::size_t i = 0; i < devices_.size(); ++i) {
    DeviceGuard g(devices_[i]);
    require_free_memory(2.0 * static_cast<double>(bytes), "NCCL buffers for " + std::to_string(bytes) + "-byte messages");
    send_.emplace_back(bytes);
    recv_.emplace_back(bytes);
    fill_random(send_.back().get(), bytes, ElementType::Bf16, 11u + static_cast<std::uint64_t>(rank_) + i, streams_[i]->get());
    fill_poison(recv_.back().get(), bytes, streams_[i]->get());
    streams_[i]->synchronize();
  }
  reserved_ = static_cast<double>(bytes);
}

double NcclGroup::bytes_used(Collective op, double bytes) const {
  const CollectiveCounts c = collective_counts(op, bytes, nranks_, kElement);
  return c.send_count > 0 && c.recv_count > 0 ? c.bytes_used : 0;
}

void NcclGroup::launch(Collective op, double bytes) {
  const CollectiveCounts c = collective_counts(op, bytes, nranks_, kElement);
  if (c.send_count == 0 || c.recv_count == 0)
    throw GpuError(std::string(to_string(op)) + " of " + std::to_string(static_cast<long long>(bytes)) + " bytes holds less than one element per rank of " +
                   std::to_string(nranks_));
  if (static_cast<double>(std::max(c.send_count, c.recv_count) * kElement) > reserved_)
    throw GpuError(std::string(to_string(op)) + ": message larger than the reserved NCCL buffers");
  ncclResult_t first = ncclSuccess;
  const char* first_call = "";
  auto note = [&](ncclResult_t r, const char* call) {
    if (r != ncclSuccess && first == ncclSuccess) first = r, first_call = call;
  };
  note(nccl().group_start(), "ncclGroupStart");
  for (std::size_t i = 0; i < comms_.size(); ++i) {
    const int rank = multi_process_ ? rank_ : static_cast<int>(i);
    void* send = send_[i].get();
    void* recv = recv_[i].get();
    ncclComm_t comm = comms_[i];
    cudaStream_t s = streams_[i]->get();
    switch (op) {
      case Collective::AllReduce: note(nccl().all_reduce(send, recv, c.send_count, ncclBfloat16, ncclSum, comm, s), "ncclAllReduce"); break;
      case Collective::AllGather: note(nccl().all_gather(send, recv, c.send_count, ncclBfloat16, comm, s), "ncclAllGather"); break;
      case Collective::ReduceScatter:
        note(nccl().reduce_scatter(send, recv, c.recv_count, ncclBfloat16, ncclSum, comm, s), "ncclReduceScatter");
        break;
      case Collective::AllToAll:
        for (int peer = 0; peer < nranks_; ++peer) {
          const std::size_t offset = static_cast<std::size_t>(peer) * c.per_peer * kElement;
          note(nccl().send(send_[i].bytes() + offset, c.per_peer, ncclBfloat16, peer, comm, s), "ncclSend");
          note(nccl().recv(recv_[i].bytes() + offset, c.per_peer, ncclBfloat16, peer, comm, s), "ncclRecv");
        }
        break;
      case Collective::SendRecv:
        note(nccl().send(send, c.send_count, ncclBfloat16, (rank + 1) % nranks_, comm, s), "ncclSend");
        note(nccl().recv(recv, c.recv_count, ncclBfloat16, (rank + nranks_ - 1) % nranks_, comm, s), "ncclRecv");
        break;
    }
  }
  const ncclResult_t end = nccl().group_end();  // always closes the group, even after a failed call inside it
  note(end, "ncclGroupEnd");
  if (first != ncclSuccess) {
    failed_ = true;
    throw_nccl_error(first, first_call, __FILE__, __LINE__);
  }
}

std::vector<unsigned char> NcclGroup::download_recv(int local_rank, std::size_t bytes) const {
  const auto i = static_cast<std::size_t>(local_rank);
  bytes = std::min(bytes, recv_.at(i).size());
  std::vector<unsigned char> out(bytes);
  DeviceGuard g(devices_.at(i));
  streams_.at(i)->synchronize();
  TRAINSIM_CUDA_CHECK(cudaMemcpy(out.data(), recv_[i].get(), bytes, cudaMemcpyDeviceToHost));
  return out;
}

void NcclGroup::upload_send(int local_rank, const std::vector<unsigned char>& bytes) {
  const auto i = static_cast<std::size_t>(local_rank);
  if (bytes.size() > send_.at(i).size()) throw GpuError("upload_send: more bytes than the send buffer holds");
  DeviceGuard g(devices_.at(i));
  TRAINSIM_CUDA_CHECK(cudaMemcpy(send_[i].get(), bytes.data(), bytes.size(), cudaMemcpyHostToDevice));
}

double NcclGroup::max_over_ranks(double v) {
  if (!multi_process_) return v;
  DeviceGuard g(devices_[0]);
  cudaStream_t s = streams_[0]->get();
  TRAINSIM_CUDA_CHECK(cudaMemcpyAsync(scratch_.get(), &v, sizeof v, cudaMemcpyHostToDevice, s));
  const ncclResult_t r = nccl().all_reduce(scratch_.get(), scratch_.get(), 1, ncclFloat64, ncclMax, comms_[0], s);
  if (r != ncclSuccess) {
    failed_ = true;
    throw_nccl_error(r, "ncclAllReduce (max over ranks)", __FILE__, __LINE__);
  }
  double out = 0;
  TRAINSIM_CUDA_CHECK(cudaMemcpyAsync(&out, scratch_.get(), sizeof out, cudaMemcpyDeviceToHost, s));
  TRAINSIM_CUDA_CHECK(cudaStreamSynchronize(s));
  return out;
}

void NcclGroup::check_async() {
  for (ncclComm_t c : comms_) {
    ncclResult_t r = ncclSuccess;
    TRAINSIM_NCCL_CHECK(nccl().comm_get_async_error(c, &r));
    if (r != ncclSuccess) {
      failed_ = true;
      throw_nccl_error(r, "ncclCommGetAsyncError", __FILE__, __LINE__);
    }
  }
}

}  // namespace trainsim::gpu
