#pragma once
// Ranks given by a launcher, for collectives across nodes (one process per GPU): torchrun / torch.distributed
// (RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE), Open MPI's mpirun (OMPI_COMM_WORLD_*), and MPICH / Intel MPI /
// Slurm's srun --mpi=pmi2 (PMI_RANK, PMI_SIZE, MPI_LOCALRANKID, MPI_LOCALNRANKS). Plain Slurm variables are not
// read: a batch script sees its allocation's task count without being one of the tasks.
//
// The NCCL unique id goes from rank 0 to the others over one TCP connection each: rank 0 listens on
// host:port, the others connect (retrying until rank 0 is up) and read it. POSIX sockets; no CUDA here.
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

namespace trainsim::gpu {

struct LauncherRanks {
  bool present = false;        // a launcher set the variables and world > 1
  int rank = 0, world = 1;
  int local_rank = 0, local_world = 1;  // on this node
  std::string source;          // "torchrun (RANK, WORLD_SIZE, ...)", "Open MPI (OMPI_COMM_WORLD_*)", ...
  int nodes() const { return local_world > 0 ? world / local_world : 1; }
};
// `env` looks a variable up (default: std::getenv). Inconsistent values (rank >= world, world not a multiple
// of the ranks per node) give present = false with `source` saying why.
LauncherRanks launcher_ranks(const std::function<const char*(const char*)>& env = [](const char* n) { return std::getenv(n); });

struct HostPort {
  std::string host;
  int port = 0;
};
// "host:port" as given, else MASTER_ADDR and MASTER_PORT + 1 (torchrun's agent already listens on MASTER_PORT);
// throws std::invalid_argument naming what is missing.
HostPort rendezvous_address(const std::string& given, const std::function<const char*(const char*)>& env = [](const char* n) {
  return std::getenv(n);
});

// Rank 0 sends `data` to every other rank; each rank returns what rank 0 sent. Throws std::runtime_error with
// a clear message (which rank, which address, what failed) on error or after `timeout_s`.
std::vector<unsigned char> broadcast_over_tcp(const LauncherRanks& ranks, const HostPort& at, const std::vector<unsigned char>& data,
                                              double timeout_s = 300);

}  // namespace trainsim::gpu
