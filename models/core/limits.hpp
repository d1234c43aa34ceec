#pragma once
// The plausible range of every scenario input, in one place. A value outside its range is an input error
// (JSON path, value, the range), never a silent overflow: with these bounds every product the models form
// of counts (GPUs, batch splits, tokens) fits in 64 bits and every time, memory and cost they derive is
// finite. Bounds are generous (about ten times the largest known system or run) and documented in
// scenarios/FORMAT.md; the reasons are beside each.
#include <limits>

#include "models/core/units.hpp"

namespace trainsim::limits {

// Cluster size: the largest announced training clusters hold ~100-200K GPUs.
constexpr int kMaxGpus = 1 << 20;               // 1,048,576
constexpr int kMaxNodes = 1 << 20;
// GPUs per node (one NVLink domain counts as a node): GB200 NVL72 has 72, NVL576 576.
constexpr int kMaxGpusPerNode = 1024;
constexpr int kMaxNicsPerNode = 1024;
// A parallel degree cannot exceed the GPUs; virtual stages cannot exceed layers.
constexpr int kMaxDegree = kMaxGpus;
// Batch: sequences per optimizer step. Published LLM runs use up to ~16K sequences (Llama 3: 16M tokens
// of 1K-8K); 2^30 keeps micro x dp x accumulation products far inside 64 bits.
constexpr int kMaxGlobalBatch = 1 << 30;
constexpr int kMaxMicroBatch = 1 << 20;
// Tokens per sequence: 16M (published long-context training reaches 1-10M).
constexpr int kMaxSeqLen = 1 << 24;
// Model shape: the largest published dense models have ~100-200 layers, hidden 16-25K, vocab ~256K.
constexpr int kMaxLayers = 10000;
constexpr int kMaxHidden = 1 << 20;
constexpr int kMaxHeads = 1 << 16;
constexpr int kMaxHeadDim = 1 << 16;
constexpr int kMaxIntermediate = 1 << 24;
constexpr int kMaxVocab = 1 << 24;
constexpr int kMaxPositions = 1 << 30;
constexpr int kMaxExperts = 1 << 16;
// Training amount: Llama 3 trained on 15.6T tokens; 1e17 is thousands of times beyond any run.
constexpr double kMaxTrainTokens = 1e17;
constexpr double kMaxDatasetSamples = 1e15;
constexpr double kMaxEpochs = 1e6;

// Framework traits (training.framework). Collective buckets: 1e13 elements is ten times the parameters of
// the largest published models; a launch gap of 1 ms is about thirty times the measured eager PyTorch one.
constexpr double kMaxBucketElements = 1e13;
constexpr double kMaxLaunchGapUs = 1000;
constexpr double kMaxModuleFetchUs = 100000;  // 0.1 s of host time per module and pass
constexpr double kMaxGradientPasses = 10;     // memory-bound passes over the gradients once per step
constexpr double kMaxBucketHiddenSquared = 1e4;  // bucket sizes as multiples of hidden_size² (DeepSpeed "auto": 0.9-1)
constexpr double kMaxWeightPassesPerStep = 100;  // memory passes over a weight per step (peft's merged expert adapters: 12.5)
constexpr double kMaxKernelsPerOp = 10000;  // kernels one op of a layer launches per pass (transformers' MoE dispatch: 50)
constexpr int kMaxGemmStreams = 1024;    // CUDA streams a grouped GEMM spreads its per-expert calls over
constexpr double kMaxExpertLoadCv = 100;  // an expert's token count's coefficient of variation under a router

// Hardware, in SI units.
inline constexpr QuantityRange kGpuMemory{1073741824.0, 17592186044416.0};   // 1 GiB .. 16 TiB
inline constexpr QuantityRange kGpuMemoryBandwidth{1e9, 1e15};              // 1 GB/s .. 1 PB/s
inline constexpr QuantityRange kGpuPeakFlops{1e11, 1e18};                   // 0.1 TFLOP/s .. 1 EFLOP/s
inline constexpr QuantityRange kGpuPower{1, 1e5};                           // 1 W .. 100 kW
inline constexpr QuantityRange kPricePerGpuHour{0, 1e4, true};              // (0, $10,000]
inline constexpr QuantityRange kFabricBandwidth{1e6, 1e14};                 // 1 MB/s .. 100 TB/s per GPU or NIC
inline constexpr QuantityRange kFabricLatency{1e-9, 1};                     // 1 ns .. 1 s
inline constexpr QuantityRange kHostMemory{1073741824.0, 1125899906842624.0};  // 1 GiB .. 1 PiB per node

}  // namespace trainsim::limits
