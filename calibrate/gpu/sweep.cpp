#include "calibrate/gpu/sweep.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <set>
#include <tuple>

#include "models/compute/compute.hpp"
#include "models/core/errors.hpp"
#include "models/scenario/presets.hpp"
#include "models/scenario/scenario.hpp"

namespace trainsim::gpu {

namespace {

constexpr double kKiB = 1024.0, kMiB = kKiB * 1024, kGiB = kMiB * 1024;

double whole(double v) { return std::max(1.0, std::round(v)); }

bool divides(int a, int b) { return b > 0 && a % b == 0; }

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool contains(const std::string& hay, const char* needle) { return hay.find(needle) != std::string::npos; }

std::string trim(const std::string& s) {
  std::size_t a = 0, b = s.size();
  while (a < b && std::isspace(static_cast<unsigned char>(s[a]))) ++a;
  while (b > a && std::isspace(static_cast<unsigned char>(s[b - 1]))) --b;
  return s.substr(a, b - a);
}

}  // namespace

std::vector<GemmShapeOrigin> model_gemm_shapes(const std::string& model, int tp, int seq_len) {
  Scenario sc;
  try {
    sc = parse_scenario({{"model", model},
                         {"training", {{"seq_len", seq_len}, {"global_batch_size", 8}, {"framework", "megatron-core"}}},
                         {"hardware", {{"gpu", "h100-sxm-80gb"}, {"num_gpus", 8}}}},
                        false);
  } catch (const InputError& e) {
    if (e.path() == "/model") throw InputError("--models", e.value(), e.expected(), e.hint());
    throw;
  }
  const ModelSpec& m = sc.model;
  // Megatron (the framework named above, so one GPU does not imply a plain loop) splits attention heads and the FFN across TP ranks, and KV heads too (replicated when tp exceeds them).
  if (tp < 1 || !divides(m.num_attention_heads, tp)) return {};
  if (!divides(m.num_key_value_heads, tp) && !divides(tp, m.num_key_value_heads)) return {};
  ParallelLayout p;
  p.tp = tp;
  p.micro_batch_size = 1;
  std::vector<LayerOp> ops;
  const bool dense_layers = !m.is_moe() || m.first_k_dense_replace > 0;
  if (dense_layers) {
    if (m.intermediate_size > 0 && !divides(m.intermediate_size, tp)) return {};
    ops = layer_ops(m, sc.training, p, sc.hardware.gpu, false);
  }
  if (m.is_moe()) {
    std::vector<LayerOp> moe = layer_ops(m, sc.training, p, sc.hardware.gpu, true);
    ops.insert(ops.end(), moe.begin(), moe.end());
  }
  std::vector<GemmShapeOrigin> out;
  std::set<std::tuple<double, double, double>> seen;
  auto add = [&](double mm, double nn, double kk, const std::string& op) {
    const double a = whole(mm), b = whole(nn), c = whole(kk);
    if (seen.insert({a, b, c}).second) out.push_back({a, b, c, op});
  };
  for (const LayerOp& op : ops)
    if (op.kind == LayerOp::Gemm && !op.gemm_equivalent && op.gemm.m > 0) add(op.gemm.m, op.gemm.n, op.gemm.k, op.name);
  // LM head (vocab parallel; Megatron pads the vocabulary to a multiple of 128·tp): forward, dgrad, wgrad.
  const double tokens = seq_len, h = m.hidden_size;
  const double vocab = std::ceil(static_cast<double>(m.vocab_size) / (128.0 * tp)) * 128.0;
  if (vocab > 0) {
    add(tokens, vocab, h, "lm_head.fprop");
    add(tokens, h, vocab, "lm_head.dgrad");
    add(vocab, h, tokens, "lm_head.wgrad");
  }
  return out;
}

std::vector<GemmCase> gemm_sweep(const SweepOptions& o) {
  std::vector<std::string> models = o.models;
  if (models.empty()) models = o.quick ? std::vector<std::string>{"llama3-8b"} : preset_names(PresetKind::Model);
  std::vector<int> tps = o.tp;
  if (tps.empty()) tps = o.quick ? std::vector<int>{1} : std::vector<int>{1, 2, 4, 8};
  auto has = [&](GemmDtype d) { return std::find(o.dtypes.begin(), o.dtypes.end(), d) != o.dtypes.end(); };

  std::vector<GemmCase> out;
  std::set<std::tuple<int, double, double, double>> seen;
  auto add = [&](GemmDtype d, double m, double n, double k, const std::string& origin) {
    if (d == GemmDtype::Fp8 && (std::fmod(m, 16) != 0 || std::fmod(n, 16) != 0 || std::fmod(k, 16) != 0)) return;
    if (seen.insert({static_cast<int>(d), m, n, k}).second) out.push_back({d, m, n, k, origin});
  };

  // Model shapes: bf16 (what training runs) and fp8 (Transformer Engine's linear layers) where available.
  std::vector<GemmDtype> model_dtypes;
  for (GemmDtype d : {GemmDtype::Bf16, GemmDtype::Fp8})
    if (has(d)) model_dtypes.push_back(d);
  for (GemmDtype d : model_dtypes)
    for (const auto& model : models)
      for (int tp : tps)
        for (const auto& s : model_gemm_shapes(model, tp, o.seq_len))
          add(d, s.m, s.n, s.k, model + " tp" + std::to_string(tp) + " " + s.op);

  // Regular grid in every dtype the GPU runs.
  for (GemmDtype d : o.dtypes) {
    if (o.quick) {
      for (double e : {2048.0, 8192.0}) add(d, e, e, e, "grid");
      continue;
    }
    for (double m : {256.0, 1024.0, 4096.0, 16384.0})
      for (double n : {256.0, 1024.0, 4096.0, 16384.0})
        for (double k : {256.0, 1024.0, 4096.0, 16384.0}) add(d, m, n, k, "grid");
    for (double e : {512.0, 2048.0, 8192.0}) add(d, e, e, e, "grid");
  }
  return out;
}

std::vector<double> hbm_copy_sizes(const SweepOptions& o) {
  if (o.quick) return {kGiB};
  return {256 * kMiB, kGiB, 4 * kGiB};
}

std::vector<double> collective_sizes(const SweepOptions& o) {
  std::vector<double> out;
  if (o.quick) {
    for (double b : {kMiB, 16 * kMiB, 256 * kMiB})
      if (b <= o.max_collective_bytes) out.push_back(b);
    return out;
  }
  for (double b = kKiB; b <= o.max_collective_bytes; b *= 2) out.push_back(b);
  return out;
}

std::vector<int> collective_group_sizes(const SweepOptions& o) {
  std::vector<int> out;
  if (o.gpus < 2) return out;
  if (!o.quick)
    for (int g = 2; g < o.gpus; g *= 2) out.push_back(g);
  out.push_back(o.gpus);
  return out;
}

std::vector<Collective> collective_ops() {
  return {Collective::AllReduce, Collective::AllGather, Collective::ReduceScatter, Collective::AllToAll, Collective::SendRecv};
}

std::string gpu_preset_for_device(const std::string& device_name, double memory_bytes) {
  const std::string n = lower(device_name);
  const bool pcie = contains(n, "pcie");
  if (contains(n, "h200")) return "h200-sxm-141gb";
  if (contains(n, "h800")) return "h800-sxm-80gb";
  if (contains(n, "h100")) return pcie ? "h100-pcie-80gb" : "h100-sxm-80gb";
  if (contains(n, "a800")) return "a800-sxm-80gb";
  if (contains(n, "a100")) {
    const bool big = memory_bytes > 60e9 || contains(n, "80gb");
    return std::string(pcie ? "a100-pcie-" : "a100-sxm-") + (big ? "80gb" : "40gb");
  }
  if (contains(n, "b200")) return "b200-sxm-180gb";
  if (contains(n, "l40s")) return "l40s-48gb";
  if (contains(n, "4090")) return "rtx4090-24gb";
  return "";
}

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = text.find(',', start);
    const std::string item = trim(text.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (!item.empty()) out.push_back(item);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

std::vector<int> parse_int_list(const std::string& text, const std::string& flag) {
  std::vector<int> out;
  for (const auto& item : split_list(text)) {
    bool ok = !item.empty() && item.size() <= 6;
    for (char c : item) ok = ok && std::isdigit(static_cast<unsigned char>(c));
    const int v = ok ? std::stoi(item) : 0;
    if (v < 1) throw InputError(flag, "\"" + text + "\"", "a comma-separated list of positive integers (e.g. 1,2,4,8)", "\"" + item + "\" is not one");
    out.push_back(v);
  }
  if (out.empty()) throw InputError(flag, "\"" + text + "\"", "a comma-separated list of positive integers (e.g. 1,2,4,8)");
  return out;
}

}  // namespace trainsim::gpu
