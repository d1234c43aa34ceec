// Calibration profile: JSON binding, GEMM interpolation and alpha-beta fits (Eigen), and the rules that
// decide what a profile replaces in the compute and communication models (calibration.hpp).
#include "models/calibration/calibration.hpp"

#include "models/calibration/fitted_parameters.hpp"

#include <Eigen/Dense>
#include <algorithm>
#include <atomic>
#include <bit>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>

#include "models/core/errors.hpp"
#include "models/core/json_reader.hpp"

namespace trainsim {

namespace {

// log2 for positive values without a libm call (the GEMM fit runs on the layout search's hot path): the
// exponent from the bits, log2 of the mantissa m in [1, 2) from the series 2/ln2 * atanh((m-1)/(m+1))
// to t^7 (|t| <= 1/3: absolute error below 2e-5, far below the spacing of distinct GEMM shapes, and the
// same input always gives the same output, so distances between identical shapes are exactly 0).
double fast_log2(double x) {
  if (!(x > 0)) return 0;
  const auto bits = std::bit_cast<std::uint64_t>(x);
  const int exponent = static_cast<int>((bits >> 52) & 0x7ff) - 1023;
  const double m = std::bit_cast<double>((bits & 0xfffffffffffffULL) | 0x3ff0000000000000ULL);
  const double t = (m - 1) / (m + 1), t2 = t * t;
  constexpr double kTwoOverLn2 = 2.8853900817779268;  // 2 / ln 2
  return exponent + kTwoOverLn2 * t * (1 + t2 * (1.0 / 3 + t2 * (1.0 / 5 + t2 * (1.0 / 7))));
}

std::string number_text(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}
std::string gbps_text(double bytes_per_s) { return number_text(bytes_per_s / 1e9, 1) + " GB/s"; }
std::string us_text(double s) { return number_text(s * 1e6, 1) + " us"; }

constexpr Collective kCollectives[] = {Collective::AllReduce, Collective::AllGather, Collective::ReduceScatter,
                                       Collective::AllToAll, Collective::SendRecv};
constexpr GemmDtype kDtypes[] = {GemmDtype::Bf16, GemmDtype::Fp16, GemmDtype::Fp8, GemmDtype::Tf32};

// JSON integers where the value is one (bytes, shapes), so written profiles read naturally.
Json exact_number(double v) {
  if (v == std::floor(v) && std::fabs(v) < 9007199254740992.0) return static_cast<std::int64_t>(v);
  return v;
}

double positive_number(JsonReader& r, const std::string& key, double max_value) {
  const double v = r.get_number(key, 0, "", 0, max_value);
  if (!r.has(key)) throw InputError(r.child_path(key), "nothing", "a positive number", "this field is required");
  if (!(v > 0)) throw InputError(r.child_path(key), json_value_text(r.raw(key)), "a positive number");
  return v;
}

GpuIdentity parse_gpu_identity(const Json& v, const std::string& path) {
  JsonReader r(v, path, nullptr);
  GpuIdentity g;
  g.name = r.get_string("name", "", "");
  if (g.name.empty()) throw InputError(r.child_path("name"), "nothing", "the GPU name (as nvidia-smi prints it)", "this field is required");
  g.preset = r.get_string("preset", "", "");
  g.sms = r.get_int("sms", 0, "", 0);
  g.sm_clock_mhz = r.get_number("sm_clock_mhz", 0, "", 0, 1e5);
  g.memory_clock_mhz = r.get_number("memory_clock_mhz", 0, "", 0, 1e5);
  g.driver_version = r.get_string("driver_version", "", "");
  g.cuda_version = r.get_string("cuda_version", "", "");
  r.reject_unknown();
  return g;
}

Provenance parse_provenance(const Json& v, const std::string& path) {
  JsonReader r(v, path, nullptr);
  Provenance p;
  if (!r.has("source"))
    throw InputError(r.child_path("source"), "nothing", "\"measured\" or \"derived-from-publications\"", "this field is required");
  p.source = r.get_enum("source", {"measured", "derived-from-publications"}, "measured", "");
  p.who = r.get_string("who", "", "");
  p.when = r.get_string("when", "", "");
  p.command = r.get_string("command", "", "");
  p.notes = r.get_string("notes", "", "");
  r.reject_unknown();
  return p;
}

GemmPoint parse_gemm_point(const Json& v, const std::string& path) {
  JsonReader r(v, path, nullptr);
  GemmPoint g;
  if (!r.has("dtype")) throw InputError(r.child_path("dtype"), "nothing", "one of bf16, fp16, fp8, tf32", "this field is required");
  const std::string dtype = r.get_enum("dtype", {"bf16", "fp16", "fp8", "tf32"}, "", "");
  for (GemmDtype d : kDtypes)
    if (dtype == to_string(d)) g.dtype = d;
  g.m = positive_number(r, "m", 1e9);
  g.n = positive_number(r, "n", 1e9);
  g.k = positive_number(r, "k", 1e9);
  const bool has_tflops = r.has("tflops"), has_time = r.has("time_s");
  if (has_tflops == has_time)
    throw InputError(path, json_value_text(v), "exactly one of \"tflops\" (achieved TFLOP/s) and \"time_s\" (seconds per GEMM)");
  if (has_tflops) g.tflops = positive_number(r, "tflops", 1e6);
  else g.tflops = 2 * g.m * g.n * g.k / positive_number(r, "time_s", 1e6) / 1e12;
  g.source = r.get_string("source", "", "");
  r.reject_unknown();
  return g;
}

CollectiveCurve parse_curve(const Json& v, const std::string& path) {
  JsonReader r(v, path, nullptr);
  CollectiveCurve c;
  const std::string op = r.get_string("op", "", "");
  if (!parse_collective_name(op, &c.op))
    throw InputError(r.child_path("op"), r.has("op") ? json_value_text(r.raw("op")) : "nothing",
                     "one of all-reduce, all-gather, reduce-scatter, all-to-all, send-recv");
  if (!r.has("scope")) throw InputError(r.child_path("scope"), "nothing", "\"intra\" (one node) or \"inter\" (across nodes)", "this field is required");
  c.scope = r.get_enum("scope", {"intra", "inter"}, "intra", "") == "intra" ? CommScope::Intra : CommScope::Inter;
  c.group_size = r.required_int("group_size", 2);
  if (c.scope == CommScope::Intra) {
    c.ranks_per_node = r.get_int("ranks_per_node", c.group_size, "", 1);
    if (c.ranks_per_node != c.group_size)
      throw InputError(r.child_path("ranks_per_node"), std::to_string(c.ranks_per_node),
                       "the group size (" + std::to_string(c.group_size) + ") for an intra-node curve");
  } else {
    c.ranks_per_node = r.required_int("ranks_per_node", 1);
    if (c.ranks_per_node >= c.group_size || c.group_size % c.ranks_per_node)
      throw InputError(r.child_path("ranks_per_node"), std::to_string(c.ranks_per_node),
                       "a divisor of group_size (" + std::to_string(c.group_size) + ") below it: an inter-node curve spans >= 2 nodes");
  }
  c.fabric = r.get_string("fabric", "", "");
  c.source = r.get_string("source", "", "");
  if (!r.has("points") || !r.raw("points").is_array() || r.raw("points").empty())
    throw InputError(r.child_path("points"), r.has("points") ? json_value_text(r.raw("points")) : "nothing",
                     "a non-empty array of {bytes, busbw and/or time}");
  const double factor = bus_bandwidth_factor(c.op, c.group_size);
  const Json& points = r.raw("points");
  for (std::size_t i = 0; i < points.size(); ++i) {
    JsonReader p(points[i], r.child_path("points") + "/" + std::to_string(i), nullptr);
    CollectivePoint pt;
    pt.bytes = p.required_quantity("bytes", Quantity::Bytes);
    if (!(pt.bytes > 0)) throw InputError(p.child_path("bytes"), json_value_text(points[i]["bytes"]), "a positive size in bytes");
    const bool has_bw = p.has("busbw"), has_time = p.has("time");
    if (!has_bw && !has_time) throw InputError(p.path(), json_value_text(points[i]), "\"busbw\" (bus bandwidth) and/or \"time\" (seconds, out-of-place)");
    if (has_bw) {
      pt.busbw = p.required_quantity("busbw", Quantity::Bandwidth);
      if (!(pt.busbw > 0)) throw InputError(p.child_path("busbw"), json_value_text(points[i]["busbw"]), "a positive bandwidth");
    }
    if (has_time) {
      pt.time_s = p.required_quantity("time", Quantity::Time);
      if (!(pt.time_s > 0)) throw InputError(p.child_path("time"), json_value_text(points[i]["time"]), "a positive duration");
    }
    // nccl-tests doc/PERFORMANCE.md: busbw = algbw * factor, algbw = bytes / time.
    if (!has_time) pt.time_s = pt.bytes * factor / pt.busbw;
    if (!has_bw) pt.busbw = pt.bytes * factor / pt.time_s;
    p.reject_unknown();
    c.points.push_back(pt);
  }
  r.reject_unknown();
  return c;
}

}  // namespace

Precision precision_of(GemmDtype d) {
  switch (d) {
    case GemmDtype::Bf16: return Precision::Bf16;
    case GemmDtype::Fp16: return Precision::Fp16;
    case GemmDtype::Fp8: return Precision::Fp8;
    case GemmDtype::Tf32: return Precision::Fp32;
  }
  return Precision::Bf16;
}

const char* to_string(CommScope s) { return s == CommScope::Intra ? "intra" : "inter"; }

const char* to_string(GemmDtype d) {
  switch (d) {
    case GemmDtype::Bf16: return "bf16";
    case GemmDtype::Fp16: return "fp16";
    case GemmDtype::Fp8: return "fp8";
    case GemmDtype::Tf32: return "tf32";
  }
  return "?";
}

GemmDtype gemm_dtype(Precision p) {
  switch (p) {
    case Precision::Fp32: return GemmDtype::Tf32;
    case Precision::Fp16: return GemmDtype::Fp16;
    case Precision::Bf16: return GemmDtype::Bf16;
    case Precision::Fp8: return GemmDtype::Fp8;
  }
  return GemmDtype::Bf16;
}

bool parse_collective_name(const std::string& text, Collective* out) {
  std::string t;
  for (char ch : text)
    if (ch != '-' && ch != '_' && ch != ' ') t += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  if (t == "allreduce") *out = Collective::AllReduce;
  else if (t == "allgather") *out = Collective::AllGather;
  else if (t == "reducescatter") *out = Collective::ReduceScatter;
  else if (t == "alltoall") *out = Collective::AllToAll;
  else if (t == "sendrecv") *out = Collective::SendRecv;
  else return false;
  return true;
}

CalibrationProfile parse_calibration_profile(const Json& doc, const std::string& path) {
  const std::string root = path.empty() ? "" : path + "#";
  JsonReader r(doc, root, nullptr);
  CalibrationProfile p;
  r.mark_read({"$schema"});
  const std::string format = r.get_string("format", kCalibrationFormatName, "");
  if (format != kCalibrationFormatName)
    throw InputError(r.child_path("format"), json_value_text(r.raw("format")), std::string("\"") + kCalibrationFormatName + "\"");
  p.version = r.required_int("version", 1);
  if (p.version != kCalibrationFormatVersion)
    throw InputError(r.child_path("version"), std::to_string(p.version), "version " + std::to_string(kCalibrationFormatVersion),
                     "this trainsim reads calibration profiles of version " + std::to_string(kCalibrationFormatVersion));
  if (!r.has("gpu")) throw InputError(r.child_path("gpu"), "nothing", "an object {name, preset, sms, ...}", "this field is required");
  p.gpu = parse_gpu_identity(r.raw("gpu"), r.child_path("gpu"));
  if (!r.has("provenance"))
    throw InputError(r.child_path("provenance"), "nothing", "an object {source, who, when, command, notes}", "this field is required");
  p.provenance = parse_provenance(r.raw("provenance"), r.child_path("provenance"));
  if (r.has("gemm")) {
    const Json& a = r.raw("gemm");
    if (!a.is_array()) throw InputError(r.child_path("gemm"), json_value_text(a), "an array of {dtype, m, n, k, tflops}");
    for (std::size_t i = 0; i < a.size(); ++i) p.gemm.push_back(parse_gemm_point(a[i], r.child_path("gemm") + "/" + std::to_string(i)));
  }
  p.hbm_bandwidth = r.get_quantity("hbm_bandwidth", Quantity::Bandwidth, 0, "");
  p.hbm_source = r.get_string("hbm_source", "", "");
  if (r.has("collectives")) {
    const Json& a = r.raw("collectives");
    if (!a.is_array()) throw InputError(r.child_path("collectives"), json_value_text(a), "an array of {op, scope, group_size, points}");
    for (std::size_t i = 0; i < a.size(); ++i)
      p.collectives.push_back(parse_curve(a[i], r.child_path("collectives") + "/" + std::to_string(i)));
  }
  if (r.has("fitted_parameters")) {
    const Json& f = r.raw("fitted_parameters");
    const std::string where = r.child_path("fitted_parameters");
    if (!f.is_object()) throw InputError(where, json_value_text(f), "an object {parameter: value}");
    JsonReader fr(f, where, nullptr);
    for (const auto& info : fitted_parameter_info())
      if (fr.has(info.key)) p.fitted_parameters.emplace_back(info.key, fr.get_number(info.key, 0, "", info.lower, info.upper));
    fr.reject_unknown();
  }
  p.fitted_parameters_source = r.get_string("fitted_parameters_source", "", "");
  r.reject_unknown();
  return p;
}

Json to_json(const CalibrationProfile& p) {
  Json gpu = {{"name", p.gpu.name}};
  if (!p.gpu.preset.empty()) gpu["preset"] = p.gpu.preset;
  if (p.gpu.sms > 0) gpu["sms"] = p.gpu.sms;
  if (p.gpu.sm_clock_mhz > 0) gpu["sm_clock_mhz"] = exact_number(p.gpu.sm_clock_mhz);
  if (p.gpu.memory_clock_mhz > 0) gpu["memory_clock_mhz"] = exact_number(p.gpu.memory_clock_mhz);
  if (!p.gpu.driver_version.empty()) gpu["driver_version"] = p.gpu.driver_version;
  if (!p.gpu.cuda_version.empty()) gpu["cuda_version"] = p.gpu.cuda_version;
  Json j = {{"format", kCalibrationFormatName},
            {"version", p.version},
            {"gpu", gpu},
            {"provenance",
             {{"source", p.provenance.source}, {"who", p.provenance.who}, {"when", p.provenance.when},
              {"command", p.provenance.command}, {"notes", p.provenance.notes}}}};
  Json gemm = Json::array();
  for (const auto& g : p.gemm) {
    Json e = {{"dtype", to_string(g.dtype)}, {"m", exact_number(g.m)}, {"n", exact_number(g.n)}, {"k", exact_number(g.k)}, {"tflops", g.tflops}};
    if (!g.source.empty()) e["source"] = g.source;
    gemm.push_back(e);
  }
  j["gemm"] = gemm;
  if (p.hbm_bandwidth > 0) j["hbm_bandwidth"] = exact_number(p.hbm_bandwidth);
  if (!p.hbm_source.empty()) j["hbm_source"] = p.hbm_source;
  if (!p.fitted_parameters.empty()) {
    Json f = Json::object();
    for (const auto& [key, value] : p.fitted_parameters) f[key] = value;
    j["fitted_parameters"] = f;
    j["fitted_parameters_source"] = p.fitted_parameters_source;
  }
  Json curves = Json::array();
  for (const auto& c : p.collectives) {
    Json e = {{"op", to_string(c.op)}, {"scope", to_string(c.scope)}, {"group_size", c.group_size}, {"ranks_per_node", c.ranks_per_node}};
    if (!c.fabric.empty()) e["fabric"] = c.fabric;
    if (!c.source.empty()) e["source"] = c.source;
    Json pts = Json::array();
    for (const auto& pt : c.points) {
      Json e2 = {{"bytes", exact_number(pt.bytes)}};
      if (pt.busbw > 0) e2["busbw"] = pt.busbw;  // either may be left out: parsing derives it from the other
      if (pt.time_s > 0) e2["time"] = pt.time_s;
      pts.push_back(e2);
    }
    e["points"] = pts;
    curves.push_back(e);
  }
  j["collectives"] = curves;
  return j;
}

// ---- GEMM ------------------------------------------------------------------------------------------

namespace {
std::atomic<std::uint64_t> next_fit_id{1};

// Per-thread direct-mapped memo of GemmEfficiencyFit::ceiling: no locks, no allocation, exact (a hit needs the
// same fit id and the same m, n, k).
struct CeilingMemo {
  std::uint64_t id = 0;
  double m = 0, n = 0, k = 0, value = 0;
};
constexpr std::size_t kMemoSlots = 1024;
thread_local CeilingMemo t_memo[kMemoSlots];
constexpr std::size_t kMemoFromPoints = 2;  // from two points on, a hit is cheaper than evaluating
}  // namespace

GemmEfficiencyFit::GemmEfficiencyFit(const std::vector<GemmShape>& shapes, const std::vector<double>& efficiencies,
                                     const std::vector<double>& quantization) {
  std::vector<GemmShape> unique;
  std::vector<double> sum;
  std::vector<int> count;
  for (std::size_t i = 0; i < shapes.size() && i < efficiencies.size() && i < quantization.size(); ++i) {
    const GemmShape& s = shapes[i];
    if (!(efficiencies[i] > 0) || !(quantization[i] > 0) || !(s.m > 0 && s.n > 0 && s.k > 0)) continue;
    const double c = efficiencies[i] / quantization[i];
    std::size_t j = 0;
    while (j < unique.size() && !(unique[j].m == s.m && unique[j].n == s.n && unique[j].k == s.k)) ++j;
    if (j == unique.size()) {
      unique.push_back(s);
      sum.push_back(0);
      count.push_back(0);
    }
    sum[j] += c;
    count[j] += 1;
  }
  for (std::size_t j = 0; j < unique.size(); ++j) {
    lm_.push_back(fast_log2(unique[j].m));
    ln_.push_back(fast_log2(unique[j].n));
    lk_.push_back(fast_log2(unique[j].k));
    values_.push_back(sum[j] / count[j]);
  }
  id_ = next_fit_id.fetch_add(1, std::memory_order_relaxed);
  if (!values_.empty()) {
    min_ = *std::min_element(values_.begin(), values_.end());
    max_ = *std::max_element(values_.begin(), values_.end());
  }
}


double GemmEfficiencyFit::ceiling(double m, double n, double k) const noexcept {
  if (values_.size() == 1) return values_[0];  // one point: the same ceiling everywhere
  if (values_.size() < kMemoFromPoints) return evaluate(m, n, k);
  // The fit id and the three values' bits combined, then splitmix64's finalizer (integral doubles differ only in
  // their high bits; the finalizer brings them down to the slot index).
  auto mix = [](std::uint64_t x) {
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
    return x ^ (x >> 31);
  };
  const std::uint64_t h = mix(id_ * 0x9E3779B97F4A7C15ULL ^ std::bit_cast<std::uint64_t>(m) * 0xC2B2AE3D27D4EB4FULL ^
                             std::bit_cast<std::uint64_t>(n) * 0x165667B19E3779F9ULL ^ std::bit_cast<std::uint64_t>(k));
  CeilingMemo& slot = t_memo[h & (kMemoSlots - 1)];
  if (slot.id == id_ && slot.m == m && slot.n == n && slot.k == k) return slot.value;
  const double value = evaluate(m, n, k);
  slot = {id_, m, n, k, value};
  return value;
}

double GemmEfficiencyFit::evaluate(double m, double n, double k) const noexcept {
  const Eigen::Index points = static_cast<Eigen::Index>(values_.size());
  if (points == 0) return 0;
  using Column = Eigen::Map<const Eigen::ArrayXd>;
  const Column x(lm_.data(), points), y(ln_.data(), points), z(lk_.data(), points), v(values_.data(), points);
  const double qx = fast_log2(m), qy = fast_log2(n), qz = fast_log2(k);
  // Shepard weights 1/d^4 without a branch per point (so the loop vectorizes); a measured shape (d ~ 0) gets a
  // weight that swamps every other (others are at most 1e24 at d^2 >= 1e-12), i.e. exactly its own value.
  double weights = 0, weighted = 0;
  for (Eigen::Index i = 0; i < points; ++i) {
    const double dx = x[i] - qx, dy = y[i] - qy, dz = z[i] - qz;
    const double d2 = dx * dx + dy * dy + dz * dz;
    const double w = d2 < 1e-12 ? 1e280 : 1 / (d2 * d2);
    weights += w;
    weighted += w * v[i];
  }
  return weighted / weights;
}

// ---- Collectives -----------------------------------------------------------------------------------

AlphaBeta fit_alpha_beta(const std::vector<CollectivePoint>& points, double factor, double default_alpha) {
  AlphaBeta out;
  out.points = static_cast<int>(points.size());
  if (points.empty() || !(factor > 0)) return out;
  std::vector<double> sizes;
  for (const auto& p : points)
    if (std::find(sizes.begin(), sizes.end(), p.bytes) == sizes.end()) sizes.push_back(p.bytes);
  out.sizes = static_cast<int>(sizes.size());
  const Eigen::Index n = static_cast<Eigen::Index>(points.size());
  // Scaled by 1/t_i: each row says (alpha + x_i * inv_beta) / t_i = 1.
  Eigen::VectorXd x(n), t(n);
  for (Eigen::Index i = 0; i < n; ++i) {
    x(i) = points[i].bytes * factor;
    t(i) = points[i].time_s;
  }
  const Eigen::VectorXd w = t.cwiseInverse();
  const Eigen::VectorXd u = x.cwiseProduct(w);  // x_i / t_i
  double alpha = 0, inv_beta = 0;
  if (out.sizes >= 2) {
    Eigen::MatrixXd a(n, 2);
    a.col(0) = w;
    a.col(1) = u;
    const Eigen::Vector2d sol = a.colPivHouseholderQr().solve(Eigen::VectorXd::Ones(n));
    alpha = sol(0), inv_beta = sol(1);
    if (alpha < 0) {  // latency below what the points resolve: alpha = 0, 1/beta = sum(u) / sum(u^2)
      alpha = 0;
      inv_beta = u.sum() / u.squaredNorm();
    }
    if (!(inv_beta > 0)) {  // no growth with size (latency-bound points, or a falling curve): no bandwidth to learn
      inv_beta = 1 / u.maxCoeff();
      alpha = std::max(0.0, (t - x * inv_beta).cwiseProduct(w.cwiseAbs2()).sum() / w.squaredNorm());
      out.reliable = false;
      out.problem = "the time does not grow with the message size, so no bandwidth follows from it";
    }
  } else {
    // One message size: alpha from the default model (below the measured time), beta from the points.
    alpha = std::max(0.0, default_alpha);
    if (alpha >= t.minCoeff()) alpha = 0;
    inv_beta = ((t.array() - alpha) / x.array()).mean();
    out.alpha_from_defaults = alpha > 0;
  }
  out.alpha_s = alpha;
  out.beta = 1 / inv_beta;
  for (Eigen::Index i = 0; i < n; ++i)
    out.max_rel_error = std::max(out.max_rel_error, std::fabs(alpha + x(i) * inv_beta - t(i)) / t(i));
  if (out.reliable && out.sizes >= 2 && out.max_rel_error > kMaxFitMiss) {
    out.reliable = false;
    out.problem = "latency + size / bandwidth misses a measured point by " + number_text(100 * out.max_rel_error, 0) + "%";
  }
  return out;
}

void CollectiveFit::add(const Curve& c) { curves_[index(c.op)][scope_index(c.scope)].push_back(c); }

const CollectiveFit::Curve* CollectiveFit::nearest(Collective op, CommScope scope, int group_size, int ranks_per_node) const noexcept {
  const auto& list = curves_[index(op)][scope_index(scope)];
  const Curve* best = nullptr;
  double best_score = std::numeric_limits<double>::infinity();
  const double ln = fast_log2(group_size), lg = fast_log2(ranks_per_node);
  for (const Curve& c : list) {
    if (c.group_size == group_size && c.ranks_per_node == ranks_per_node) return &c;
    // Ranks per node first (it decides how many NICs / which links the group drives), then group size.
    const double score = 8 * std::fabs(lg - fast_log2(c.ranks_per_node)) + std::fabs(ln - fast_log2(c.group_size));
    if (score < best_score) best_score = score, best = &c;
  }
  return best;
}

// ---- Resolved for one cluster ----------------------------------------------------------------------

std::vector<const CoverageItem*> CalibrationCoverage::fallbacks() const {
  std::vector<const CoverageItem*> out;
  for (const auto& i : items)
    if (!i.calibrated) out.push_back(&i);
  return out;
}

std::vector<const CoverageItem*> CalibrationCoverage::calibrated() const {
  std::vector<const CoverageItem*> out;
  for (const auto& i : items)
    if (i.calibrated) out.push_back(&i);
  return out;
}

CalibrationFit::CalibrationFit(const CalibrationProfile& profile, const HardwareSpec& h) : profile_(profile) {
  const GpuComputeTraits def = gpu_compute_traits(h.gpu);
  const CommModel comm = make_comm_model(h);
  auto& items = coverage_.items;
  if (!profile.gpu.preset.empty() && profile.gpu.preset != h.gpu.name)
    coverage_.warnings.push_back("the profile was measured on " + profile.gpu.preset + " (" + profile.gpu.name +
                                 "), the scenario's GPU is " + h.gpu.name);

  // GEMM ceilings, one fit per dtype.
  for (GemmDtype d : kDtypes) {
    const Precision prec = precision_of(d);
    const double peak = gemm_peak_flops(h.gpu, prec);
    std::vector<GemmShape> shapes;
    std::vector<double> eff, quant;
    for (const auto& g : profile.gemm) {
      if (g.dtype != d) continue;
      const GemmShape s{g.m, g.n, g.k, 1};
      shapes.push_back(s);
      eff.push_back(g.tflops * 1e12 / peak);
      quant.push_back(gemm_quantization(def, s));
    }
    const std::string part = std::string("gemm ") + to_string(d);
    const std::string published = "published ceiling " + number_text(def.gemm_ceiling, 3) + " of the dense peak (" + def.gemm_row + ")";
    if (prec == Precision::Fp8 && h.gpu.flops_fp8 <= 0) {
      items.push_back({part, false, h.gpu.name + " has no fp8: fp8 GEMMs run at the 16-bit rate"});
      continue;
    }
    gemm_[static_cast<int>(d)] = GemmEfficiencyFit(shapes, eff, quant);
    const GemmEfficiencyFit& f = gemm_[static_cast<int>(d)];
    // Boost clocks reach ~8% above the clock the dense peak is quoted at; far beyond the peak is a wrong GPU or
    // wrong units, and is not used (a plan priced with it would be impossible).
    if (!f.empty() && f.max_ceiling() > kMaxGemmOverPeak) {
      coverage_.warnings.push_back(part + ": measured at up to " + number_text(f.max_ceiling(), 2) + "x the dense peak of " + h.gpu.name +
                                   " (after tile/wave quantization): not used; check the GPU and the units");
      items.push_back({part, false, "measured above " + number_text(kMaxGemmOverPeak, 2) + "x the dense peak: " + published});
      gemm_[static_cast<int>(d)] = GemmEfficiencyFit();
      continue;
    }
    if (f.empty()) {
      items.push_back({part, false, std::string("no ") + to_string(d) + " GEMM points in the profile: " + published});
    } else {
      std::string detail = std::to_string(f.size()) + " measured shape" + (f.size() > 1 ? "s" : "") + ": ceiling " +
                           number_text(f.min_ceiling(), 3) + (f.size() > 1 ? "-" + number_text(f.max_ceiling(), 3) : "") +
                           " of the dense peak before tile/wave quantization (default: " + published + ")";
      if (f.max_ceiling() > 1) coverage_.warnings.push_back(part + ": measured above the dense peak of " + h.gpu.name + " (boost clocks?); check the GPU preset");
      items.push_back({part, true, detail});
    }
  }

  // HBM copy bandwidth.
  const double default_hbm = h.gpu.memory_bandwidth * def.hbm_fraction;
  if (profile.hbm_bandwidth > 0) {
    hbm_bandwidth_ = profile.hbm_bandwidth;
    items.push_back({"hbm bandwidth", true,
                     number_text(hbm_bandwidth_ / 1e12, 2) + " TB/s measured copy (default: " + number_text(default_hbm / 1e12, 2) + " TB/s)"});
  } else {
    items.push_back({"hbm bandwidth", false, "not in the profile: " + number_text(default_hbm / 1e12, 2) + " TB/s (datasheet x published copy fraction)"});
  }
  items.push_back({"fused attention", false, "the profile format has no attention measurements: published kernel efficiencies"});

  // Collectives: one alpha-beta fit per measured curve that applies to this hardware.
  const std::string fabric_of[2] = {h.intra_node.name, h.inter_node.name};
  for (Collective op : kCollectives) {
    for (CommScope scope : {CommScope::Intra, CommScope::Inter}) {
      std::string skipped;
      std::vector<std::string> used;
      for (const auto& c : profile.collectives) {
        if (c.op != op || c.scope != scope) continue;
        const std::string& fabric = fabric_of[scope == CommScope::Intra ? 0 : 1];
        if (!c.fabric.empty() && c.fabric != fabric) {
          skipped = "measured on " + c.fabric + ", the scenario's " + (scope == CommScope::Intra ? "intra" : "inter") + "-node fabric is " + fabric;
          continue;
        }
        if (c.ranks_per_node > h.gpus_per_node) {
          skipped = "measured with " + std::to_string(c.ranks_per_node) + " ranks per node, the scenario has " + std::to_string(h.gpus_per_node) + " GPUs per node";
          continue;
        }
        const double default_alpha = collective_time(op, 1.0, GroupPlacement{c.group_size, c.ranks_per_node}, comm).time_s;
        CollectiveFit::Curve curve{op, scope, c.group_size, c.ranks_per_node,
                                   fit_alpha_beta(c.points, bus_bandwidth_factor(op, c.group_size), default_alpha)};
        if (!(curve.fit.beta > 0) || !std::isfinite(curve.fit.beta)) continue;
        if (!curve.fit.reliable) {
          skipped = "the measured " + std::to_string(c.group_size) + "-rank curve is not used (" + curve.fit.problem + ")";
          coverage_.warnings.push_back(std::string(to_string(op)) + " " + to_string(scope) + "-node: " + skipped);
          continue;
        }
        collectives_.add(curve);
        std::string u = std::to_string(c.group_size) + " ranks" +
                        (scope == CommScope::Inter ? " (" + std::to_string(c.ranks_per_node) + " per node)" : "") + ": busbw " +
                        gbps_text(curve.fit.beta) + ", latency " + us_text(curve.fit.alpha_s) +
                        (curve.fit.alpha_from_defaults ? " (default model; one message size)" : "") + ", " +
                        std::to_string(curve.fit.points) + " point" + (curve.fit.points > 1 ? "s" : "");
        if (curve.fit.sizes >= 2) u += ", fit within " + number_text(curve.fit.max_rel_error * 100, 1) + "%";
        used.push_back(u);
      }
      const std::string part = std::string(to_string(op)) + (scope == CommScope::Intra ? " intra-node" : " inter-node");
      if (!used.empty()) {
        std::string detail = join(used, "; ");
        detail += "; other group sizes: default model x measured/default at the nearest measured one";
        items.push_back({part, true, detail});
      } else {
        items.push_back({part, false, skipped.empty() ? "not in the profile: default model" : skipped + ": default model"});
      }
    }
  }
}

const GemmEfficiencyFit* CalibrationFit::gemm(GemmDtype d) const {
  const GemmEfficiencyFit& f = gemm_[static_cast<int>(d)];
  return f.empty() ? nullptr : &f;
}

CalibrationCoverage CalibrationFit::coverage(const TrainingSpec* training) const {
  if (!training) return coverage_;
  const std::string used[2] = {std::string("gemm ") + to_string(gemm_dtype(training->precision)),
                               std::string("gemm ") + to_string(gemm_dtype(high_precision(training->precision)))};
  CalibrationCoverage out;
  out.warnings = coverage_.warnings;
  for (const auto& item : coverage_.items) {
    if (item.part.starts_with("gemm ") && item.part != used[0] && item.part != used[1]) continue;
    out.items.push_back(item);
  }
  return out;
}

GpuComputeTraits gpu_compute_traits(const GpuSpec& gpu, const CalibrationFit* fit) {
  GpuComputeTraits tr = gpu_compute_traits(gpu);
  if (!fit) return tr;
  // A measured dtype replaces the published ceiling; the others keep it (a profile changes only what it measured).
  for (Precision p : {Precision::Fp32, Precision::Fp16, Precision::Bf16, Precision::Fp8})
    if (const GemmEfficiencyFit* measured = fit->gemm(gemm_dtype(p))) tr.gemm_fit[static_cast<int>(p)] = measured;
  if (fit->hbm_bandwidth() > 0 && gpu.memory_bandwidth > 0) tr.hbm_fraction = fit->hbm_bandwidth() / gpu.memory_bandwidth;
  return tr;
}

CommModel make_comm_model(const HardwareSpec& hardware, const CalibrationFit* fit) {
  CommModel m = make_comm_model(hardware);
  if (fit) m.calibration = &fit->collectives();
  return m;
}

}  // namespace trainsim
