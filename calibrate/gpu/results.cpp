#include "calibrate/gpu/results.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <tuple>

#include "models/core/errors.hpp"
#include "models/core/json_reader.hpp"

namespace trainsim::gpu {

namespace {

using Json = nlohmann::json;

std::string integer_text(double v) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.0f", v);
  return buf;
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::size_t start = 0;
  for (;;) {
    const std::size_t at = s.find(sep, start);
    out.push_back(s.substr(start, at == std::string::npos ? std::string::npos : at - start));
    if (at == std::string::npos) return out;
    start = at + 1;
  }
}

double number(const Json& e, const char* key) {
  if (!e.contains(key) || !e[key].is_number()) return 0;
  const double v = e[key].get<double>();
  return std::isfinite(v) ? v : 0;
}

double seconds_per_unit(const std::string& unit) {
  if (unit == "ns") return 1e-9;
  if (unit == "us") return 1e-6;
  if (unit == "ms") return 1e-3;
  if (unit == "s") return 1;
  return 0;
}

// The median of the samples the benchmark recorded, else Google Benchmark's mean per iteration.
double entry_seconds(const Json& e) {
  const double median = number(e, "median_s");
  if (median > 0) return median;
  const std::string unit = e.contains("time_unit") && e["time_unit"].is_string() ? e["time_unit"].get<std::string>() : "ns";
  return number(e, "real_time") * seconds_per_unit(unit);
}

std::string samples_text(const Json& e) {
  double samples = number(e, "samples");
  if (samples <= 0) samples = number(e, "iterations");
  return "median of " + integer_text(samples) + " samples";
}

// "4096x1024x8192" -> three positive numbers.
bool parse_dims(const std::string& text, double* out, std::size_t count) {
  const std::vector<std::string> parts = split(text, 'x');
  if (parts.size() != count) return false;
  for (std::size_t i = 0; i < count; ++i) {
    char* end = nullptr;
    out[i] = std::strtod(parts[i].c_str(), &end);
    if (parts[i].empty() || *end != '\0' || !(out[i] > 0)) return false;
  }
  return true;
}

// Google Benchmark appends the run's settings to the name ("gemm/bf16/64x64x64/iterations:20/manual_time"); the
// names registered here never contain ':' or those words, so they come back by dropping such components.
std::string registered_name(const std::string& name) {
  std::string out;
  for (const std::string& part : split(name, '/')) {
    if (part.find(':') != std::string::npos || part == "manual_time" || part == "real_time" || part == "process_time") continue;
    out += (out.empty() ? "" : "/") + part;
  }
  return out;
}

bool parse_dtype(const std::string& text, GemmDtype* out) {
  for (GemmDtype d : {GemmDtype::Bf16, GemmDtype::Fp16, GemmDtype::Fp8, GemmDtype::Tf32})
    if (text == to_string(d)) {
      *out = d;
      return true;
    }
  return false;
}

}  // namespace

std::string gemm_benchmark_name(GemmDtype dtype, double m, double n, double k) {
  return std::string("gemm/") + to_string(dtype) + "/" + integer_text(m) + "x" + integer_text(n) + "x" + integer_text(k);
}

std::string hbm_benchmark_name(double bytes_copied) { return "hbm/copy/" + integer_text(bytes_copied); }

std::string collective_benchmark_name(Collective op, CommScope scope, int group_size, int ranks_per_node, double bytes) {
  return std::string("nccl/") + to_string(op) + "/" + to_string(scope) + "/" + std::to_string(group_size) + "x" + std::to_string(ranks_per_node) +
         "/" + integer_text(bytes);
}

double algorithm_bandwidth(double bytes, double seconds) { return seconds > 0 ? bytes / seconds : 0; }

double bus_bandwidth(Collective op, double bytes, int ranks, double seconds) {
  return algorithm_bandwidth(bytes, seconds) * bus_bandwidth_factor(op, ranks);
}

CollectiveCounts collective_counts(Collective op, double bytes, int ranks, std::size_t element_size) {
  CollectiveCounts c;
  if (!(bytes > 0) || ranks < 1 || element_size == 0) return c;
  const auto n = static_cast<std::size_t>(ranks);
  const auto count = static_cast<std::size_t>(bytes / static_cast<double>(element_size));  // elements in nccl-tests' size
  switch (op) {
    case Collective::AllReduce:
    case Collective::SendRecv:
      c.send_count = c.recv_count = count;
      break;
    case Collective::AllGather:
      c.send_count = count / n;
      c.recv_count = c.send_count * n;
      break;
    case Collective::ReduceScatter:
      c.recv_count = count / n;
      c.send_count = c.recv_count * n;
      break;
    case Collective::AllToAll:
      c.per_peer = count / n;
      c.send_count = c.recv_count = c.per_peer * n;
      break;
  }
  const std::size_t size_count = op == Collective::ReduceScatter ? c.send_count : c.recv_count;
  c.bytes_used = static_cast<double>(size_count) * static_cast<double>(element_size);
  return c;
}

CalibrationProfile profile_from_benchmark_json(const Json& gbench, const ProfileHeader& header, ConversionSummary* summary) {
  if (!gbench.is_object() || !gbench.contains("benchmarks") || !gbench["benchmarks"].is_array())
    throw InputError("benchmark output", gbench.is_object() ? "an object without \"benchmarks\"" : json_value_text(gbench),
                     "Google Benchmark JSON output ({\"context\": ..., \"benchmarks\": [...]})");
  ConversionSummary local;
  ConversionSummary& s = summary ? *summary : local;
  s = {};
  CalibrationProfile p;
  p.gpu = header.gpu;
  p.provenance = header.provenance;
  const std::string versions = header.library_versions.empty() ? "" : ", " + header.library_versions;

  double hbm_bytes = 0;
  using CurveKey = std::tuple<int, int, int, int>;  // op, scope, group size, ranks per node
  std::map<CurveKey, std::size_t> curve_index;

  for (const Json& e : gbench["benchmarks"]) {
    if (!e.is_object() || !e.contains("name") || !e["name"].is_string()) continue;
    if (e.contains("run_type") && e["run_type"] == "aggregate") continue;
    const std::string name = registered_name(e["name"].get<std::string>());
    if (e.contains("error_occurred") && e["error_occurred"] == true) {
      const std::string why = e.contains("error_message") && e["error_message"].is_string() ? e["error_message"].get<std::string>() : "error";
      s.skipped.push_back(name + ": " + why);
      continue;
    }
    const std::vector<std::string> parts = split(name, '/');
    const double seconds = entry_seconds(e);
    if (parts.empty() || (parts[0] != "gemm" && parts[0] != "hbm" && parts[0] != "nccl")) continue;
    if (!(seconds > 0)) {
      s.skipped.push_back(name + ": no positive time");
      continue;
    }
    const std::string label = e.contains("label") && e["label"].is_string() ? e["label"].get<std::string>() : "";

    if (parts[0] == "gemm") {
      GemmPoint g;
      double dims[3] = {number(e, "m"), number(e, "n"), number(e, "k")};
      if (parts.size() != 3 || !parse_dtype(parts[1], &g.dtype) ||
          (!(dims[0] > 0 && dims[1] > 0 && dims[2] > 0) && !parse_dims(parts[2], dims, 3))) {
        s.skipped.push_back(name + ": not a gemm/<dtype>/<m>x<n>x<k> name");
        continue;
      }
      g.m = dims[0], g.n = dims[1], g.k = dims[2];
      g.tflops = 2 * g.m * g.n * g.k / seconds / 1e12;
      g.source = "trainsim calibrate run: cuBLASLt" + versions + (label.empty() ? "" : ", " + label) + ", " + samples_text(e);
      p.gemm.push_back(g);
      ++s.gemm_points;
    } else if (parts[0] == "hbm") {
      double moved = number(e, "bytes_moved");
      double copied = 0;
      if (!(moved > 0) && parts.size() == 3 && parse_dims(parts[2], &copied, 1)) moved = 2 * copied;
      if (!(moved > 0)) {
        s.skipped.push_back(name + ": no bytes_moved");
        continue;
      }
      if (moved >= hbm_bytes) {  // the largest copy decides
        hbm_bytes = moved;
        p.hbm_bandwidth = moved / seconds;
        char buf[160];
        std::snprintf(buf, sizeof buf, "trainsim calibrate run: cudaMemcpyAsync device to device, %.2f GiB copied (read + written: %.2f GiB)",
                      moved / 2 / (1u << 30), moved / (1u << 30));
        p.hbm_source = buf + versions + ", " + samples_text(e);
        s.hbm = true;
      }
    } else {
      Collective op = Collective::AllReduce;
      int group = static_cast<int>(number(e, "group_size")), per_node = static_cast<int>(number(e, "ranks_per_node"));
      double bytes = number(e, "bytes");
      if (parts.size() >= 3 && group <= 0) {
        double gp[2] = {0, 0};
        if (parts.size() >= 4 && parse_dims(parts[3], gp, 2)) group = static_cast<int>(gp[0]), per_node = static_cast<int>(gp[1]);
      }
      if (!(bytes > 0) && parts.size() == 5) parse_dims(parts[4], &bytes, 1);
      const bool scope_ok = parts.size() >= 3 && (parts[2] == "intra" || parts[2] == "inter");
      if (parts.size() < 3 || !parse_collective_name(parts[1], &op) || !scope_ok || group < 2 || per_node < 1 || !(bytes > 0)) {
        s.skipped.push_back(name + ": not a nccl/<op>/<scope>/<ranks>x<per node>/<bytes> benchmark");
        continue;
      }
      const CommScope scope = parts[2] == "intra" ? CommScope::Intra : CommScope::Inter;
      if (scope == CommScope::Intra ? per_node != group : (per_node >= group || group % per_node != 0)) {
        s.skipped.push_back(name + ": ranks per node do not fit the scope");
        continue;
      }
      const CurveKey key{static_cast<int>(op), static_cast<int>(scope), group, per_node};
      auto it = curve_index.find(key);
      if (it == curve_index.end()) {
        CollectiveCurve c;
        c.op = op, c.scope = scope, c.group_size = group, c.ranks_per_node = per_node;
        c.fabric = scope == CommScope::Intra ? header.intra_fabric : header.inter_fabric;
        c.source = "trainsim calibrate run: NCCL" + versions + ", " + std::to_string(group) + " ranks" +
                   (scope == CommScope::Inter ? " (" + std::to_string(per_node) + " per node)" : " on one node") +
                   ", out-of-place, bf16, " + samples_text(e);
        it = curve_index.emplace(key, p.collectives.size()).first;
        p.collectives.push_back(std::move(c));
        ++s.collective_curves;
      }
      CollectivePoint pt;
      pt.bytes = bytes;
      pt.time_s = seconds;
      pt.busbw = bus_bandwidth(op, bytes, group, seconds);
      p.collectives[it->second].points.push_back(pt);
      ++s.collective_points;
    }
  }
  for (auto& c : p.collectives)
    std::stable_sort(c.points.begin(), c.points.end(), [](const CollectivePoint& a, const CollectivePoint& b) { return a.bytes < b.bytes; });

  std::string note = "Measured by trainsim calibrate run: " + std::to_string(s.gemm_points) + " GEMM shapes, " +
                     (s.hbm ? "HBM copy bandwidth, " : "no HBM copy, ") + std::to_string(s.collective_curves) + " collective curves (" +
                     std::to_string(s.collective_points) + " points); times are medians of CUDA-event-timed samples after warm-up.";
  if (!s.skipped.empty()) {
    note += " " + std::to_string(s.skipped.size()) + " benchmark" + (s.skipped.size() == 1 ? "" : "s") + " did not run: ";
    for (std::size_t i = 0; i < s.skipped.size() && i < 5; ++i) note += (i ? "; " : "") + s.skipped[i];
    if (s.skipped.size() > 5) note += "; ...";
    note += ".";
  }
  p.provenance.notes = p.provenance.notes.empty() ? note : p.provenance.notes + " " + note;
  return p;
}

}  // namespace trainsim::gpu
