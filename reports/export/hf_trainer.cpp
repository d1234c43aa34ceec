// --to hf-trainer: a Hugging Face Trainer run launched with accelerate: training_args.json (TrainingArguments, read by
// HfArgumentParser), accelerate_config.yaml (DDP, FSDP or DeepSpeed as priced), ds_config.json under DeepSpeed, and
// launch_accelerate.sh; and the transformers and fsdp stacks (the same train.py under torchrun, FSDP carried in
// TrainingArguments' own fsdp / fsdp_config) that launchers and schedulers start.
#include "hugging_face.hpp"
#include "launch_stack.hpp"
#include "models/core/json_reader.hpp"
#include "vendor.hpp"

namespace trainsim {
namespace {

using namespace export_detail;

// What the user's train.py must do that TrainingArguments cannot say.
std::vector<std::string> trainer_script_notes(const ExportPlan& p) {
  const TrainingSpec& t = p.training;
  std::vector<std::string> n;
  n.push_back("train.py is yours: HfArgumentParser(TrainingArguments).parse_json_file(sys.argv[1]), the model, the dataset, Trainer(...).train().");
  // The presets' weights: a frozen base in the training precision; transformers autocasts fp32 parameters at each use, FSDP
  // keeps fp32 shards cast at each gather.
  if (t.uses_adapters())
    n.push_back("Load the frozen base in " + hf_load_dtype(p) + " (torch_dtype), as priced; the adapters train in fp32.");
  else if (!t.master_weights)
    n.push_back("Load the model in " + hf_load_dtype(p) + " (torch_dtype), as priced: no master copy, the optimizer steps the 16-bit "
                "parameters and keeps its states in their dtype.");
  else if (p.framework == "transformers")
    n.push_back("Load the model in float32 (torch_dtype=torch.float32): the step was priced with fp32 weights under bf16 autocast.");
  else if (p.framework == "fsdp")
    n.push_back("Load the model in float32 (torch_dtype=torch.float32): the step was priced with fp32 FSDP shards cast to the training "
                "precision at each gather.");
  if (t.uses_adapters())
    n.push_back(std::string(to_string(t.mode)) + ": wrap the model with peft LoraConfig(r=" + std::to_string(t.lora.rank) + ", lora_alpha=" +
                number_text(t.lora.alpha) + ", target_modules=[" + join(t.lora.target_modules) + "])" +
                (t.quantized_base() ? " over a 4-bit base (BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_quant_type=\"nf4\"))" : "") + ".");
  if (t.packing)
    n.push_back("Packing as priced: every sequence is " + std::to_string(t.seq_len) + " tokens; pack or group the dataset to that length in train.py.");
  n.push_back("learning_rate is the Trainer's default: trainsim does not plan it; set yours in training_args.json.");
  return n;
}

std::vector<std::string> trainer_warnings(const ExportPlan& p) {
  std::vector<std::string> w = hf_warnings(p);
  if (p.training.mode == TrainingMode::Dpo) w.push_back("DPO: the Trainer has no preference loss; --to trl writes a DPOTrainer run of this plan");
  return w;
}

// The transformers / fsdp stack: train.py under torchrun, FSDP from TrainingArguments (no accelerate config).
StackLaunch trainer_stack(const ExportPlan& p) {
  const ParallelLayout& l = p.layout;
  StackLaunch s;
  s.stack = "a Hugging Face Trainer train.py (TrainingArguments from training_args.json" +
            std::string(hf_parallel(p) == HfParallel::Fsdp ? ", FSDP " + fsdp_sharding_strategy(p) + ")" : ")");
  s.needs = "your train.py ($TRAIN_SCRIPT), which parses training_args.json with HfArgumentParser, and transformers with accelerate";
  s.files = {{"training_args.json", hf_training_arguments(p, true, "").dump(2) + "\n"}};
  s.program = "\"${TRAIN_SCRIPT:-train.py}\"";
  s.args_name = "TRAINER_ARGS";
  s.args = {{"\"$CONFIG_DIR/training_args.json\"", "micro-batch " + std::to_string(l.micro_batch_size) + " x dp " + std::to_string(l.dp) +
                                                        " x accumulation " + std::to_string(l.gradient_accumulation_steps) + " = global batch " +
                                                        std::to_string(p.training.global_batch_size)}};
  s.notes = trainer_script_notes(p);
  s.notes.push_back("training_args.json holds no comments (HfArgumentParser refuses unknown keys): the plan is in this file's header.");
  if (p.framework == "fsdp")
    s.notes.push_back("The fsdp preset was calibrated on llm-foundry's FSDP1 recipes; this launches the same sharding through the Trainer.");
  s.warnings = trainer_warnings(p);
  return s;
}

class HfTrainerExporter final : public Exporter {
 public:
  std::string name() const override { return "hf-trainer"; }
  std::string description() const override {
    return "Hugging Face Trainer: training_args.json + accelerate_config.yaml (DDP, FSDP or DeepSpeed) + launch_accelerate.sh";
  }
  // The Trainer is data parallel only; the transformers preset's layout check refuses tp, pp, cp and ep.
  std::string framework_for(const ExportPlan& p) const override { return hf_framework(p); }

  std::vector<ExportFile> render(const ExportPlan& p) const override {
    const bool deepspeed = hf_parallel(p) == HfParallel::DeepSpeed;
    const int nodes = p.hardware.num_nodes;
    std::vector<ExportFile> files;
    files.push_back({"training_args.json", hf_training_arguments(p, false, deepspeed ? "ds_config.json" : "").dump(2) + "\n"});
    files.push_back({"accelerate_config.yaml", accelerate_config_yaml(p, name())});
    if (deepspeed) files.push_back({"ds_config.json", hf_deepspeed_config(p, name())});

    StackLaunch st;
    st.stack = "a Hugging Face Trainer train.py under accelerate launch";
    st.needs = "your train.py ($TRAIN_SCRIPT), transformers" + std::string(deepspeed ? ", accelerate and DeepSpeed" : " and accelerate");
    st.notes = trainer_script_notes(p);
    st.warnings = trainer_warnings(p);
    std::vector<std::string> body;
    body.push_back("CONFIG_DIR=\"${CONFIG_DIR:-$(cd \"$(dirname \"$0\")\" && pwd)}\"  # where training_args.json and accelerate_config.yaml are");
    body.push_back("TRAIN_SCRIPT=\"$(realpath -m \"${TRAIN_SCRIPT:-train.py}\")\"  # resolved before moving into CONFIG_DIR");
    body.push_back("NODE_RANK=\"${NODE_RANK:-0}\"");
    if (nodes > 1) body.push_back(": \"${MASTER_ADDR:?set MASTER_ADDR to the address of the first node}\"");
    for (const auto& l : vendor_launch(p.hardware.gpu).setup_lines) body.push_back(l);
    body.push_back("cd \"$CONFIG_DIR\"  # training_args.json's relative paths (output_dir" + std::string(deepspeed ? ", deepspeed" : "") + ") resolve here");
    std::string array = bash_array("ACCELERATE_ARGS", accelerate_launch_arguments(p));
    array.pop_back();
    body.push_back(array);
    body.push_back("accelerate launch \"${ACCELERATE_ARGS[@]}\" \\");
    // HfArgumentParser reads a lone .json argument as the whole argument set: nothing else goes to train.py.
    body.push_back("  \"$TRAIN_SCRIPT\" \"$CONFIG_DIR/training_args.json\"");
    const std::vector<std::string> notes{
        "Run this script on every node (" + std::to_string(nodes) + (nodes == 1 ? " node" : " nodes") + "), with NODE_RANK 0.." +
            std::to_string(nodes - 1) + (nodes > 1 ? " and MASTER_ADDR the first node's address" : "") + ": accelerate starts " +
            std::to_string(p.gpus_per_node_used()) + " processes per node.",
        "training_args.json holds no comments (HfArgumentParser refuses unknown keys): the plan is in this file's header."};
    files.push_back({"launch_accelerate.sh", launch_file(p, name(), st, notes, body)});
    return files;
  }
};

const RegisterExporter registered{std::make_unique<HfTrainerExporter>()};
const RegisterStack transformers_stack{"transformers", trainer_stack};
const RegisterStack fsdp_stack{"fsdp", trainer_stack};

}  // namespace
}  // namespace trainsim
