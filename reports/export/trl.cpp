// --to trl: a TRL run of the plan through TRL's own CLI (`trl dpo` / `trl sft --config FILE --accelerate_config FILE`,
// trl/cli at huggingface/trl f2cd5771): dpo_config.yaml or sft_config.yaml (DPOConfig / SFTConfig, ModelConfig and
// ScriptArguments in one file, as TrlParser reads it), the accelerate config of hf-trainer, ds_config.json under DeepSpeed,
// and launch_trl.sh. Pretraining is refused: TRL's trainers fine-tune.
#include <cmath>

#include "hugging_face.hpp"
#include "launch_stack.hpp"
#include "models/core/errors.hpp"
#include "models/core/json_reader.hpp"
#include "vendor.hpp"

namespace trainsim {
namespace {

using namespace export_detail;
using OrderedJson = nlohmann::ordered_json;

bool is_dpo(const ExportPlan& p) { return p.training.mode == TrainingMode::Dpo; }

// TRL's config file: TrainingArguments' fields, the trainer's own, ModelConfig and ScriptArguments (trl/trainer/dpo_config.py,
// sft_config.py, model_config.py, trl/scripts/utils.py ScriptArguments).
std::string trl_config_yaml(const ExportPlan& p, const std::string& target) {
  const TrainingSpec& t = p.training;
  const bool deepspeed = hf_parallel(p) == HfParallel::DeepSpeed;
  const std::string command = is_dpo(p) ? "dpo" : "sft";
  std::string out = comment_header(p, target) + "#\n";
  out += "# trl " + command + " --config " + command + "_config.yaml (launch_trl.sh): TrlParser fills " + (is_dpo(p) ? "DPOConfig" : "SFTConfig") +
         ", ModelConfig and ScriptArguments from this file.\n";
  out += "# Paths are relative to this folder (launch_trl.sh runs here).\n";

  out += "\n# " + std::string(is_dpo(p) ? "DPOConfig" : "SFTConfig") + ": TrainingArguments as priced\n";
  const OrderedJson args = hf_training_arguments(p, false, deepspeed ? "ds_config.json" : "");
  out += yaml_from_json(args, {{"per_device_train_batch_size", is_dpo(p) ? "preference pairs per GPU per micro-step" : "sequences per GPU per micro-step"},
                               {"gradient_accumulation_steps", "global batch " + std::to_string(t.global_batch_size) + " = micro " +
                                                                   std::to_string(p.layout.micro_batch_size) + " x dp " + std::to_string(p.layout.dp) +
                                                                   " x accumulation " + std::to_string(p.layout.gradient_accumulation_steps)},
                               {"max_steps", "the run's optimizer steps, as priced"},
                               {"save_steps", "steps between checkpoints (trainsim reliability)"}});

  OrderedJson own;
  std::vector<std::pair<std::string, std::string>> notes;
  if (is_dpo(p)) {
    own["max_length"] = t.seq_len;
    notes.emplace_back("max_length", "tokens of each sequence (prompt + chosen or rejected), as priced");
    own["beta"] = 0.1;
    notes.emplace_back("beta", "not planned by trainsim: DPO's default");
    own["loss_type"] = OrderedJson::array({"sigmoid"});
    // trainsim prices DPO's step with the frozen reference model's forward over both sequences beside the policy's.
    own["precompute_ref_log_probs"] = false;
    notes.emplace_back("precompute_ref_log_probs", "as priced: the reference model runs every step; true drops its forward and memory from the step");
    if (t.packing && t.flash_attention) {
      own["padding_free"] = true;
      notes.emplace_back("padding_free", "packed as priced (no padding); needs attn_implementation flash_attention_2");
    }
  } else {
    own["max_length"] = t.seq_len;
    notes.emplace_back("max_length", "sequence length as priced");
    own["packing"] = t.packing;
  }
  out += "\n# " + std::string(is_dpo(p) ? "DPOConfig" : "SFTConfig") + ": the trainer's own fields\n";
  out += yaml_from_json(own, notes);

  OrderedJson model;
  model["model_name_or_path"] = hf_model_id(p.model);
  model["dtype"] = hf_load_dtype(p);
  if (t.uses_adapters()) {
    model["use_peft"] = true;
    model["lora_r"] = t.lora.rank;
    model["lora_alpha"] = static_cast<long long>(std::llround(t.lora.alpha));  // an int in ModelConfig
    model["lora_target_modules"] = t.lora.target_modules;
    if (t.quantized_base()) {
      model["load_in_4bit"] = true;
      model["bnb_4bit_quant_type"] = "nf4";
    }
  }
  out += "\n# ModelConfig\n";
  out += yaml_from_json(model, {{"model_name_or_path", "placeholder from the preset " + p.model.name + ": your checkpoint"},
                                {"dtype", t.uses_adapters() ? "the frozen base in the training precision, as priced"
                                                            : "as priced: " + std::string(deepspeed ? "DeepSpeed keeps its own fp32 master copy"
                                                                                                    : "fp32 weights under mixed precision")}});

  OrderedJson script;
  script["dataset_name"] = is_dpo(p) ? "trl-lib/ultrafeedback_binarized" : "trl-lib/Capybara";
  out += "\n# ScriptArguments\n";
  out += yaml_from_json(script, {{"dataset_name", "placeholder: your dataset"}});
  return out;
}

class TrlExporter final : public Exporter {
 public:
  std::string name() const override { return "trl"; }
  std::string description() const override {
    return "TRL (DPO, SFT): dpo_config.yaml / sft_config.yaml + accelerate_config.yaml + launch_trl.sh (trl dpo|sft --config)";
  }
  // Refused here, before the plan is priced again: TRL has no pretraining trainer.
  std::string framework_for(const ExportPlan& p) const override {
    if (p.training.mode == TrainingMode::Pretrain)
      throw InputError("--to", "\"trl\"", "a target for pretraining (TRL fine-tunes: sft, lora, qlora and dpo plans)",
                       "this plan is pretrain: export it --to hf-trainer, torchtitan, megatron or ms-swift");
    return hf_framework(p);
  }

  std::vector<ExportFile> render(const ExportPlan& p) const override {
    const TrainingSpec& t = p.training;
    const bool deepspeed = hf_parallel(p) == HfParallel::DeepSpeed;
    const int nodes = p.hardware.num_nodes;
    const std::string command = is_dpo(p) ? "dpo" : "sft";
    const std::string config = command + "_config.yaml";
    std::vector<ExportFile> files;
    files.push_back({config, trl_config_yaml(p, name())});
    files.push_back({"accelerate_config.yaml", accelerate_config_yaml(p, name())});
    if (deepspeed) files.push_back({"ds_config.json", hf_deepspeed_config(p, name())});

    StackLaunch st;
    st.stack = std::string("TRL's ") + (is_dpo(p) ? "DPOTrainer" : "SFTTrainer") + " (trl " + command + ") under accelerate";
    st.needs = "trl with transformers and accelerate" + std::string(deepspeed ? " and DeepSpeed" : "") + (t.uses_adapters() ? " and peft" : "") +
               (t.quantized_base() ? " and bitsandbytes" : "");
    st.warnings = hf_warnings(p);
    // TRL builds the reference model with the policy's model_init_kwargs: outside DeepSpeed (which casts both engines to
    // 16 bits) it holds fp32 weights where the step priced a 16-bit copy.
    if (is_dpo(p) && !deepspeed && hf_load_dtype(p) == "float32" && t.precision != Precision::Fp32)
      st.warnings.push_back("DPO: TRL loads the reference model in the policy's dtype (float32); trainsim priced 16-bit reference weights, "
                            "so it takes twice their memory");
    if (is_dpo(p))
      st.notes.push_back("DPO as priced: each step runs the policy and " +
                         std::string(t.uses_adapters() ? "the reference (the base with the adapters disabled: TRL passes no ref_model under PEFT)"
                                                       : "a frozen reference model") +
                         " over both sequences of " + std::to_string(t.global_batch_size) + " preference pairs (" + std::to_string(2 * t.seq_len) +
                         " tokens a pair).");
    st.notes.push_back("learning_rate is TRL's default (trainsim does not plan it); dataset and model are placeholders in " + config + ".");

    std::vector<Argument> args{{"--config \"$CONFIG_DIR/" + config + "\"", ""}};
    // --accelerate_config takes accelerate's --config_file; the other unknown options go to accelerate launch as they are.
    std::vector<Argument> launch = accelerate_launch_arguments(p);
    launch.front().text = "--accelerate_config \"$CONFIG_DIR/accelerate_config.yaml\"";
    args.insert(args.end(), launch.begin(), launch.end());

    std::vector<std::string> body;
    body.push_back("CONFIG_DIR=\"${CONFIG_DIR:-$(cd \"$(dirname \"$0\")\" && pwd)}\"  # where " + config + " and accelerate_config.yaml are");
    body.push_back("NODE_RANK=\"${NODE_RANK:-0}\"");
    if (nodes > 1) body.push_back(": \"${MASTER_ADDR:?set MASTER_ADDR to the address of the first node}\"");
    for (const auto& l : vendor_launch(p.hardware.gpu).setup_lines) body.push_back(l);
    body.push_back("cd \"$CONFIG_DIR\"  # " + config + "'s relative paths (output_dir" + (deepspeed ? ", deepspeed" : "") + ") resolve here");
    std::string array = bash_array("TRL_ARGS", args);
    array.pop_back();
    body.push_back(array);
    body.push_back("trl " + command + " \"${TRL_ARGS[@]}\" \"$@\"");
    const std::vector<std::string> notes{"Run this script on every node (" + std::to_string(nodes) + (nodes == 1 ? " node" : " nodes") +
                                         "), with NODE_RANK 0.." + std::to_string(nodes - 1) +
                                         (nodes > 1 ? " and MASTER_ADDR the first node's address" : "") + ": trl " + command +
                                         " hands the launch to accelerate, which starts " + std::to_string(p.gpus_per_node_used()) +
                                         " processes per node."};
    files.push_back({"launch_trl.sh", launch_file(p, name(), st, notes, body)});
    return files;
  }
};

const RegisterExporter registered{std::make_unique<TrlExporter>()};

}  // namespace
}  // namespace trainsim
