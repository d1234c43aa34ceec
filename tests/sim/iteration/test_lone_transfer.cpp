// SimGrid (one engine per process, so this binary holds one test): a lone transfer on the job's fabric carries
// its real bytes and, through the bandwidth-factor callback, takes exactly the analytic alpha-beta time it was
// given, latency included, whatever its bytes and route.
#include <doctest/doctest.h>
#include <simgrid/s4u.hpp>

#include "models/comm/collectives.hpp"
#include "models/scenario/scenario.hpp"
#include "sim/iteration/fabric.hpp"
#include "sim/iteration/simgrid_engine.hpp"
#include "tests/approx.hpp"

using namespace trainsim;
namespace sg4 = simgrid::s4u;

TEST_CASE("a lone transfer reproduces the alpha-beta time it was sized to") {
  sg4::Engine& engine = sim::simgrid_engine();
  // Two DGX H100 nodes (8 GPUs, 8 NDR 400 Gb/s NICs each) on one leaf switch.
  const Scenario s = parse_scenario({{"model", "llama3-8b"},
                                     {"training", {{"seq_len", 4096}, {"global_batch_size", 16}}},
                                     {"hardware", {{"gpu", "h100-sxm-80gb"}, {"gpus_per_node", 8}, {"num_nodes", 2}}}});
  sim::Fabric fabric(s.hardware, make_comm_model(s.hardware), 16);
  // The analytic time of some transfer: alpha + bytes / beta, here 2 ms (any value: the flow is sized to it).
  const double analytic_s = 2e-3;
  struct Case {
    int from, to;
    double elapsed = -1;
  };
  // NVLink inside a node; NIC to NIC across the leaf. Bytes far below and above what the route moves in 2 ms
  // (a latency-bound call, an efficiency above the bottleneck link's) must both give 2 ms.
  Case cases[] = {{0, 1}, {0, 8}, {3, 12}};
  const double bytes[] = {4096, 1e9, 123456789};
  // NVLink port vs NIC: the routes differ in bandwidth by more than 2x, so a wrongly sized flow would show.
  CHECK(fabric.nominal_bandwidth(0, 1) > 2 * fabric.nominal_bandwidth(0, 8));
  sg4::Actor::create("sender", fabric.gpu(0), [&] {
    for (std::size_t i = 0; i < std::size(cases); ++i) {
      Case& c = cases[i];
      const double start = sg4::Engine::get_clock();
      fabric.transfer(fabric.gpu(c.from), fabric.gpu(c.to), bytes[i], analytic_s)->wait();
      c.elapsed = sg4::Engine::get_clock() - start;
    }
  });
  engine.run();
  for (const Case& c : cases) {
    INFO("GPU " << c.from << " -> " << c.to);
    CHECK(c.elapsed == trainsim::test::approx(analytic_s).epsilon(1e-6));  // to a byte of rounding
  }
}
