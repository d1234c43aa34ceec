// --to megatron: Megatron-LM's pretrain_gpt.py (megatron-core) argument list for the plan, launched with torchrun
// on every node (pretrain_gpt.sh); and the megatron-core stack that launchers and schedulers start.
#include "launch_stack.hpp"
#include "vendor.hpp"

namespace trainsim {
namespace {

using namespace export_detail;

StackLaunch megatron_stack(const ExportPlan& p) {
  const VendorLaunch& v = vendor_launch(p.hardware.gpu);
  StackLaunch s;
  s.stack = v.megatron_stack + " pretrain_gpt.py (megatron-core)";
  s.needs = "the checkout at $MEGATRON_DIR (default " + v.megatron_dir + ")";
  s.program = "\"$MEGATRON_DIR/pretrain_gpt.py\"";
  s.args_name = "MEGATRON_ARGS";
  s.args = megatron_arguments(p);
  s.setup = {"MEGATRON_DIR=\"${MEGATRON_DIR:-" + v.megatron_dir + "}\""};
  for (const LaunchVariable& var : launch_environment(p)) {
    s.env.emplace_back(var.name, var.value);
    s.env_notes.push_back(var.why);
  }
  s.warnings = megatron_warnings(p);
  if (v.vendor == "huawei") s.warnings.push_back("MindSpeed-LLM takes Megatron-LM's arguments; check its docs for the flags of your release");
  return s;
}

class MegatronExporter final : public Exporter {
 public:
  std::string name() const override { return "megatron"; }
  std::string description() const override { return "Megatron-LM pretrain_gpt.py argument list + torchrun launch (pretrain_gpt.sh)"; }
  std::string framework_for(const ExportPlan&) const override { return "megatron-core"; }

  std::vector<ExportFile> render(const ExportPlan& p) const override {
    const StackLaunch st = megatron_stack(p);
    const int nodes = p.hardware.num_nodes;
    const std::vector<std::string> body = torchrun_script_body(p, st);
    const std::vector<std::string> notes{
        "Run this script on every node (" + std::to_string(nodes) + (nodes == 1 ? " node" : " nodes") + "; torchrun's c10d rendezvous pairs them up).",
        "The data-parallel size is implied: GPUs / (tp x pp x cp) = " + std::to_string(p.layout.dp) + "."};
    return {{"pretrain_gpt.sh", launch_file(p, name(), st, notes, body)}};
  }
};

const RegisterExporter registered{std::make_unique<MegatronExporter>()};
const RegisterStack stack{"megatron-core", megatron_stack};

}  // namespace
}  // namespace trainsim
