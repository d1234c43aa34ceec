#include "models/step/data_feed.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "models/core/json_reader.hpp"
#include "models/core/units.hpp"

namespace trainsim {

namespace {

// Plausible ranges of the section's fields.
constexpr QuantityRange kBytesPerSample{1, 1e10};         // 1 B to 10 GB a sequence (video clips)
constexpr QuantityRange kCpuPerSample{1e-6, 3600};        // 1 us to an hour of a worker's time
constexpr QuantityRange kTokenizeRate{1e3, 1e10};         // tokens a second one worker tokenizes
constexpr int kMaxWorkersPerGpu = 256;

const char* to_string(DataFormat f) { return f == DataFormat::Text ? "text" : "tokens"; }

}  // namespace

double default_bytes_per_token(DataFormat format, int vocab_size) {
  if (format == DataFormat::Text) return 4;
  return vocab_size < 65500 ? 2 : 4;
}

DataFeedSpec parse_data_feed(const Json& section, const std::string& path, std::vector<AppliedDefault>* defaults) {
  if (!section.is_object()) throw InputError(path, json_value_text(section), "an object such as {\"storage\": \"parallel-fs\", \"format\": \"tokens\"}");
  DataFeedSpec d;
  d.given = true;
  JsonReader r(section, path, defaults);
  d.storage = read_storage_choice(r, "storage", StorageChoice{}, "a shared parallel file system, 2 TB/s aggregate");
  const std::string format = r.get_enum("format", {"tokens", "text"}, "tokens", "pre-tokenized ids, memory-mapped (Megatron indexed dataset)");
  d.format = format == "text" ? DataFormat::Text : DataFormat::Tokens;
  d.bytes_per_token = r.get_number("bytes_per_token", 0, "", 0.1, 64);
  if (r.has("bytes_per_sample")) d.bytes_per_sample = r.get_quantity("bytes_per_sample", Quantity::Bytes, 0, "", kBytesPerSample);
  if (r.has("cpu_per_sample")) d.cpu_per_sample_s = r.get_quantity("cpu_per_sample", Quantity::Time, 0, "", kCpuPerSample);
  d.tokenize_tokens_per_s = r.get_quantity("tokenize_rate", Quantity::Count, d.tokenize_tokens_per_s,
                                           d.format == DataFormat::Text && d.cpu_per_sample_s <= 0
                                               ? "1M tokens/s a worker (a Rust BPE tokenizer on one core)"
                                               : "",
                                           kTokenizeRate);
  d.workers_per_gpu = r.get_int("workers_per_gpu", d.workers_per_gpu, "2 DataLoader workers a GPU (Megatron --num-workers)", 0, kMaxWorkersPerGpu);
  r.reject_unknown();
  return d;
}

Json to_json(const DataFeedSpec& d) {
  Json storage = d.storage.aggregate_bandwidth > 0 || d.storage.per_node_bandwidth > 0 || d.storage.concurrent_jobs != 1
                     ? Json{{"tier", d.storage.tier}, {"concurrent_jobs", d.storage.concurrent_jobs}}
                     : Json(d.storage.tier);
  if (d.storage.aggregate_bandwidth > 0) storage["aggregate_bandwidth"] = d.storage.aggregate_bandwidth;
  if (d.storage.per_node_bandwidth > 0) storage["per_node_bandwidth"] = d.storage.per_node_bandwidth;
  Json j = {{"storage", storage}, {"format", to_string(d.format)}, {"tokenize_rate", d.tokenize_tokens_per_s}, {"workers_per_gpu", d.workers_per_gpu}};
  if (d.bytes_per_token > 0) j["bytes_per_token"] = d.bytes_per_token;
  if (d.bytes_per_sample > 0) j["bytes_per_sample"] = d.bytes_per_sample;
  if (d.cpu_per_sample_s > 0) j["cpu_per_sample"] = d.cpu_per_sample_s;
  return j;
}

DataFeedEstimate estimate_data_feed(const Scenario& s, double step_s) {
  const DataFeedSpec& d = s.data;
  const TrainingSpec& t = s.training;
  const HardwareSpec& h = s.hardware;
  DataFeedEstimate e;
  e.storage = d.storage.tier;
  const int nodes = std::max(1, h.num_nodes);
  const int gpus_per_node = std::max(1, std::min(h.gpus_per_node, h.num_gpus));
  const double bytes_per_token = d.bytes_per_token > 0 ? d.bytes_per_token : default_bytes_per_token(d.format, s.model.vocab_size);
  e.bytes_per_sample = d.bytes_per_sample > 0 ? d.bytes_per_sample : bytes_per_token * t.seq_len;
  const double samples_per_step = static_cast<double>(t.global_batch_size) * t.sequences_per_sample();
  if (!(step_s > 0)) return e;
  e.samples_per_s = samples_per_step / step_s;
  e.tokens_per_s = e.samples_per_s * t.seq_len;
  e.needed_samples_per_s = e.samples_per_s / nodes;
  e.read_bytes_per_s = e.needed_samples_per_s * e.bytes_per_sample;
  e.storage_bytes_per_s = shared_bandwidth(d.storage, nodes, "data storage") / nodes;
  // A worker's time per sequence: the given CPU time, or tokenizing raw text; memory-mapped ids cost next to nothing.
  const double cpu_s = d.cpu_per_sample_s > 0 ? d.cpu_per_sample_s
                       : d.format == DataFormat::Text ? t.seq_len / d.tokenize_tokens_per_s
                                                     : 0.0;
  const double storage_headroom = e.storage_bytes_per_s / e.read_bytes_per_s;
  double worker_headroom = std::numeric_limits<double>::infinity();
  if (cpu_s > 0 && d.workers_per_gpu > 0) {
    e.worker_samples_per_s = d.workers_per_gpu * gpus_per_node / cpu_s;
    worker_headroom = e.worker_samples_per_s / e.needed_samples_per_s;
  }
  e.bottleneck = worker_headroom < storage_headroom ? "workers" : "storage";
  e.headroom = std::min(storage_headroom, worker_headroom);
  e.starves = e.headroom < 1;
  e.feed_bound_step_s = e.starves ? step_s / e.headroom : step_s;
  if (cpu_s > 0 && d.workers_per_gpu == 0) {
    // num_workers 0: the main process prepares each GPU's sequences between steps, not overlapped with them.
    const double load_s = samples_per_step / (static_cast<double>(nodes) * gpus_per_node) * cpu_s;
    e.worker_samples_per_s = gpus_per_node / cpu_s;
    e.bottleneck = "main process";
    e.feed_bound_step_s = std::max(e.feed_bound_step_s, step_s + load_s);
    e.headroom = std::min(e.headroom, step_s / (step_s + load_s));
    e.starves = true;
  }
  return e;
}

Json to_json(const DataFeedEstimate& e) {
  return {{"storage", e.storage},
          {"bytes_per_sample", e.bytes_per_sample},
          {"samples_per_s", e.samples_per_s},
          {"tokens_per_s", e.tokens_per_s},
          {"per_node",
           {{"samples_per_s", e.needed_samples_per_s},
            {"read_bytes_per_s", e.read_bytes_per_s},
            {"storage_bytes_per_s", e.storage_bytes_per_s},
            {"worker_samples_per_s", e.worker_samples_per_s > 0 ? Json(e.worker_samples_per_s) : Json(nullptr)}}},
          {"headroom", e.headroom},
          {"bottleneck", e.bottleneck},
          {"starves", e.starves},
          {"feed_bound_step_s", e.feed_bound_step_s}};
}

std::string data_feed_line(const DataFeedEstimate& e) {
  std::string out = format_count(e.needed_samples_per_s) + " sequences/s a node (" + format_bandwidth(e.read_bytes_per_s) +
                    " from " + e.storage + ", whose share is " + format_bandwidth(e.storage_bytes_per_s) + ")";
  if (e.worker_samples_per_s > 0) out += "; workers prepare " + format_count(e.worker_samples_per_s) + " a second";
  if (!e.starves) return out + ": keeps up (" + (e.headroom >= 1000 ? format_count(e.headroom) : format_number(e.headroom, 3)) + "x what the GPUs consume, " + e.bottleneck + " the tighter)";
  return out + ": STARVES the GPUs (" + e.bottleneck + " bound: a step takes " + format_seconds(e.feed_bound_step_s) + ")";
}

}  // namespace trainsim
