// Korthikanti et al. 2022, Figure 1: per-GPU model states and activations of the 22B/175B/530B/1T runs.
// The figure counts transformer-layer parameters at 18 bytes (fp16 weights, fp32 gradients, fp32 master
// and Adam moments) and the activations of the first pipeline stage.
#include <doctest/doctest.h>

#include "tests/approx.hpp"

#include <cmath>
#include <cstdio>

#include "calibrate/reference_cases.hpp"
#include "models/memory/memory.hpp"
#include "models/scenario/scenario.hpp"
#include "tests/models/reference_data.hpp"

using namespace trainsim;
using Json = nlohmann::json;

TEST_CASE("Korthikanti 2022 Fig. 1 memory within 1%") {
  auto ref = test::reference_file("korthikanti2022.json");
  if (!ref) {
    MESSAGE("skipped: ../shared/reference/korthikanti2022.json not found");
    return;
  }
  const double GiB = 1073741824.0;
  int checked = 0;
  for (const auto& c : (*ref)["cases"]) {
    if (!c["measured"].contains("memory_gib")) continue;
    CAPTURE(c["id"].get<std::string>());
    const Json& measured = c["measured"]["memory_gib"];
    Scenario s = parse_scenario(reference_case_scenario(c));
    MemoryModel mm(s.model, s.training, s.hardware);
    const ParallelLayout& p = s.parallel;

    // Model states of the transformer layers on one GPU (the figure leaves embeddings out).
    const int layers = layers_in_stage(s.model.num_hidden_layers, p, 0);
    const double layer_params = layers * (mm.params.dense_layer.attention_split + mm.params.dense_layer.mlp_split) / p.tp;
    const ModelStates states = full_model_states(layer_params, 0, p.dp, p.dp, s.training, gradient_precision(s.training, p));
    CHECK(states.total() / GiB == trainsim::test::approx(measured["model_states"].get<double>()).epsilon(0.01));

    // Activations with sequence parallelism and selective recompute, first stage.
    const double sel = mm.stage(p, 0).activations_layers / GiB;
    CHECK(sel == trainsim::test::approx(measured["activations_sp_selective"].get<double>()).epsilon(0.01));

    // The same run with tensor parallelism only and no recompute.
    TrainingSpec t = s.training;
    t.recompute = Recompute::None;
    ParallelLayout q = p;
    q.sequence_parallel = false;
    const double none = MemoryModel(s.model, t, s.hardware).stage(q, 0).activations_layers / GiB;
    CHECK(none == trainsim::test::approx(measured["activations_no_recompute_tp_only"].get<double>()).epsilon(0.01));
    std::printf("%-32s states %.2f/%.2f  act(sp+sel) %.2f/%.2f  act(tp) %.2f/%.2f GiB (model/paper)\n", c["id"].get<std::string>().c_str(),
                states.total() / GiB, measured["model_states"].get<double>(), sel, measured["activations_sp_selective"].get<double>(), none,
                measured["activations_no_recompute_tp_only"].get<double>());
    ++checked;
  }
  CHECK(checked == 4);
}
