#include "calibrate/gpu/proxy_run.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>

#include "calibrate/gpu/cuda_util.hpp"
#include "calibrate/gpu/gemm_bench.hpp"
#include "calibrate/gpu/hbm_bench.hpp"
#include "calibrate/gpu/nccl_bench.hpp"
#include "calibrate/gpu/sweep.hpp"
#include "models/comm/collectives.hpp"
#include "models/compute/compute.hpp"
#include "models/core/units.hpp"
#include "models/step/step.hpp"

namespace trainsim::gpu {

namespace {

using Json = nlohmann::json;

std::string size_text(double b) {
  char buf[48];
  if (b >= kBytesPerGiB) std::snprintf(buf, sizeof buf, "%.2f GiB", b / kBytesPerGiB);
  else if (b >= kBytesPerMiB) std::snprintf(buf, sizeof buf, "%.1f MiB", b / kBytesPerMiB);
  else std::snprintf(buf, sizeof buf, "%.1f KiB", b / 1024);
  return buf;
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// One distinct op, ready to launch again (the back-to-back run).
struct Runner {
  std::unique_ptr<LtGemm> gemm;
  std::unique_ptr<DeviceCopy> copy;
  void launch() {
    if (gemm) gemm->launch();
    else if (copy) copy->launch();
  }
  double device_bytes() const { return gemm ? gemm->device_bytes() : copy ? copy->device_bytes() : 0; }
};

struct Measured {
  bool ok = false;
  double per_op_s = 0;   // one op (the whole batch, scaled when only part of it ran)
  bool scaled = false;
  std::string what, note;
  std::unique_ptr<Runner> runner;  // null once released (memory) or when it failed
};

Json sums_json(const ProxySums& s) {
  Json j = {{"measured_s", s.measured_s}, {"predicted_s", s.predicted_s}, {"rows", s.rows}, {"unmeasured_rows", s.unmeasured}};
  j["error"] = s.rows > 0 ? Json(s.error()) : Json(nullptr);
  return j;
}

}  // namespace

ProxyPlan plan_proxy(const Scenario& sc, const CalibrationProfile* profile, int layers) {
  const ModelSpec& m = sc.model;
  const TrainingSpec& t = sc.training;
  const ParallelLayout& p = sc.parallel;
  const HardwareSpec& hw = sc.hardware;
  std::unique_ptr<CalibrationFit> fit;
  if (profile) fit = std::make_unique<CalibrationFit>(*profile, hw);
  const GpuComputeTraits traits = layer_power_traits(m, t, p, hw.gpu, gpu_compute_traits(hw.gpu, fit.get()));

  ProxyPlan plan;
  plan.layers = std::clamp(layers, 1, std::max(1, m.num_hidden_layers));
  for (int i = 0; i < plan.layers; ++i) {
    plan.layer_is_moe.push_back(m.is_moe() && i >= m.first_k_dense_replace);
    (plan.layer_is_moe.back() ? plan.moe_layers : plan.dense_layers) += 1;
  }
  plan.tp = p.tp;
  for (bool moe : {false, true}) {
    const int count = moe ? plan.moe_layers : plan.dense_layers;
    if (count == 0) continue;
    for (LayerOp& op : layer_ops(m, t, p, hw.gpu, traits, moe)) {
      // Hybrid attention: an op of one attention kind runs on that kind's share of the proxy's layers.
      const int runs = static_cast<int>(std::lround(count * op.layer_share));
      if (runs == 0) continue;
      ProxyItem item;
      item.row.layer = moe ? "moe" : "dense";
      item.row.name = op.name;
      item.row.pass = op.pass;
      item.row.kind = to_string(op.kind);
      item.row.count = runs;
      item.row.predicted_s = op.predicted_s * runs;
      item.op = std::move(op);
      plan.items.push_back(std::move(item));
    }
  }
  // The TP collectives as the step's op stream has them (models/step/step_stream.cpp): per layer kind and pass,
  // each collective's calls, bytes and analytic time of one call, over the proxy's layers of that kind.
  if (p.tp > 1) {
    const StepStream stream = StepModel(m, t, hw, profile).stream(p);
    std::vector<ProxyItem> tp_items;
    bool spans_nodes = false;
    for (bool moe : {false, true}) {
      const int kind_layers = moe ? plan.moe_layers : plan.dense_layers;
      for (const CommOp& op : moe ? stream.moe.comm : stream.dense.comm) {
        if (op.dim != ParallelDim::Tp || kind_layers == 0) continue;
        spans_nodes = spans_nodes || op.group.ranks_per_node < op.group.size;
        plan.tp_bytes = op.bytes;
        auto same = [&](const ProxyItem& x) { return x.coll == op.collective; };
        auto it = std::find_if(tp_items.begin(), tp_items.end(), same);
        if (it == tp_items.end()) {
          ProxyItem item;
          item.collective = true;
          item.coll = op.collective;
          item.row.layer = "comm";
          item.row.name = std::string("tp ") + to_string(op.collective);
          item.row.pass = "forward+backward";
          item.row.kind = "collective";
          item.row.what = std::string(to_string(op.collective)) + " of " + size_text(op.bytes) + " on " + std::to_string(p.tp) + " GPUs";
          tp_items.push_back(std::move(item));
          it = tp_items.end() - 1;
        }
        const int calls = static_cast<int>(std::lround(op.calls * kind_layers));
        it->row.count += calls;
        it->row.predicted_s += op.call_s * calls;
      }
    }
    if (spans_nodes)
      plan.notes.push_back("The plan's TP group spans nodes (" + std::to_string(group_placements(p, hw.gpus_per_node).tp.ranks_per_node) +
                           " ranks per node); it is measured within this node.");
    for (ProxyItem& item : tp_items) plan.items.push_back(std::move(item));
  }
  return plan;
}

namespace {

// The device side of one proxy run: the stream and cuBLASLt handle, the timing policy, how much device memory an op
// may take, and each distinct op measured once (kept for the back-to-back run while they fit together).
class ProxyDevice {
 public:
  ProxyDevice(const DeviceInfo& info, int samples) : info_(info) {
    policy_ = full_timing();
    policy_.samples = std::max(1, samples);
    policy_.warmup_s = 0.01;
    std::size_t free_bytes = 0, total_bytes = 0;
    memory_info(&free_bytes, &total_bytes);
    const double usable = std::max(0.0, static_cast<double>(free_bytes) - 2 * kBytesPerGiB);
    per_op_budget_ = 0.4 * usable;
    keep_budget_ = 0.45 * usable;
  }
  const TimingPolicy& policy() const { return policy_; }
  bool back_to_back() const { return back_to_back_; }
  const std::string& back_to_back_why() const { return back_to_back_why_; }
  Stream& stream() { return stream_; }

  // One op: a GEMM through cuBLASLt (in bf16 where the GPU or cuBLASLt has no fp8 for it; part of a batch that does
  // not fit, its time scaled), a memory-bound op as a device-to-device copy of the same bytes.
  Measured& measure(const LayerOp& op) {
    std::string key;
    GemmProblem prob;
    std::string note;
    if (op.gemm.m > 0 && op.gemm.n > 0 && op.gemm.k > 0) {
      GemmDtype dt = gemm_dtype(op.precision);
      if (!gemm_dtype_supported(dt, info_.cc_major, info_.cc_minor)) {
        note = std::string("run in bf16: this GPU has no ") + to_string(dt) + " GEMMs";
        dt = GemmDtype::Bf16;
      }
      prob = {dt, std::max<std::int64_t>(1, std::llround(op.gemm.m)), std::max<std::int64_t>(1, std::llround(op.gemm.n)),
              std::max<std::int64_t>(1, std::llround(op.gemm.k)), std::max<std::int64_t>(1, std::llround(op.gemm.count))};
      if (dt == GemmDtype::Fp8 && (prob.m % 16 || prob.n % 16 || prob.k % 16)) {
        note = "run in bf16: cuBLASLt's fp8 needs dimensions that are multiples of 16";
        prob.dtype = GemmDtype::Bf16;
      }
      key = "gemm " + describe(prob);
    } else if (op.bytes > 0) {
      key = "copy " + std::to_string(std::llround(op.bytes / 2));
    } else {
      key = "none";
    }
    auto [it, fresh] = cache_.try_emplace(key);
    Measured& e = it->second;
    if (!fresh) return e;
    if (key == "none") {
      e.note = "nothing to run";
      return e;
    }
    try {
      DeviceGuard dg(0);
      auto runner = std::make_unique<Runner>();
      double scale = 1;
      if (key.rfind("gemm", 0) == 0) {
        e.what = describe(prob);
        const std::int64_t batch = prob.batch;
        const double set = gemm_set_bytes(prob);
        if (set > per_op_budget_) {
          const auto fits = static_cast<std::int64_t>(std::floor(static_cast<double>(batch) * per_op_budget_ / set));
          if (fits < 1) throw GpuError("needs " + size_text(set / static_cast<double>(batch)) + " per GEMM, " + size_text(per_op_budget_) + " available");
          prob.batch = fits;
          scale = static_cast<double>(batch) / static_cast<double>(fits);
          e.scaled = true;
          note += (note.empty() ? "" : "; ") + std::to_string(fits) + " of the " + std::to_string(batch) + " batched GEMMs run, time scaled";
        }
        try {
          runner->gemm = std::make_unique<LtGemm>(prob, lt_, stream_.get(), info_.l2_bytes);
        } catch (const GpuError& ex) {
          if (prob.dtype != GemmDtype::Fp8) throw;
          note += (note.empty() ? "" : "; ") + std::string("run in bf16 (fp8: ") + ex.what() + ")";
          prob.dtype = GemmDtype::Bf16;
          runner->gemm = std::make_unique<LtGemm>(prob, lt_, stream_.get(), info_.l2_bytes);
        }
        GemmProblem shown = prob;
        shown.batch = batch;
        e.what = describe(shown);
      } else {
        const auto bytes = static_cast<std::size_t>(std::llround(op.bytes / 2));
        e.what = "copy of " + size_text(static_cast<double>(bytes)) + " (" + size_text(op.bytes) + " moved)";
        runner->copy = std::make_unique<DeviceCopy>(bytes, stream_.get(), info_.l2_bytes);
      }
      EventTimer timer(0, stream_.get());
      Runner* rp = runner.get();
      const TimingStats s = timer.measure([rp] { rp->launch(); }, policy_);
      e.ok = true;
      e.per_op_s = s.median_s * scale;
      if (!e.scaled && kept_ + runner->device_bytes() <= keep_budget_) {
        kept_ += runner->device_bytes();
        e.runner = std::move(runner);
      } else if (back_to_back_) {
        back_to_back_ = false;
        back_to_back_why_ = e.scaled ? "an op ran only part of its batch" : "the ops of the layers do not fit in device memory together";
      }
    } catch (const std::exception& ex) {
      e.ok = false;
      note += (note.empty() ? "" : "; ") + std::string("not run: ") + ex.what();
      if (back_to_back_) {
        back_to_back_ = false;
        back_to_back_why_ = "an op could not run";
      }
    }
    e.note = note;
    return e;
  }

 private:
  DeviceInfo info_;
  Stream stream_;
  LtContext lt_;
  TimingPolicy policy_;
  double per_op_budget_ = 0, keep_budget_ = 0, kept_ = 0;
  bool back_to_back_ = true;
  std::string back_to_back_why_;
  std::map<std::string, Measured> cache_;
};

using Say = std::function<void(const std::string&)>;

// Each distinct compute op once (identical ops of a layer share the measurement); the runners kept, per layer
// kind, for the back-to-back run. True where an attention core ran as its GEMM-equivalent.
bool measure_compute(const ProxyPlan& plan, ProxyDevice& device, ProxyReport& r, const Say& say, int steps, int& step,
                     std::vector<Runner*>& dense_seq, std::vector<Runner*>& moe_seq) {
  bool fused_attention = false;
  std::string current;
  for (const ProxyItem& item : plan.items) {
    if (item.collective) continue;
    if (item.row.layer != current) {
      current = item.row.layer;
      int n = 0;
      for (const ProxyItem& x : plan.items) n += x.row.layer == current;
      say("[" + std::to_string(++step) + "/" + std::to_string(steps) + "] " + (current == "moe" ? "MoE" : "dense") + " layer: " +
          std::to_string(n) + " ops, x" + std::to_string(item.row.count) + " layer" + (item.row.count == 1 ? "" : "s"));
    }
    Measured& e = device.measure(item.op);
    ProxyRow row = item.row;
    row.what = e.what + (item.op.gemm_equivalent ? " (GEMM-equivalent)" : "");
    row.measured = e.ok;
    row.measured_s = e.ok ? e.per_op_s * row.count : 0;
    row.note = e.note;
    fused_attention = fused_attention || item.op.gemm_equivalent;
    r.rows.push_back(row);
    if (e.runner) (current == "moe" ? moe_seq : dense_seq).push_back(e.runner.get());
  }
  return fused_attention;
}

// The TP collectives, through NCCL on tp local GPUs.
void measure_collectives(const ProxyPlan& plan, const ProxyOptions& o, int local_gpus, const TimingPolicy& policy, ProxyReport& r, const Say& say,
                         int steps, int& step) {
  const int local = o.gpus > 0 ? std::min(o.gpus, local_gpus) : local_gpus;
  say("[" + std::to_string(++step) + "/" + std::to_string(steps) + "] TP collectives: " + std::to_string(plan.tp) + " ranks, " +
      size_text(plan.tp_bytes) + (plan.tp <= local ? "" : " (not run: " + std::to_string(local) + " local GPUs)"));
  std::unique_ptr<NcclGroup> group;
  std::string group_error;
  if (plan.tp <= local) {
    try {
      std::vector<int> devices;
      for (int d = 0; d < plan.tp; ++d) devices.push_back(d);
      group = std::make_unique<NcclGroup>(devices);
      group->reserve(plan.tp_bytes);
    } catch (const std::exception& ex) {
      group.reset();
      group_error = ex.what();
    }
  }
  for (const ProxyItem& item : plan.items) {
    if (!item.collective) continue;
    ProxyRow row = item.row;
    if (group) {
      try {
        NcclGroup* g = group.get();
        TimingPolicy cp = policy;
        cp.use_graph = false;
        const Collective op = item.coll;
        const double bytes = plan.tp_bytes;
        const TimingStats s = g->timer().measure([g, op, bytes] { g->launch(op, bytes); }, cp);
        g->check_async();
        row.measured = true;
        row.measured_s = s.median_s * row.count;
      } catch (const std::exception& ex) {
        row.note = std::string("not run: ") + ex.what();
      }
    } else {
      row.note = plan.tp > local ? "not run: tp " + std::to_string(plan.tp) + " > " + std::to_string(local) + " local GPUs" : "not run: " + group_error;
    }
    r.rows.push_back(row);
  }
}

// The N layers' compute back to back, launch gaps included.
void run_back_to_back(const ProxyPlan& plan, ProxyDevice& device, const std::vector<Runner*>& dense_seq, const std::vector<Runner*>& moe_seq, ProxyReport& r,
                      const Say& say) {
  if (device.back_to_back()) {
    try {
      DeviceGuard dg(0);
      EventTimer timer(0, device.stream().get());
      auto sequence = [&] {
        for (int i = 0; i < r.layers; ++i)
          for (Runner* x : plan.layer_is_moe[static_cast<std::size_t>(i)] ? moe_seq : dense_seq) x->launch();
      };
      timer.time_launches(sequence, 1);  // warm-up
      std::vector<double> samples;
      for (int i = 0; i < std::max(3, device.policy().samples / 2); ++i) samples.push_back(timer.time_launches(sequence, 1));
      r.back_to_back_s = timing_stats(samples).median_s;
      say("Back-to-back run of the " + std::to_string(r.layers) + " layers' compute: done");
    } catch (const std::exception& ex) {
      r.notes.push_back(std::string("Back-to-back run failed: ") + ex.what());
      r.back_to_back_s = 0;
    }
  } else {
    r.notes.push_back("No back-to-back run: " + device.back_to_back_why() + ".");
  }
}

// The rows summed per kind, compute and total; the back-to-back prediction over the compute rows.
void sum_rows(ProxyReport& r) {
  for (const ProxyRow& row : r.rows) {
    r.predicted_all_s += row.predicted_s;
    ProxySums& k = row.kind == "gemm" ? r.gemm : row.kind == "attention" ? r.attention : row.kind == "memory" ? r.memory : r.comm;
    for (ProxySums* s : {&k, row.kind == "collective" ? nullptr : &r.compute, &r.total}) {
      if (!s) continue;
      if (!row.measured) {
        ++s->unmeasured;
        continue;
      }
      ++s->rows;
      s->measured_s += row.measured_s;
      s->predicted_s += row.predicted_s;
    }
    if (row.kind != "collective") r.back_to_back_predicted_s += row.predicted_s;
  }
}

}  // namespace

ProxyReport proxy_run(const Scenario& sc, const CalibrationProfile* profile, const ProxyOptions& o,
                      const std::function<void(const std::string&)>& progress) {
  const DeviceProbe probe = probe_devices();
  if (probe.count < 1) throw GpuError("no CUDA device found: " + probe.error);
  const Say say = [&](const std::string& line) {
    if (progress) progress(line);
  };
  const HardwareSpec& hw = sc.hardware;
  const ProxyPlan plan = plan_proxy(sc, profile, o.layers);

  ProxyReport r;
  r.layers = plan.layers;
  r.dense_layers = plan.dense_layers;
  r.moe_layers = plan.moe_layers;
  r.tp = plan.tp;
  r.notes = plan.notes;

  DeviceGuard guard(0);
  const DeviceInfo info = device_info(0);
  r.device = info.name + " (GPU 0 of " + std::to_string(probe.count) + " local, sm_" + std::to_string(info.cc_major) + std::to_string(info.cc_minor) +
             ", " + std::to_string(info.sms) + " SMs)";
  r.predicted_for = hw.gpu.name;
  const std::string device_preset = gpu_preset_for_device(info.name, info.memory_bytes);
  if (device_preset.empty() || lower(hw.gpu.name).find(device_preset) == std::string::npos)
    r.notes.push_back("The plan is for " + hw.gpu.name + " but this GPU is " + info.name + ": the error includes the difference between the two.");

  ProxyDevice device(info, o.samples);
  const int steps = (plan.dense_layers > 0) + (plan.moe_layers > 0) + (plan.tp > 1);
  int step = 0;
  std::vector<Runner*> dense_seq, moe_seq;
  const bool fused_attention = measure_compute(plan, device, r, say, steps, step, dense_seq, moe_seq);
  if (plan.tp > 1) measure_collectives(plan, o, probe.count, device.policy(), r, say, steps, step);
  run_back_to_back(plan, device, dense_seq, moe_seq, r, say);
  sum_rows(r);
  if (fused_attention)
    r.notes.push_back(
        "Attention core: run as its GEMM-equivalent (cuBLASLt batched Q·K^T-shaped GEMMs of the fused kernel's FLOPs, s x causal half of "
        "the keys x head dim), whose scores go through HBM; the model prices a fused FlashAttention/cuDNN kernel, so expect the "
        "measurement to be slower (an upper bound).");
  r.notes.push_back("Memory-bound ops (norms, activations, residuals, RoPE, casts, permutes) run as device-to-device copies moving the same bytes.");
  r.notes.push_back("Each op: median of " + std::to_string(device.policy().samples) + " CUDA-event-timed samples after warm-up; short ops replayed from a CUDA graph.");
  return r;
}

Json to_json(const ProxyReport& r) {
  Json rows = Json::array();
  for (const ProxyRow& x : r.rows) {
    Json j = {{"layer", x.layer}, {"name", x.name},   {"pass", x.pass},         {"kind", x.kind},
              {"what", x.what},   {"count", x.count}, {"predicted_s", x.predicted_s}};
    j["measured_s"] = x.measured ? Json(x.measured_s) : Json(nullptr);
    j["error"] = x.measured && x.predicted_s > 0 ? Json(x.error()) : Json(nullptr);
    if (!x.note.empty()) j["note"] = x.note;
    rows.push_back(j);
  }
  Json b2b = nullptr;
  if (r.back_to_back_s > 0)
    b2b = {{"measured_s", r.back_to_back_s},
           {"predicted_s", r.back_to_back_predicted_s},
           {"error", r.back_to_back_predicted_s > 0 ? Json(r.back_to_back_s / r.back_to_back_predicted_s - 1) : Json(nullptr)}};
  return {{"device", r.device},
          {"predicted_for", r.predicted_for},
          {"layers", r.layers},
          {"dense_layers", r.dense_layers},
          {"moe_layers", r.moe_layers},
          {"tp", r.tp},
          {"ops", rows},
          {"totals",
           {{"gemm", sums_json(r.gemm)},
            {"attention", sums_json(r.attention)},
            {"memory", sums_json(r.memory)},
            {"compute", sums_json(r.compute)},
            {"tp_collectives", sums_json(r.comm)},
            {"total", sums_json(r.total)},
            {"predicted_all_s", r.predicted_all_s}}},
          {"back_to_back", b2b},
          {"notes", r.notes}};
}

}  // namespace trainsim::gpu
