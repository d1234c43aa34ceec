#pragma once
// Calibration profile: what was measured on (or published for) one GPU type and its fabrics, and the
// fitted forms the compute and communication models use in place of their published defaults.
//
//   CalibrationProfile   the versioned JSON document (calibrate/profiles/*.json, `trainsim calibrate import`)
//   GemmEfficiencyFit    measured GEMM ceilings of one dtype, interpolated over log(m), log(n), log(k)
//   fit_alpha_beta       time = alpha + bytes * factor / beta, least squares over one measured curve
//   CollectiveFit        the alpha-beta fits of every measured (op, scope, group size)
//   CalibrationFit       all of the above resolved for one HardwareSpec, with the list of what fell back
//
// Pure: parsing takes an already-read JSON tree (the CLI reads files); the fits neither allocate nor
// throw on their query paths (GemmEfficiencyFit::ceiling, CollectiveFit::nearest), which the layout
// search calls millions of times.
#include <array>
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "models/comm/collectives.hpp"
#include "models/compute/compute.hpp"
#include "models/scenario/spec.hpp"

namespace trainsim {

constexpr int kCalibrationFormatVersion = 1;
inline constexpr const char* kCalibrationFormatName = "trainsim-calibration-profile";

enum class CommScope { Intra, Inter };  // one node (NVLink / PCIe) or across nodes (NICs)
const char* to_string(CommScope s);     // "intra", "inter"

// GEMM dtypes a profile may hold. tf32 is what fp32 training runs its GEMMs in.
enum class GemmDtype { Bf16, Fp16, Fp8, Tf32 };
constexpr int kGemmDtypes = 4;
const char* to_string(GemmDtype d);       // "bf16", "fp16", "fp8", "tf32"
GemmDtype gemm_dtype(Precision p);        // Fp32 -> Tf32
Precision precision_of(GemmDtype d);      // Tf32 -> Fp32

struct GpuIdentity {
  std::string name;            // as the driver reports it, e.g. "NVIDIA H100 80GB HBM3"
  std::string preset;          // trainsim GPU preset the profile is for ("h100-sxm-80gb"); empty = not tied to one
  int sms = 0;                 // 0 = not recorded
  double sm_clock_mhz = 0, memory_clock_mhz = 0;
  std::string driver_version, cuda_version;
};

struct Provenance {
  std::string source = "measured";  // "measured" | "derived-from-publications"
  std::string who, when, command, notes;
};

struct GemmPoint {
  GemmDtype dtype = GemmDtype::Bf16;
  double m = 0, n = 0, k = 0;
  double tflops = 0;           // achieved, 1e12 FLOP/s (2·m·n·k / time)
  std::string source;
};

struct CollectivePoint {
  double bytes = 0;            // per-rank buffer as nccl-tests counts it ("size" column)
  double busbw = 0;            // bytes/s, nccl-tests bus bandwidth
  double time_s = 0;           // seconds (out-of-place); busbw = bytes * factor / time
};

struct CollectiveCurve {
  Collective op = Collective::AllReduce;
  CommScope scope = CommScope::Intra;
  int group_size = 0;          // ranks
  int ranks_per_node = 0;      // intra: = group_size
  std::string fabric;          // fabric preset it was measured on ("nvlink4-nvswitch", "ib-ndr-400"); empty = any
  std::string source;
  std::vector<CollectivePoint> points;
};

struct CalibrationProfile {
  int version = kCalibrationFormatVersion;
  GpuIdentity gpu;
  Provenance provenance;
  std::vector<GemmPoint> gemm;
  double hbm_bandwidth = 0;    // bytes/s achieved by a device-to-device copy (read + write); 0 = not measured
  std::string hbm_source;
  std::vector<CollectiveCurve> collectives;
  // The step model's fitted parameters (fitted_parameters.hpp) as a short run of the user's own determined them
  // (`trainsim calibrate from-log`): key and value, each within its physical range; they replace the shipped values
  // for every scenario priced with this profile. Empty: the shipped values.
  std::vector<std::pair<std::string, double>> fitted_parameters;
  std::string fitted_parameters_source;  // which logs and plans, what was fitted
};

// From / to the JSON format (calibrate/README.md). Errors are InputErrors naming `path` + the JSON pointer
// of the offending value, e.g. "h100.json#/collectives/0/points/3/busbw".
CalibrationProfile parse_calibration_profile(const nlohmann::json& doc, const std::string& path = "");
nlohmann::json to_json(const CalibrationProfile& p);
// Parses "all-reduce" (also "all_reduce", "allreduce") etc.; false when unknown.
bool parse_collective_name(const std::string& text, Collective* out);

// ---- GEMM ------------------------------------------------------------------------------------------

// Measured GEMM ceilings of one dtype on one GPU. Each measured point i becomes a ceiling
//   c_i = (measured TFLOP/s / dense peak) / quantization(shape_i)
// i.e. the measurement with the tile/wave quantization of its own shape divided out, so that the compute
// model, which multiplies the ceiling by the quantization of the shape it prices, returns the measured
// time at a measured shape. A query shape gets the inverse-distance-weighted mean of the c_i over the
// points' distance in (log2 m, log2 n, log2 k) space with weights 1/d^4 (Shepard interpolation, power 4):
// exact at a measured shape, continuous, never outside the measured range of ceilings (no overshoot, unlike
// a fitted polynomial), and the nearest measured shapes dominate; far from every point it tends to the mean
// of the measured ceilings. Points at the same shape are averaged first. Why IDW rather than piecewise-linear
// interpolation on a grid: user tables are scattered shapes, not grids, and may hold a single point.
class GemmEfficiencyFit {
 public:
  GemmEfficiencyFit() = default;
  // `efficiencies[i]` = achieved / dense peak at shapes[i]; `quantization[i]` = the model's quantization there.
  GemmEfficiencyFit(const std::vector<GemmShape>& shapes, const std::vector<double>& efficiencies,
                    const std::vector<double>& quantization);
  bool empty() const { return values_.empty(); }
  std::size_t size() const { return values_.size(); }
  // Ceiling (fraction of the dense peak before quantization) at this shape. Allocation-free; O(points), with a
  // small per-thread memo of recent shapes for fits of more than a few points (the layout search asks for the
  // same shapes over and over).
  double ceiling(double m, double n, double k) const noexcept;
  double min_ceiling() const { return min_; }
  double max_ceiling() const { return max_; }

 private:
  std::vector<double> lm_, ln_, lk_;  // log2 m, log2 n, log2 k of each point (one array each: the loop vectorizes)
  std::vector<double> values_;        // c_i
  double min_ = 0, max_ = 0;
  std::uint64_t id_ = 0;              // unique per constructed fit (copies share it: same data), keys the memo
  double evaluate(double m, double n, double k) const noexcept;
};

// ---- Collectives -----------------------------------------------------------------------------------

struct AlphaBeta {
  double alpha_s = 0;          // latency, seconds
  double beta = 0;             // bus bandwidth, bytes/s: time = alpha + bytes * factor / beta
  int points = 0;
  int sizes = 0;               // distinct message sizes
  double max_rel_error = 0;    // largest |fit - measured| / measured over the points
  bool alpha_from_defaults = false;  // one message size only: alpha is the default model's latency
  // False when the points cannot be an alpha-beta curve: time that does not grow with the message size, or a fit
  // that misses a point by more than kMaxFitMiss. Such a curve is reported and not used.
  bool reliable = true;
  std::string problem;
};
constexpr double kMaxFitMiss = 0.25;
// A measured GEMM ceiling above this multiple of the dense peak is not used: H100 SXM's 989.4 TFLOP/s is quoted
// at 1.83 GHz and the part boosts to 1.98 GHz (+8%); beyond that it is a wrong GPU or wrong units.
constexpr double kMaxGemmOverPeak = 1.10;  // a clean nccl-tests curve fits within a few percent
// Weighted linear least squares (Eigen) of time = alpha + x / beta with x = bytes * factor, each point weighted
// by 1/time so every message size counts by its relative error (unweighted, the 4 GiB points would decide
// alpha as well). A negative alpha is refitted as alpha = 0. With a single message size, alpha = `default_alpha`
// and beta follows from the points. `factor` = bus_bandwidth_factor(op, group size). Requires >= 1 point.
AlphaBeta fit_alpha_beta(const std::vector<CollectivePoint>& points, double factor, double default_alpha = 0);

class CollectiveFit {
 public:
  struct Curve {
    Collective op = Collective::AllReduce;
    CommScope scope = CommScope::Intra;
    int group_size = 0, ranks_per_node = 0;
    AlphaBeta fit;
  };
  void add(const Curve& c);
  bool covers(Collective op, CommScope scope) const { return !curves_[index(op)][scope_index(scope)].empty(); }
  // The measured curve of this op and scope nearest to the placement (same ranks per node first, then the
  // nearest group size in log2), or nullptr when the op was not measured in this scope. Allocation-free.
  const Curve* nearest(Collective op, CommScope scope, int group_size, int ranks_per_node) const noexcept;
  const std::vector<Curve>& curves(Collective op, CommScope scope) const { return curves_[index(op)][scope_index(scope)]; }

 private:
  static int index(Collective op) { return static_cast<int>(op); }
  static int scope_index(CommScope s) { return s == CommScope::Intra ? 0 : 1; }
  std::array<std::array<std::vector<Curve>, 2>, 5> curves_;
};

// ---- Resolved for one cluster ----------------------------------------------------------------------

struct CoverageItem {
  std::string part;            // "gemm bf16", "hbm bandwidth", "all-reduce intra-node", "fused attention", ...
  bool calibrated = false;     // true: from the profile; false: the published default
  std::string detail;          // what was used and why
};
struct CalibrationCoverage {
  std::vector<CoverageItem> items;
  std::vector<std::string> warnings;  // e.g. profile measured on another GPU than the scenario's
  std::vector<const CoverageItem*> fallbacks() const;
  std::vector<const CoverageItem*> calibrated() const;
};

// The profile fitted for one hardware (GPU peak and SM count for the GEMM ceilings, the default
// communication model for the latency of single-size curves). Build once; the compute and communication
// models point into it (gpu_compute_traits / make_comm_model below).
//
// Rules (what falls back to defaults is listed in coverage()):
//  - GEMM: a dtype with points uses GemmEfficiencyFit for the ceiling; tile/wave quantization and the HBM
//    roofline apply as without a profile. A dtype without points keeps the published ceiling.
//  - HBM: the measured copy bandwidth replaces datasheet x published fraction (memory-bound ops, GEMM
//    roofline, optimizer step).
//  - Collectives: an (op, scope) with a measured curve at the query's placement (same group size and ranks
//    per node) takes its alpha-beta fit: T = alpha + bytes * factor(op, n) / beta. At another placement in
//    the same scope, the default model's time there is scaled by measured / default at the nearest measured
//    placement and the same message size (the default model supplies how time changes with group size,
//    NVLS and hierarchy; the measurement corrects its level). An (op, scope) without a curve, and forced
//    algorithms, use the default model. Curves measured on another fabric than the scenario's are ignored.
//  - Fused attention: always the published kernel efficiencies (the profile format has no attention data).
class CalibrationFit {
 public:
  CalibrationFit(const CalibrationProfile& profile, const HardwareSpec& hardware);
  const GemmEfficiencyFit* gemm(GemmDtype d) const;  // nullptr: no points for this dtype
  double hbm_bandwidth() const { return hbm_bandwidth_; }  // 0: not measured
  const CollectiveFit& collectives() const { return collectives_; }
  // Everything, or (training given) only the GEMM dtypes this training runs.
  CalibrationCoverage coverage(const TrainingSpec* training = nullptr) const;
  const CalibrationProfile& profile() const { return profile_; }

 private:
  CalibrationProfile profile_;
  std::array<GemmEfficiencyFit, kGemmDtypes> gemm_;
  double hbm_bandwidth_ = 0;
  CollectiveFit collectives_;
  CalibrationCoverage coverage_;
};

// Default traits / comm model with the fit applied (fit = nullptr: exactly the defaults).
GpuComputeTraits gpu_compute_traits(const GpuSpec& gpu, const CalibrationFit* fit);
CommModel make_comm_model(const HardwareSpec& hardware, const CalibrationFit* fit);

}  // namespace trainsim
