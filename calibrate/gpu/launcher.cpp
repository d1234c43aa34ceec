#include "calibrate/gpu/launcher.hpp"

#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <thread>

namespace trainsim::gpu {

namespace {

using Clock = std::chrono::steady_clock;

bool read_int(const std::function<const char*(const char*)>& env, const char* name, int* out) {
  const char* v = env(name);
  if (!v || !*v) return false;
  char* end = nullptr;
  errno = 0;
  const long x = std::strtol(v, &end, 10);
  if (errno != 0 || end == v || *end != '\0' || x < 0 || x > 1000000) return false;
  *out = static_cast<int>(x);
  return true;
}

class Socket {
 public:
  explicit Socket(int fd = -1) : fd_(fd) {}
  ~Socket() {
    if (fd_ >= 0) ::close(fd_);
  }
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;
  Socket(Socket&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
  Socket& operator=(Socket&& o) noexcept {
    if (this != &o) {
      if (fd_ >= 0) ::close(fd_);
      fd_ = o.fd_;
      o.fd_ = -1;
    }
    return *this;
  }
  int fd() const { return fd_; }

 private:
  int fd_;
};

int remaining_ms(Clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return left <= 0 ? 0 : static_cast<int>(std::min<long long>(left, 1000000));
}

void wait_ready(int fd, short events, Clock::time_point deadline, const std::string& what) {
  for (;;) {
    pollfd p{fd, events, 0};
    const int r = ::poll(&p, 1, remaining_ms(deadline));
    if (r > 0) return;
    if (r == 0) throw std::runtime_error(what + ": timed out");
    if (errno != EINTR) throw std::runtime_error(what + ": " + std::strerror(errno));
  }
}

void send_all(int fd, const unsigned char* p, std::size_t n, Clock::time_point deadline, const std::string& what) {
  while (n > 0) {
    wait_ready(fd, POLLOUT, deadline, what);
    const ssize_t k = ::send(fd, p, n, MSG_NOSIGNAL);
    if (k < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      throw std::runtime_error(what + ": " + std::strerror(errno));
    }
    p += k;
    n -= static_cast<std::size_t>(k);
  }
}

void recv_all(int fd, unsigned char* p, std::size_t n, Clock::time_point deadline, const std::string& what) {
  while (n > 0) {
    wait_ready(fd, POLLIN, deadline, what);
    const ssize_t k = ::recv(fd, p, n, 0);
    if (k == 0) throw std::runtime_error(what + ": connection closed by rank 0");
    if (k < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      throw std::runtime_error(what + ": " + std::strerror(errno));
    }
    p += k;
    n -= static_cast<std::size_t>(k);
  }
}

}  // namespace

LauncherRanks launcher_ranks(const std::function<const char*(const char*)>& env) {
  struct Scheme {
    const char *source, *rank, *world, *local_rank, *local_world;
  };
  const Scheme schemes[] = {
      {"torchrun (RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE)", "RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE"},
      {"Open MPI (OMPI_COMM_WORLD_RANK, _SIZE, _LOCAL_RANK, _LOCAL_SIZE)", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE",
       "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE"},
      {"PMI (PMI_RANK, PMI_SIZE, MPI_LOCALRANKID, MPI_LOCALNRANKS)", "PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID", "MPI_LOCALNRANKS"},
  };
  LauncherRanks r;
  for (const Scheme& s : schemes) {
    int rank = 0, world = 0;
    if (!read_int(env, s.rank, &rank) || !read_int(env, s.world, &world)) continue;
    r.source = s.source;
    r.rank = rank;
    r.world = world;
    int local_rank = rank, local_world = world;
    if (!read_int(env, s.local_rank, &local_rank)) local_rank = rank;
    if (!read_int(env, s.local_world, &local_world)) local_world = world;
    r.local_rank = local_rank;
    r.local_world = local_world;
    if (world < 2) {
      r.source += ": a single rank";
      return r;
    }
    if (rank >= world || local_world < 1 || local_rank >= local_world || world % local_world != 0) {
      r.source += ": inconsistent values (rank " + std::to_string(rank) + " of " + std::to_string(world) + ", local " +
                  std::to_string(local_rank) + " of " + std::to_string(local_world) + ")";
      return r;
    }
    r.present = true;
    return r;
  }
  return r;
}

HostPort rendezvous_address(const std::string& given, const std::function<const char*(const char*)>& env) {
  HostPort hp;
  if (!given.empty()) {
    const std::size_t colon = given.rfind(':');
    if (colon == std::string::npos || colon == 0 || colon + 1 >= given.size())
      throw std::invalid_argument("--rendezvous: got \"" + given + "\"; expected HOST:PORT");
    hp.host = given.substr(0, colon);
    if (hp.host.size() > 2 && hp.host.front() == '[' && hp.host.back() == ']') hp.host = hp.host.substr(1, hp.host.size() - 2);
    int port = 0;
    if (!read_int([&](const char*) { return given.c_str() + colon + 1; }, "port", &port) || port < 1 || port > 65535)
      throw std::invalid_argument("--rendezvous: got \"" + given + "\"; expected a port between 1 and 65535 after the colon");
    hp.port = port;
    return hp;
  }
  const char* addr = env("MASTER_ADDR");
  int port = 0;
  if (!addr || !*addr || !read_int(env, "MASTER_PORT", &port) || port < 1 || port >= 65535)
    throw std::invalid_argument(
        "ranks from a launcher but no rendezvous address: pass --rendezvous HOST:PORT (rank 0's host and a free port), or set "
        "MASTER_ADDR and MASTER_PORT (port + 1 is used)");
  hp.host = addr;
  hp.port = port + 1;
  return hp;
}

std::vector<unsigned char> broadcast_over_tcp(const LauncherRanks& ranks, const HostPort& at, const std::vector<unsigned char>& data,
                                              double timeout_s) {
  const auto deadline = Clock::now() + std::chrono::milliseconds(static_cast<long long>(timeout_s * 1000));
  const std::string port = std::to_string(at.port);
  const std::string where = at.host + ":" + port;
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;

  if (ranks.rank == 0) {
    hints.ai_flags = AI_PASSIVE;
    addrinfo* res = nullptr;
    if (const int e = ::getaddrinfo(nullptr, port.c_str(), &hints, &res); e != 0)
      throw std::runtime_error("rank 0: cannot listen on port " + port + ": " + ::gai_strerror(e));
    Socket listener;
    std::string why = "no address";
    // IPv6 first where available: on Linux it also accepts IPv4 connections.
    for (int pass = 0; pass < 2 && listener.fd() < 0; ++pass) {
      for (addrinfo* a = res; a; a = a->ai_next) {
        if ((pass == 0) != (a->ai_family == AF_INET6)) continue;
        Socket s(::socket(a->ai_family, a->ai_socktype, a->ai_protocol));
        if (s.fd() < 0) continue;
        const int one = 1;
        static_cast<void>(::setsockopt(s.fd(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one));
        if (::bind(s.fd(), a->ai_addr, a->ai_addrlen) == 0 && ::listen(s.fd(), ranks.world) == 0) {
          listener = std::move(s);
          break;
        }
        why = std::strerror(errno);
      }
    }
    ::freeaddrinfo(res);
    if (listener.fd() < 0) throw std::runtime_error("rank 0: cannot listen on port " + port + ": " + why);
    const auto n = static_cast<std::uint32_t>(data.size());
    const unsigned char header[4] = {static_cast<unsigned char>(n), static_cast<unsigned char>(n >> 8), static_cast<unsigned char>(n >> 16),
                                     static_cast<unsigned char>(n >> 24)};
    for (int served = 1; served < ranks.world; ++served) {
      const std::string what = "rank 0 waiting on port " + port + " for rank connections (" + std::to_string(served - 1) + " of " +
                               std::to_string(ranks.world - 1) + " arrived)";
      wait_ready(listener.fd(), POLLIN, deadline, what);
      Socket peer(::accept(listener.fd(), nullptr, nullptr));
      if (peer.fd() < 0) throw std::runtime_error(what + ": " + std::strerror(errno));
      send_all(peer.fd(), header, sizeof header, deadline, what);
      send_all(peer.fd(), data.data(), data.size(), deadline, what);
    }
    return data;
  }

  const std::string what = "rank " + std::to_string(ranks.rank) + " connecting to rank 0 at " + where;
  std::string why = "not tried";
  for (;;) {
    addrinfo* res = nullptr;
    const int e = ::getaddrinfo(at.host.c_str(), port.c_str(), &hints, &res);
    if (e == 0) {
      for (addrinfo* a = res; a; a = a->ai_next) {
        Socket s(::socket(a->ai_family, a->ai_socktype, a->ai_protocol));
        if (s.fd() < 0) continue;
        if (::connect(s.fd(), a->ai_addr, a->ai_addrlen) != 0) {
          why = std::strerror(errno);
          continue;
        }
        ::freeaddrinfo(res);
        unsigned char header[4] = {0, 0, 0, 0};
        recv_all(s.fd(), header, sizeof header, deadline, what);
        const std::uint32_t n = static_cast<std::uint32_t>(header[0]) | static_cast<std::uint32_t>(header[1]) << 8 |
                                static_cast<std::uint32_t>(header[2]) << 16 | static_cast<std::uint32_t>(header[3]) << 24;
        if (n > (1u << 20)) throw std::runtime_error(what + ": unexpected message of " + std::to_string(n) + " bytes");
        std::vector<unsigned char> out(n);
        recv_all(s.fd(), out.data(), out.size(), deadline, what);
        return out;
      }
      ::freeaddrinfo(res);
    } else {
      why = ::gai_strerror(e);
    }
    if (remaining_ms(deadline) == 0) throw std::runtime_error(what + ": " + why + " (is rank 0 running, and the port open?)");
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
}

}  // namespace trainsim::gpu
