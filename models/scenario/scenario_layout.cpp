// The `parallel` section: degrees as written, then derived and checked against model and hardware.
#include <algorithm>
#include <cmath>

#include "models/core/json_reader.hpp"
#include "models/core/limits.hpp"
#include "models/layout/layout_check.hpp"
#include "models/scenario/framework.hpp"
#include "models/scenario/scenario_parts.hpp"
#include "models/step/pipeline_schedule.hpp"

namespace trainsim {

ParallelInput parse_parallel(const Json& section, std::vector<AppliedDefault>* defaults) {
  JsonReader r(section, "/parallel", defaults);
  ParallelInput in;
  ParallelLayout& p = in.layout;
  // 0 = not given; derive_layout fills and records each.
  p.tp = r.get_int("tp", 0, "", 1, limits::kMaxDegree);
  p.pp = r.get_int("pp", 0, "", 1, limits::kMaxLayers);
  p.dp = r.get_int("dp", 0, "", 1, limits::kMaxDegree);
  p.cp = r.get_int("cp", 0, "", 1, limits::kMaxDegree);
  p.ep = r.get_int("ep", 0, "", 1, limits::kMaxExperts);
  p.etp = r.get_int("etp", 0, "", 1, limits::kMaxDegree);
  p.vpp = r.get_int("vpp", 0, "", 1, limits::kMaxLayers);
  p.dp_replicate = r.get_int("dp_replicate", 1, "ZeRO shards over the whole data-parallel group (no hybrid sharding)", 1, limits::kMaxDegree);
  p.micro_batch_size = r.get_int("micro_batch_size", 0, "", 1, limits::kMaxMicroBatch);
  p.gradient_accumulation_steps = r.get_int("gradient_accumulation_steps", 0, "", 1, limits::kMaxGlobalBatch);
  p.tp_comm_overlap = r.get_bool("tp_comm_overlap", false, "tensor-parallel communication not overlapped (Megatron default)");
  p.embedding_in_pipeline_split = r.get_bool("account_for_embedding_in_pipeline_split", false, "");
  p.loss_in_pipeline_split = r.get_bool("account_for_loss_in_pipeline_split", false, "");
  in.sequence_parallel_given = r.has("sequence_parallel");
  p.sequence_parallel = r.get_bool("sequence_parallel", false, "");
  in.schedule = r.has("schedule") ? r.get_enum("schedule", pipeline_schedule_names(), "1f1b", "") : "";
  p.rank_order = r.get_enum("rank_order", {"tp-cp-ep-dp-pp", "tp-cp-dp-pp", "tp-dp-pp", "tp-pp-dp"}, "tp-cp-ep-dp-pp",
                            "Megatron-LM's default rank order");
  r.mark_read({"preset"});
  r.reject_unknown();
  return in;
}

namespace {
int fill(int given, int fallback, const std::string& key, const std::string& reason, std::vector<AppliedDefault>* defaults) {
  if (given > 0) return given;
  if (defaults) defaults->push_back({"/parallel/" + key, std::to_string(fallback), reason});
  return fallback;
}
}  // namespace

ParallelLayout derive_layout(const ParallelInput& in, const ModelSpec& model, TrainingSpec& training, HardwareSpec& hw,
                             int num_gpus_given, std::vector<AppliedDefault>* defaults, bool check) {
  ParallelLayout p = in.layout;
  p.tp = fill(p.tp, 1, "tp", "no tensor parallelism", defaults);
  p.pp = fill(p.pp, 1, "pp", "no pipeline parallelism", defaults);
  p.cp = fill(p.cp, 1, "cp", "no context parallelism", defaults);
  p.ep = fill(p.ep, 1, "ep", model.is_moe() ? "experts not split" : "dense model", defaults);
  p.vpp = fill(p.vpp, 1, "vpp", "one model chunk per pipeline rank", defaults);
  if (in.schedule.empty()) {
    p.schedule = p.vpp > 1 ? Schedule::Interleaved : Schedule::OneFOneB;
    if (defaults) defaults->push_back({"/parallel/schedule", to_string(p.schedule), p.vpp > 1 ? "vpp > 1" : "Megatron's 1F1B"});
  } else {
    p.schedule = find_pipeline_schedule(in.schedule)->id();  // a registered name: get_enum checked it
  }
  if (!in.sequence_parallel_given && defaults) defaults->push_back({"/parallel/sequence_parallel", "false", "off unless asked for"});

  // GPU count: from hardware when given, else from the layout (dp must then be given). Counts in 64 bits.
  using ll = long long;
  const ll mp = p.model_parallel();
  ll gpus = num_gpus_given;
  if (gpus == 0) {
    if (p.dp > 0) {
      gpus = ParallelLayout::saturating_product({mp, p.dp});
      if (gpus > limits::kMaxGpus)
        throw InputError("/parallel/dp", std::to_string(p.dp),
                         "tp*pp*cp*dp at most " + std::to_string(limits::kMaxGpus) + " GPUs (tp*pp*cp = " + std::to_string(mp) + ")");
      if (defaults) defaults->push_back({"/hardware/num_gpus", std::to_string(gpus), "tp*pp*cp*dp"});
    } else {
      gpus = hw.gpus_per_node;
      if (defaults) defaults->push_back({"/hardware/num_gpus", std::to_string(gpus), "one node"});
    }
  }
  if (gpus > hw.gpus_per_node && gpus % hw.gpus_per_node)
    throw InputError("/hardware/num_gpus", std::to_string(gpus),
                     "a multiple of gpus_per_node (" + std::to_string(hw.gpus_per_node) + ") or at most one node");
  hw.num_gpus = static_cast<int>(gpus);
  const int nodes = static_cast<int>((gpus + hw.gpus_per_node - 1) / hw.gpus_per_node);
  if (hw.num_nodes == 0 && defaults) defaults->push_back({"/hardware/num_nodes", std::to_string(nodes), "num_gpus / gpus_per_node"});
  hw.num_nodes = nodes;

  if (gpus % mp && check)
    throw InputError("/parallel", "tp*pp*cp = " + std::to_string(mp), "a divisor of the number of GPUs (" + std::to_string(gpus) + ")");
  if (p.dp == 0) {
    p.dp = static_cast<int>(std::max<ll>(1, gpus / mp));
    if (defaults) defaults->push_back({"/parallel/dp", std::to_string(p.dp), "GPUs / (tp*pp*cp)"});
  }

  // Expert tensor parallelism: the framework's default, which may follow tp (the framework resolves once the layout's
  // degrees are known: an implied one depends on them). Where tp experts would not fit the layout (ep x tp not dividing
  // a stage's GPUs, or tp not dividing the expert's inner size) Megatron refuses its default: the experts stay whole,
  // as its --expert-tensor-parallel-size 1 runs them (and as an export writes it).
  if (p.etp == 0) {
    std::string why = model.is_moe() ? "experts not tensor-split" : "dense model";
    int etp = 1;
    if (const FrameworkTraits& fw = framework_for(training, p); model.is_moe() && p.tp > 1 && fw.etp_follows_tp) {
      ParallelLayout split = p;
      split.etp = p.tp;
      const LayoutIssue issue = expert_layout_issue(model, split, hw.num_gpus);
      if (issue != LayoutIssue::EpWorld && issue != LayoutIssue::EtpFfn) {
        etp = p.tp;
        why = fw.name + ": experts tensor-split like the dense layers (etp = tp, Megatron-Core's default)";
      } else {
        why = fw.name + " would split the experts by tp, but ep x tp does not fit the layout: experts not tensor-split";
      }
    }
    p.etp = fill(0, etp, "etp", why, defaults);
  }

  // Batch: global = micro * dp * accumulation; any two of them give the third.
  int& gbs = training.global_batch_size;
  int& mbs = p.micro_batch_size;
  int& ga = p.gradient_accumulation_steps;
  auto record = [&](const std::string& where, ll v, const std::string& why) {
    if (defaults) defaults->push_back({where, std::to_string(v), why});
  };
  const ll dp = p.dp;
  if (training.is_rl() && gbs == 0) {
    // An RL update trains samples_per_update samples of prompt + mean response tokens each, packed into micro-batches
    // of seq_len tokens (NeMo RL sequence packing, verl use_remove_padding, OpenRLHF --packing_samples).
    if (mbs == 0) { mbs = 1; record("/parallel/micro_batch_size", 1, "one packed sequence per micro-batch"); }
    const RlhfSpec& rl = training.rl;
    const double packed = std::ceil(rl.samples_per_update * rl.mean_sample_tokens() / training.seq_len);
    const ll unit = ll(mbs) * dp;
    const ll rounded = (static_cast<ll>(packed) + unit - 1) / unit * unit;
    if (rounded > limits::kMaxGlobalBatch)
      throw InputError("/training/rlhf/samples_per_update", std::to_string(rl.samples_per_update),
                       "an update of at most " + std::to_string(limits::kMaxGlobalBatch) + " packed sequences",
                       std::to_string(rounded) + " sequences of " + std::to_string(training.seq_len) + " tokens at micro_batch_size x dp " + std::to_string(unit));
    gbs = static_cast<int>(rounded);
    record("/training/global_batch_size", gbs,
           "packed sequences of seq_len tokens an update fills: rlhf samples_per_update x (prompt_len + response_len) / seq_len, "
           "rounded up to micro_batch_size x dp");
  }
  if (gbs == 0) {
    if (mbs == 0) { mbs = 1; record("/parallel/micro_batch_size", 1, "one sequence per micro-batch"); }
    if (ga == 0) { ga = 1; record("/parallel/gradient_accumulation_steps", 1, "no accumulation"); }
    const ll derived = ParallelLayout::saturating_product({mbs, dp, ga});
    if (derived > limits::kMaxGlobalBatch)
      throw InputError("/parallel", "micro_batch_size*dp*gradient_accumulation_steps = " + std::to_string(mbs) + "*" + std::to_string(dp) +
                                        "*" + std::to_string(ga),
                       "a global batch of at most " + std::to_string(limits::kMaxGlobalBatch) + " sequences");
    gbs = static_cast<int>(derived);
    record("/training/global_batch_size", gbs, "micro_batch_size*dp*gradient_accumulation_steps");
  } else if (!check) {
    // A starting point for the search: any split will do, the search chooses its own.
    if (mbs == 0) { mbs = 1; record("/parallel/micro_batch_size", 1, "one sequence per micro-batch"); }
    if (ga == 0) { ga = static_cast<int>(std::max<ll>(1, gbs / (ll(mbs) * dp))); record("/parallel/gradient_accumulation_steps", ga, "global_batch_size / (micro_batch_size*dp)"); }
  } else if (mbs == 0 && ga > 0) {
    if (gbs % (dp * ga))
      throw InputError("/parallel/gradient_accumulation_steps", std::to_string(ga),
                       "dp*gradient_accumulation_steps to divide global_batch_size (" + std::to_string(gbs) + "); dp = " + std::to_string(p.dp));
    mbs = static_cast<int>(gbs / (dp * ga));
    record("/parallel/micro_batch_size", mbs, "global_batch_size / (dp*gradient_accumulation_steps)");
  } else {
    if (mbs == 0) { mbs = 1; record("/parallel/micro_batch_size", 1, "one sequence per micro-batch"); }
    if (gbs % (ll(mbs) * dp))
      throw layout_error(LayoutIssue::BatchSplit, model, training, p, hw.num_gpus);
    const ll derived = gbs / (ll(mbs) * dp);
    if (ga == 0) { ga = static_cast<int>(derived); record("/parallel/gradient_accumulation_steps", ga, "global_batch_size / (micro_batch_size*dp)"); }
    else if (ga != derived)
      throw InputError("/parallel/gradient_accumulation_steps", std::to_string(ga),
                       std::to_string(derived) + " = global_batch_size/(micro_batch_size*dp) = " + std::to_string(gbs) + "/(" +
                           std::to_string(mbs) + "*" + std::to_string(p.dp) + ")",
                       "leave one of the three out to derive it");
  }

  if (!check) return p;
  if (auto issue = check_layout(model, training, p, hw.num_gpus); issue != LayoutIssue::None)
    throw layout_error(issue, model, training, p, hw.num_gpus);
  return p;
}

}  // namespace trainsim
