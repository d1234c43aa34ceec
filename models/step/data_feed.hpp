#pragma once
// Does the data feed keep up with the GPUs? From the step time: the sequences and tokens a second the job consumes,
// the bytes each node reads from the dataset's storage tier (its share, as checkpoints share a tier) and the
// sequences a second its DataLoader workers prepare (tokenizing raw text, or a given CPU time per sample). The
// feed runs ahead of the GPUs (workers and prefetch), so it starves them only when its steady rate is lower than
// what they consume; then the step is bound by the feed.
#include <nlohmann/json.hpp>
#include <string>

#include "models/scenario/spec.hpp"

namespace trainsim {

class JsonReader;

struct DataFeedEstimate {
  std::string storage;                // the tier read from
  double bytes_per_sample = 0;        // one sequence as stored
  double samples_per_s = 0;           // sequences a second the whole job consumes at the step time
  double tokens_per_s = 0;
  // Per node.
  double needed_samples_per_s = 0;    // what one node's GPUs consume
  double read_bytes_per_s = 0;        // what that takes from storage
  double storage_bytes_per_s = 0;     // the node's share of the tier
  double worker_samples_per_s = 0;    // what the node's workers prepare; 0: not bound (memory-mapped ids)
  double headroom = 0;                // supply / need of the tighter of the two (>= 1: the feed keeps up)
  std::string bottleneck;             // "storage" or "workers": the tighter one
  bool starves = false;               // headroom < 1
  double feed_bound_step_s = 0;       // the step when the feed is slower than the GPUs (else the step)
};

// Megatron's indexed datasets store ids as uint16 below 65,500 tokens of vocabulary, int32 above
// (megatron/core/datasets/indexed_dataset.py, DType.optimal_dtype); raw English text averages about 4 bytes a
// token (OpenAI's tokenizer guide: a token is about 4 characters).
double default_bytes_per_token(DataFormat format, int vocab_size);

DataFeedSpec parse_data_feed(const nlohmann::json& section, const std::string& path, std::vector<AppliedDefault>* defaults);
nlohmann::json to_json(const DataFeedSpec& d);
DataFeedEstimate estimate_data_feed(const Scenario& s, double step_s);
nlohmann::json to_json(const DataFeedEstimate& e);
// "reads 1.2 MB/s a node of parallel-fs's 250 GB/s; workers prepare 8.0K sequences/s against 12 needed: keeps up (x205)"
std::string data_feed_line(const DataFeedEstimate& e);

}  // namespace trainsim
