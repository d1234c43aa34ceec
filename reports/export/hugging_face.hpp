#pragma once
// What the Hugging Face targets share (hf-trainer, trl, ms-swift's `swift` commands, the transformers and fsdp stacks):
// how the plan's data parallelism maps to DDP, FSDP or DeepSpeed, TrainingArguments' fields, accelerate's config file,
// and the framework these targets price a plan with. Field names follow huggingface/transformers training_args.py
// (commit 00349ae8), huggingface/accelerate commands/config/config_args.py, utils/dataclasses.py and commands/launch.py
// (commit 16cb6eb8).
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "export_registry.hpp"

namespace trainsim::export_detail {

// How a Hugging Face run spreads the plan over its GPUs.
enum class HfParallel { Single, Ddp, Fsdp, DeepSpeed };
HfParallel hf_parallel(const ExportPlan& plan);

// The framework preset hf-trainer, trl and ms-swift's HF path run a plan with: the plan's own when it is transformers, fsdp or
// deepspeed and the Trainer can run its ZeRO stage without DeepSpeed; DeepSpeed for ZeRO-1 and optimizer-only offload (FSDP
// has neither); transformers (DDP or FSDP) otherwise.
std::string hf_framework(const ExportPlan& plan);

// FSDP1's sharding strategy in accelerate's words: FULL_SHARD (ZeRO-3), SHARD_GRAD_OP (ZeRO-2), HYBRID_SHARD /
// HYBRID_SHARD_ZERO2 when the shards are replicated (dp_replicate > 1).
std::string fsdp_sharding_strategy(const ExportPlan& plan);

// TrainingArguments fields as priced, in the order a reader looks for them. `fsdp_in_arguments`: FSDP through
// TrainingArguments' own fsdp / fsdp_config (a torchrun launch); false: accelerate's config carries it. `deepspeed_path`:
// the value of `deepspeed` when the run uses DeepSpeed (empty: none written).
nlohmann::ordered_json hf_training_arguments(const ExportPlan& plan, bool fsdp_in_arguments, const std::string& deepspeed_path);

// TrainingArguments' fsdp_config as a JSON object (FSDP1 with the prefetch the step was priced with); `prefixed`: accelerate's
// "fsdp_" key names (ms-swift reads fsdp_version with the prefix; TrainingArguments strips it).
nlohmann::ordered_json hf_fsdp_config(const ExportPlan& plan, bool prefixed);
// TrainingArguments' fsdp option string, e.g. "full_shard auto_wrap".
std::string hf_fsdp_option(const ExportPlan& plan);

// ds_config.json for a Trainer-driven run: deepspeed_config_json with the optimizer's params set to "auto", so the Trainer
// fills them from TrainingArguments (transformers integrations/deepspeed.py trainer_config_process).
std::string hf_deepspeed_config(const ExportPlan& plan, const std::string& target);

// accelerate_config.yaml: the plan's machines and processes, mixed precision, and the FSDP plugin's or DeepSpeed's settings.
std::string accelerate_config_yaml(const ExportPlan& plan, const std::string& target);

// `accelerate launch` options: the config file, this node's rank, the main process (several nodes) and the DeepSpeed file
// (an absolute path: the config file's relative one resolves against the working folder).
std::vector<Argument> accelerate_launch_arguments(const ExportPlan& plan);

// What a Hugging Face run cannot express of the plan, or must be done by hand in the training script.
std::vector<std::string> hf_warnings(const ExportPlan& plan);

// A Hugging Face model id for placeholders: the preset's source when it names one ("Hugging Face org/name config.json"),
// else the preset name.
std::string hf_model_id(const ModelSpec& model);

// The dtype to load the model in (from_pretrained's torch_dtype) as priced: a LoRA / QLoRA base in the training precision
// (frozen), fully trained weights in float32 under the transformers and fsdp presets (autocast over fp32 parameters, fp32
// FSDP shards), in the training precision under DeepSpeed (which keeps its own fp32 master copy).
std::string hf_load_dtype(const ExportPlan& plan);

// TrainingArguments' optim for the plan's optimizer.
std::string hf_optim(const TrainingSpec& training);

// A YAML document from a JSON object: one `key: value` a line, values in JSON's flow syntax (valid YAML), with `notes`
// as trailing comments for the keys they name.
std::string yaml_from_json(const nlohmann::ordered_json& object, const std::vector<std::pair<std::string, std::string>>& notes);

}  // namespace trainsim::export_detail
