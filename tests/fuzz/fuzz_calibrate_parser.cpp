// libFuzzer target for one calibrate parser, chosen at build time (TRAINSIM_FUZZ_CHECK: check_training_log,
// check_nccl or check_gemm): training logs (Megatron-LM, torchtitan, PyTorch), nccl-tests output, GEMM CSV tables.
// The parser's promises (tests/calibrate/parser_invariants.hpp: no crash, only InputError as an exception, no NaN,
// infinite, negative or zero measurement accepted, every skipped line counted with a reason, messages printable)
// must hold; a broken one aborts, which libFuzzer reports.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "tests/calibrate/parser_invariants.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string problem = trainsim::TRAINSIM_FUZZ_CHECK(std::string_view(reinterpret_cast<const char*>(data), size));
  if (!problem.empty()) {
    std::fprintf(stderr, "broken promise: %s\n", problem.c_str());
    std::abort();
  }
  return 0;
}
