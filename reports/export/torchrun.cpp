// --to torchrun: the torchrun line that starts the plan's own stack on every node (launch_torchrun.sh), and the
// pytorch stack: a plain training loop (one GPU, or DDP across several).
#include "launch_stack.hpp"

namespace trainsim {
namespace {

using namespace export_detail;

StackLaunch pytorch_stack(const ExportPlan& p) {
  const ParallelLayout& l = p.layout;
  StackLaunch s;
  s.stack = "a plain PyTorch train.py (DistributedDataParallel across ranks)";
  s.needs = "your train.py ($TRAIN_SCRIPT)";
  s.program = "\"${TRAIN_SCRIPT:-train.py}\"";
  s.notes.push_back("As priced: micro-batch " + std::to_string(l.micro_batch_size) + " per GPU, " + std::to_string(l.gradient_accumulation_steps) +
                    " accumulation steps, global batch " + std::to_string(p.training.global_batch_size) + "; give them to train.py in its own flags.");
  if (p.training.recompute != Recompute::None) s.notes.push_back("Recompute as priced: wrap each layer in torch.utils.checkpoint.");
  return s;
}

class TorchrunExporter final : public Exporter {
 public:
  std::string name() const override { return "torchrun"; }
  std::string description() const override { return "torchrun launch of the plan's own stack on every node (launch_torchrun.sh)"; }

  std::vector<ExportFile> render(const ExportPlan& p) const override {
    const StackLaunch st = stack_launch(p, name());
    const int nodes = p.hardware.num_nodes;
    const std::vector<std::string> body = torchrun_script_body(p, st);
    const std::vector<std::string> notes{"Starts " + std::to_string(p.gpus_per_node_used()) + " processes per node on " + std::to_string(nodes) +
                                         (nodes == 1 ? " node" : " nodes") + "; run this same script on every node (c10d rendezvous at $MASTER_ADDR:29500).",
                                         "The stack is the plan's framework, " + p.framework + "."};
    std::vector<ExportFile> files = st.files;
    files.push_back({"launch_torchrun.sh", launch_file(p, name(), st, notes, body)});
    return files;
  }
};

const RegisterExporter registered{std::make_unique<TorchrunExporter>()};
const RegisterStack stack{"pytorch", pytorch_stack};

}  // namespace
}  // namespace trainsim
