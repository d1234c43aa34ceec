// Scenario parsing: presets, overrides, derivation of missing degrees, and errors that name the path.
#include <doctest/doctest.h>

#include "models/errors.hpp"
#include "models/scenario.hpp"

using namespace trainsim;
using Json = nlohmann::json;

namespace {
// The InputError a document raises (fails the test if none).
InputError error_of(const Json& doc) {
  try {
    parse_scenario(doc);
  } catch (const InputError& e) {
    return e;
  }
  FAIL("expected an InputError");
  return InputError("", "", "");
}

Json base() {
  return Json{{"model", "llama3-8b"},
              {"training", {{"seq_len", 4096}, {"global_batch_size", 64}}},
              {"hardware", {{"gpu", "h100-sxm-80gb"}, {"num_nodes", 2}}}};
}
}  // namespace

TEST_CASE("missing degrees and batch split are derived and recorded") {
  Scenario s = parse_scenario(base());
  CHECK(s.hardware.num_gpus == 16);
  CHECK(s.parallel.dp == 16);  // 16 GPUs / (tp 1 · pp 1 · cp 1)
  CHECK(s.parallel.micro_batch_size == 1);
  CHECK(s.parallel.gradient_accumulation_steps == 4);  // 64 / (1 · 16)
  bool recorded = false;
  for (const auto& d : s.defaults) recorded |= d.path == "/parallel/dp" && d.value == "16";
  CHECK(recorded);
}

TEST_CASE("accumulation given: micro-batch derived") {
  Json doc = base();
  doc["parallel"] = {{"tp", 2}, {"gradient_accumulation_steps", 2}};
  Scenario s = parse_scenario(doc);
  CHECK(s.parallel.dp == 8);
  CHECK(s.parallel.micro_batch_size == 4);  // 64 / (8 · 2)
}

TEST_CASE("GPU count derived from an explicit layout") {
  Json doc = base();
  doc["hardware"] = {{"gpu", "a100-sxm-80gb"}};
  doc["parallel"] = {{"tp", 8}, {"pp", 2}, {"dp", 4}};
  Scenario s = parse_scenario(doc);
  CHECK(s.hardware.num_gpus == 64);
  CHECK(s.hardware.num_nodes == 8);
}

TEST_CASE("preset with overrides") {
  Json doc = base();
  doc["model"] = {{"preset", "llama3-8b"}, {"num_hidden_layers", 16}};
  Scenario s = parse_scenario(doc);
  CHECK(s.model.num_hidden_layers == 16);
  CHECK(s.model.hidden_size == 4096);
  CHECK(s.model.name == "llama3-8b (modified)");
}

TEST_CASE("a pasted Hugging Face config: aliases read, extra keys noted") {
  Json doc = base();
  doc["model"] = {{"architectures", {"MixtralForCausalLM"}}, {"hidden_size", 4096}, {"intermediate_size", 14336},
                  {"num_attention_heads", 32}, {"num_hidden_layers", 32}, {"num_key_value_heads", 8},
                  {"num_local_experts", 8}, {"num_experts_per_tok", 2}, {"vocab_size", 32000}, {"rope_theta", 1e6},
                  {"sliding_window", nullptr}, {"router_aux_loss_coef", 0.02}, {"hidden_act", "silu"}};
  Scenario s = parse_scenario(doc);
  CHECK(s.model.num_experts == 8);
  CHECK(s.model.moe_intermediate_size == 14336);  // Mixtral's experts use intermediate_size
  REQUIRE(s.notes.size() == 1);
  CHECK(s.notes[0].find("router_aux_loss_coef") != std::string::npos);
}

TEST_CASE("errors name the JSON path, the value and what was expected") {
  SUBCASE("unknown preset lists the closest names") {
    Json doc = base();
    doc["model"] = "llama3-8bb";
    InputError e = error_of(doc);
    CHECK(e.path() == "/model");
    CHECK(e.hint().find("llama3-8b") != std::string::npos);
  }
  SUBCASE("wrong type") {
    Json doc = base();
    doc["training"]["seq_len"] = "long";
    InputError e = error_of(doc);
    CHECK(e.path() == "/training/seq_len");
    CHECK(e.value() == "\"long\"");
  }
  SUBCASE("typo in a strict section suggests the field") {
    Json doc = base();
    doc["training"]["recompte"] = "full";
    InputError e = error_of(doc);
    CHECK(e.path() == "/training/recompte");
    CHECK(e.hint().find("recompute") != std::string::npos);
  }
  SUBCASE("near miss of a model field is a typo, not an ignored key") {
    Json doc = base();
    doc["model"] = {{"preset", "llama3-8b"}, {"num_hiden_layers", 3}};
    CHECK(error_of(doc).path() == "/model/num_hiden_layers");
  }
  SUBCASE("tp must divide the KV heads") {
    Json doc = base();
    doc["parallel"] = {{"tp", 16}};
    InputError e = error_of(doc);
    CHECK(e.path() == "/parallel/tp");
    CHECK(e.expected().find("num_key_value_heads (8)") != std::string::npos);
  }
  SUBCASE("tp*pp*cp must divide the GPUs") {
    Json doc = base();
    doc["parallel"] = {{"tp", 2}, {"pp", 3}};
    CHECK(error_of(doc).path() == "/parallel");
  }
  SUBCASE("contradicting batch sizes") {
    Json doc = base();
    doc["parallel"] = {{"micro_batch_size", 2}, {"gradient_accumulation_steps", 3}};
    InputError e = error_of(doc);
    CHECK(e.path() == "/parallel/gradient_accumulation_steps");
    CHECK(e.expected().find("2 = ") == 0);  // 64 / (2 · 16) = 2
  }
  SUBCASE("interleaved schedule needs layers divisible by pp*vpp") {
    Json doc = base();
    doc["parallel"] = {{"pp", 4}, {"vpp", 3}};
    CHECK(error_of(doc).path() == "/parallel/vpp");  // 32 layers, pp·vpp = 12
  }
  SUBCASE("ZeRO-3 with pipeline parallelism") {
    Json doc = base();
    doc["training"]["zero_stage"] = 3;
    doc["parallel"] = {{"pp", 2}};
    CHECK(error_of(doc).path() == "/training/zero_stage");
  }
  SUBCASE("expert parallel on a dense model") {
    Json doc = base();
    doc["parallel"] = {{"ep", 2}};
    CHECK(error_of(doc).path() == "/parallel/ep");
  }
  SUBCASE("unit of the wrong kind") {
    Json doc = base();
    doc["hardware"]["gpu"] = {{"preset", "h100-sxm-80gb"}, {"memory_bandwidth", "80GiB"}};
    InputError e = error_of(doc);
    CHECK(e.path() == "/hardware/gpu/memory_bandwidth");
    CHECK(e.hint().find("GiB") != std::string::npos);
  }
  SUBCASE("section given as a string that is not a file") {
    Json doc = base();
    doc["training"] = "my-training";
    CHECK(error_of(doc).path() == "/training");
  }
}

TEST_CASE("the resolved scenario re-parses to the same scenario") {
  Scenario s = parse_scenario(base());
  Json again = to_json(s);
  Scenario t = parse_scenario(again);
  CHECK(to_json(t) == again);
}
