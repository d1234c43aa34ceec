#pragma once
// The process's SimGrid engine, made once with trainsim's network settings: CM02 max-min sharing, no cross
// traffic (acknowledgements), TCP window gamma, latency or bandwidth factors, so a lone flow of S bytes on a
// route of bottleneck bandwidth B takes exactly S / B (the Fabric's links have zero latency; the analytic
// latency is inside the seconds each flow is sized to). SimGrid allows one engine per process: a second call
// returns the same engine, and one simulation runs per process.
namespace simgrid::s4u {
class Engine;
}

namespace trainsim::sim {

simgrid::s4u::Engine& simgrid_engine();

}  // namespace trainsim::sim
