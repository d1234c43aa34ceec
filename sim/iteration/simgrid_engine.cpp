#include "sim/iteration/simgrid_engine.hpp"

#include <simgrid/s4u.hpp>

namespace trainsim::sim {

simgrid::s4u::Engine& simgrid_engine() {
  static simgrid::s4u::Engine* engine = [] {
    int argc = 2;
    static char name[] = "trainsim", quiet[] = "--log=root.thres:warning";
    static char* argv[] = {name, quiet, nullptr};
    auto* e = new simgrid::s4u::Engine(&argc, argv);
    e->set_config("network/model:CM02");
    e->set_config("network/crosstraffic:0");
    e->set_config("network/TCP-gamma:0");
    e->set_config("network/latency-factor:1");
    // The bandwidth factor comes from the fabric's callback (sim/iteration/fabric.hpp): no configured one.
    return e;
  }();
  return *engine;
}

}  // namespace trainsim::sim
