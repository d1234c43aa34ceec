// The megatron-deepspeed stack: Megatron-DeepSpeed's pretrain_gpt.py (DeepSpeed's pipeline engine and ZeRO under
// Megatron's layers), for plans priced with the megatron-deepspeed framework (--to deepspeed with tp or pp > 1, and
// schedulers of such plans). Its argument names are the fork's own (deepspeedai/Megatron-DeepSpeed
// megatron/arguments.py, commit 4efb479): older Megatron names, --zero-stage, and DeepSpeed's --deepspeed /
// --deepspeed_config from deepspeed.add_config_arguments.
#include <algorithm>
#include <cmath>

#include "launch_stack.hpp"
#include "vendor.hpp"

namespace trainsim {
namespace {

using namespace export_detail;

std::vector<Argument> megatron_deepspeed_arguments(const ExportPlan& p) {
  const ModelSpec& m = p.model;
  const TrainingSpec& t = p.training;
  const ParallelLayout& l = p.layout;
  std::vector<Argument> a;
  const AddArgument add{a};
  auto s = [](long long v) { return std::to_string(v); };
  add("--tensor-model-parallel-size " + s(l.tp));
  add("--pipeline-model-parallel-size " + s(l.pp));
  if (l.pp == 1) add("--no-pipeline-parallel", "pp 1: no DeepSpeed pipeline engine");
  if (l.sequence_parallel && l.tp > 1) add("--sequence-parallel");
  for (auto& arg : megatron_shape_arguments(p)) a.push_back(std::move(arg));
  if (m.num_key_value_heads != m.num_attention_heads) add("--num-key-value-heads " + s(m.num_key_value_heads));
  if (m.mlp == MlpKind::Gated) add("--swiglu");
  add(std::string("--normalization ") + (m.norm == NormKind::RmsNorm ? "rmsnorm" : "layernorm"));
  if (m.position_embedding == PositionEmbedding::Rope) {
    add("--use-rotary-position-embeddings");
    if (m.rope_theta > 0) add("--rotary-position-embeddings-theta " + s(std::llround(m.rope_theta)), "rope_theta");
  }
  // Megatron-DeepSpeed adds learned absolute positions unless told not to (add_position_embedding defaults to True),
  // which rotary and position-free models do not have.
  if (m.position_embedding != PositionEmbedding::Learned) add("--no-position-embedding");
  if (!m.tie_word_embeddings) add("--untie-embeddings-and-output-weights");
  if (!m.attention_bias && !m.mlp_bias) add("--disable-bias-linear");
  add("--attention-dropout " + number_text(m.attention_dropout));
  add("--hidden-dropout " + number_text(m.hidden_dropout));
  if (m.is_moe()) {
    add("--num-experts " + s(m.num_experts));
    add("--moe-expert-parallel-size " + s(l.ep));
    add("--topk " + s(m.num_experts_per_tok));
  }
  if (t.precision == Precision::Bf16 || t.precision == Precision::Fp8) add("--bf16");
  if (t.precision == Precision::Fp16) add("--fp16");
  add(std::string("--optimizer ") + (t.optimizer == OptimizerKind::Sgd ? "sgd" : "adam"));
  if (wgrad_accumulation_bytes(t, l) == 0)
    add("--no-gradient-accumulation-fusion", "DeepSpeed's engine keeps the gradients: accumulated outside the GEMM, as priced");
  switch (t.recompute) {
    case Recompute::Full:
      add("--recompute-granularity full");
      add("--recompute-method uniform");
      add("--deepspeed-activation-checkpointing", "DeepSpeed's checkpointing of Megatron's layers");
      break;
    case Recompute::Selective: add("--recompute-granularity selective", "attention core"); break;
    case Recompute::None: break;
  }
  if (t.flash_attention) add("--use-flash-attn-v2");
  if (const long long iters = p.train_iterations(); iters > 0) add("--train-iters " + s(iters), "train_tokens / (global batch x seq length)");
  if (p.checkpoint_interval_steps > 0) add("--save-interval " + s(p.checkpoint_interval_steps), "steps between checkpoints (trainsim reliability)");
  add("--lr \"${LR:-3.0e-4}\"", "not planned by trainsim: set yours");
  add("--data-path \"${DATA_PATH:-my-corpus_text_document}\"", "your preprocessed dataset prefix (tools/preprocess_data.py)");
  add("--tokenizer-type NullTokenizer", "replace with the model's tokenizer, e.g. --tokenizer-type HFTokenizer --tokenizer-model PATH");
  add("--vocab-size " + s(m.vocab_size), "with NullTokenizer only");
  add("--zero-stage " + s(deepspeed_zero_stage(t)));
  add("--deepspeed");
  add("--deepspeed_config \"$CONFIG_DIR/ds_config.json\"");
  return a;
}

StackLaunch megatron_deepspeed_stack(const ExportPlan& p) {
  const ParallelLayout& l = p.layout;
  StackLaunch s;
  s.stack = "Megatron-DeepSpeed pretrain_gpt.py";
  s.needs = "the checkout at $MEGATRON_DS_DIR (default /workspace/Megatron-DeepSpeed) and DeepSpeed";
  s.files = {{"ds_config.json", deepspeed_config_json(p, "deepspeed")}};
  s.program = "\"$MEGATRON_DS_DIR/pretrain_gpt.py\"";
  s.args_name = "MEGATRON_DS_ARGS";
  s.args = megatron_deepspeed_arguments(p);
  s.setup = {"MEGATRON_DS_DIR=\"${MEGATRON_DS_DIR:-/workspace/Megatron-DeepSpeed}\""};
  if (l.tp > 1) {
    s.env.emplace_back("CUDA_DEVICE_MAX_CONNECTIONS", "1");
    s.env_notes.push_back("tp > 1: one device work queue keeps Megatron's TP communication in issue order");
  }
  if (l.pp > 1 && deepspeed_zero_stage(p.training) >= 2) s.warnings.push_back("DeepSpeed's pipeline engine supports ZeRO stage 0 or 1 only");
  if (l.vpp > 1) s.warnings.push_back("DeepSpeed's pipeline engine runs one model chunk per rank: no interleaved (vpp " + std::to_string(l.vpp) + ") schedule");
  if (l.cp > 1) s.warnings.push_back("cp " + std::to_string(l.cp) + ": Megatron-DeepSpeed has no context parallelism (--ds-sequence-parallel-size is Ulysses)");
  if (p.training.uses_adapters() || p.training.mode == TrainingMode::Dpo)
    s.warnings.push_back(std::string("pretrain_gpt.py trains every weight with the language-model loss: ") + to_string(p.training.mode) + " is not in it");
  warn_master_copy(p, "Megatron-DeepSpeed", s.warnings);
  return s;
}

const RegisterStack stack{"megatron-deepspeed", megatron_deepspeed_stack};

}  // namespace
}  // namespace trainsim
