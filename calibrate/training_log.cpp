#include "training_log.hpp"

#include <algorithm>
#include <cmath>

#include "models/core/statistics.hpp"
#include "models/core/units.hpp"

namespace trainsim {
namespace {

// A hand-written scanner: every search below walks the line left to right a bounded number of times (each
// keyword search is O(line x keyword); the digit and number runs scanned after different keyword occurrences
// never overlap, because they hold no keyword letters), nothing recurses, and numbers are read by
// read_number/read_count, which refuse anything longer than kMaxNumberChars.

constexpr std::size_t npos = std::string_view::npos;

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_word(char c) { return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }
char lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

bool starts_with_at(std::string_view line, std::size_t pos, std::string_view key, bool icase) {
  if (pos > line.size() || line.size() - pos < key.size()) return false;
  for (std::size_t i = 0; i < key.size(); ++i)
    if (icase ? lower(line[pos + i]) != lower(key[i]) : line[pos + i] != key[i]) return false;
  return true;
}

bool word_start(std::string_view line, std::size_t pos) { return pos == 0 || !is_word(line[pos - 1]); }

// The first position >= from where `key` starts a word (regex \bkey), or npos.
std::size_t find_word(std::string_view line, std::string_view key, std::size_t from = 0, bool icase = false) {
  for (std::size_t p = from; p < line.size() && line.size() - p >= key.size(); ++p)
    if (word_start(line, p) && starts_with_at(line, p, key, icase)) return p;
  return npos;
}

std::size_t skip_spaces(std::string_view line, std::size_t i) {
  while (i < line.size() && is_space(line[i])) ++i;
  return i;
}

std::size_t skip_digits(std::string_view line, std::size_t i) {
  while (i < line.size() && is_digit(line[i])) ++i;
  return i;
}

// The field after a key: blanks skipped, then everything up to the next blank or `stop`.
std::string_view field_after(std::string_view line, std::size_t pos, char stop = ' ') {
  const std::size_t b = skip_spaces(line, pos);
  std::size_t e = b;
  while (e < line.size() && !is_space(line[e]) && line[e] != stop) ++e;
  return line.substr(b, e - b);
}

// A positive measurement, scaled (ms -> s, MiB -> bytes); the scaled value must stay finite and positive.
std::string positive_field(std::string_view what, std::string_view text, double scale, double* out, bool thousands = false) {
  double v = 0;
  std::string problem = read_positive(text, &v, thousands);
  if (problem.empty() && !(std::isfinite(v * scale) && v * scale > 0)) problem = "is out of range";
  if (!problem.empty()) return field_problem(what, text, problem);
  *out = v * scale;
  return "";
}

std::string count_field(std::string_view what, std::string_view text, long long* out) {
  const std::string problem = read_count(text, out);
  return problem.empty() ? problem : field_problem(what, text, problem);
}

// Megatron-LM: "iteration   12/  100 |" (regex \biteration\s+(\d+)\s*/\s*\d+\s*\|); the digits of the
// iteration number, whatever their length (read_count judges them).
bool megatron_iteration(std::string_view line, std::string_view* digits) {
  for (std::size_t p = find_word(line, "iteration"); p != npos; p = find_word(line, "iteration", p + 1)) {
    std::size_t i = p + 9;
    if (i >= line.size() || !is_space(line[i])) continue;
    i = skip_spaces(line, i);
    const std::size_t d = i;
    i = skip_digits(line, i);
    if (i == d) continue;
    const std::size_t d_end = i;
    i = skip_spaces(line, i);
    if (i >= line.size() || line[i] != '/') continue;
    i = skip_spaces(line, i + 1);
    const std::size_t t = i;
    i = skip_digits(line, i);
    if (i == t) continue;
    i = skip_spaces(line, i);
    if (i >= line.size() || line[i] != '|') continue;
    *digits = line.substr(d, d_end - d);
    return true;
  }
  return false;
}

// Generic: "step 12", "iter=12", "Iteration #12", "step:12" (regex \b(?:step|iter|iteration)\s*[=:#]?\s*(\d+)\b,
// case-insensitive); the leftmost.
bool generic_step(std::string_view line, std::string_view* digits) {
  for (std::size_t p = 0; p < line.size(); ++p) {
    const char c = lower(line[p]);
    if ((c != 's' && c != 'i') || !word_start(line, p)) continue;
    for (std::string_view key : {"step", "iter", "iteration"}) {
      if (!starts_with_at(line, p, key, true)) continue;
      std::size_t i = skip_spaces(line, p + key.size());
      if (i < line.size() && (line[i] == '=' || line[i] == ':' || line[i] == '#')) ++i;
      i = skip_spaces(line, i);
      const std::size_t d = i;
      i = skip_digits(line, i);
      if (i == d || (i < line.size() && is_word(line[i]))) continue;
      *digits = line.substr(d, i - d);
      return true;
    }
  }
  return false;
}

struct Timing {
  std::string_view key, number;
  double scale = 1;  // to seconds
};

bool is_number_char(char c) { return is_digit(c) || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-'; }

// After a time key: [=:] then a number (a run of [0-9.eE+-], ',' between digits, or nan / inf / infinity with a
// sign) and its unit, "ms" or "s", ending a word. False when that is not what follows (then it is not a time:
// "time: 12:30", "timeout 30 seconds").
bool timing_after(std::string_view line, std::size_t pos, Timing* t) {
  std::size_t i = skip_spaces(line, pos);
  if (i < line.size() && (line[i] == '=' || line[i] == ':')) ++i;
  i = skip_spaces(line, i);
  const std::size_t b = i;
  bool digit = false;
  while (i < line.size() && (is_number_char(line[i]) || (line[i] == ',' && i > b && is_digit(line[i - 1]) && i + 1 < line.size() && is_digit(line[i + 1])))) {
    digit = digit || is_digit(line[i]);
    ++i;
  }
  if (!digit) {  // not a decimal number: nan or inf, perhaps signed
    i = b;
    if (i < line.size() && (line[i] == '+' || line[i] == '-')) ++i;
    std::size_t w = i;
    while (w < line.size() && w - i < 8 && is_word(line[w])) ++w;
    std::string word;
    for (std::size_t k = i; k < w; ++k) word += lower(line[k]);
    // "nans", "infms": the unit may follow directly
    for (std::string_view name : {"infinity", "nan", "inf"})
      if (std::string_view(word).starts_with(name)) {
        i += name.size();
        digit = true;
        break;
      }
    if (!digit) return false;
  }
  const std::size_t e = i;
  i = skip_spaces(line, i);
  for (auto [unit, scale] : {std::pair<std::string_view, double>{"ms", 1e-3}, {"s", 1.0}})
    if (starts_with_at(line, i, unit, true) && (i + unit.size() == line.size() || !is_word(line[i + unit.size()]))) {
      t->number = line.substr(b, e - b);
      t->scale = scale;
      return true;
    }
  return false;
}

// The step's time: step_time / iter_time / "step time" first, else time / elapsed (case-insensitive, each
// starting a word); the leftmost of the first group that has one.
bool generic_time(std::string_view line, Timing* t) {
  for (auto keys : {std::initializer_list<std::string_view>{"step_time", "step time", "iter_time"}, {"time", "elapsed"}}) {
    std::size_t best = npos;
    Timing found;
    for (std::string_view key : keys)
      for (std::size_t p = find_word(line, key, 0, true); p != npos && p < best; p = find_word(line, key, p + 1, true)) {
        Timing candidate;
        if (timing_after(line, p + key.size(), &candidate)) {
          candidate.key = line.substr(p, key.size());
          best = p, found = candidate;
          break;
        }
      }
    if (best != npos) {
      *t = found;
      return true;
    }
  }
  return false;
}

class Parser {
 public:
  void line(const LineReader::Line& l) {
    if (l.too_long) return skip(l, too_long_reason(l.length));
    const std::string_view line = l.text;
    // Megatron-LM memory report: "[Rank 0] (after 10 iterations) memory (MB) | allocated: ... | max allocated: 58123.75 | ..."
    if (line.find("memory (MB)") != npos) {
      if (const std::size_t k = line.find("max allocated:"); k != npos) {
        double bytes = 0;  // Megatron reports MiB as "MB"
        const std::string problem = positive_field("max allocated (MB)", field_after(line, k + 14, '|'), 1048576.0, &bytes);
        if (!problem.empty()) return skip(l, problem);
        log_.peak_memory_bytes = std::max(log_.peak_memory_bytes, bytes);
        return;
      }
    }
    std::string_view digits;
    if (megatron_iteration(line, &digits)) return megatron(l, digits);
    if (line.find("tps:") != npos) {
      if (const std::size_t p = find_word(line, "step:"); p != npos) return torchtitan(l, field_after(line, p + 5));
    }
    // Hugging Face Trainer / ms-swift: Python dict lines. ms-swift logs "'train_speed(iter/s)': 0.104" per logging
    // step; the Trainer's closing summary "'train_steps_per_second': 0.51" (the whole run's mean, warm-up included).
    if (const std::size_t k = line.find("CurrSamplesPerSec="); k != npos) return deepspeed(l, k + 18);
    if (const std::size_t k = line.find("'train_speed(iter/s)':"); k != npos) return swift(l, k + 22);
    if (const std::size_t k = line.find("'train_steps_per_second':"); k != npos) return trainer_summary(l, k + 25);
    Timing time;
    if (generic_step(line, &digits) && generic_time(line, &time)) return generic(l, digits, time);
  }

  TrainingLog finish(long long lines) {
    log_.lines = lines;
    log_.format = megatron_ ? "megatron" : titan_ ? "torchtitan" : deepspeed_ ? "deepspeed" : swift_ ? "ms-swift" : trainer_ ? "hf-trainer" : generic_ ? "pytorch" : "unknown";
    return std::move(log_);
  }

 private:
  TrainingLog log_;
  bool megatron_ = false, titan_ = false, generic_ = false, swift_ = false, trainer_ = false, deepspeed_ = false;

  // A dict value after its key: blanks, then the number up to ',', '}' or a blank.
  static std::string_view dict_number(std::string_view line, std::size_t pos) {
    const std::string_view v = field_after(line, pos, ',');
    return v.ends_with('}') ? v.substr(0, v.size() - 1) : v;
  }

  // ms-swift: "{'loss': 1.2, 'memory(GiB)': 63.21, 'train_speed(iter/s)': 0.104, 'global_step/max_steps': '5/100', ...}"
  void swift(const LineReader::Line& l, std::size_t speed_at) {
    swift_ = true;
    const std::string_view line = l.text;
    LogIteration it;
    double speed = 0, memory = 0;
    std::string problem = positive_field("train_speed(iter/s)", dict_number(line, speed_at), 1, &speed);
    if (problem.empty()) {
      constexpr std::string_view key = "'global_step/max_steps':";
      const std::size_t k = line.find(key);
      if (k == npos) {
        problem = "no 'global_step/max_steps'";
      } else {
        std::size_t i = skip_spaces(line, k + key.size());
        if (i < line.size() && (line[i] == '\'' || line[i] == '"')) ++i;
        problem = count_field("global_step", line.substr(i, skip_digits(line, i) - i), &it.iteration);
      }
    }
    if (problem.empty()) {
      constexpr std::string_view key = "'memory(GiB)':";
      if (const std::size_t k = line.find(key); k != npos) problem = positive_field("memory(GiB)", dict_number(line, k + key.size()), kBytesPerGiB, &memory);
    }
    if (problem.empty() && !std::isfinite(1 / speed)) problem = field_problem("train_speed(iter/s)", dict_number(line, speed_at), "is out of range");
    if (!problem.empty()) return skip(l, problem);
    it.time_s = 1 / speed;
    // ms-swift reports torch.cuda.max_memory_reserved (swift/utils/torch_utils.py get_max_cuda_memory).
    if (memory > 0) log_.memory_counter = MemoryCounter::AllocatorReserved;
    log_.peak_memory_bytes = std::max(log_.peak_memory_bytes, memory);
    keep(l, it);
  }

  // DeepSpeed's throughput timer every steps_per_print global steps: "epoch=0/micro_step=40/global_step=10,
  // RunningAvgSamplesPerSec=11.9, CurrSamplesPerSec=12.3, MemAllocated=10.5GB, MaxMemAllocated=20.1GB" (GB: GiB,
  // memory_allocated() / 1024**3).
  void deepspeed(const LineReader::Line& l, std::size_t speed_at) {
    deepspeed_ = true;
    const std::string_view line = l.text;
    LogIteration it;
    double memory = 0;
    std::string problem = positive_field("CurrSamplesPerSec", field_after(line, speed_at, ','), 1, &it.samples_per_s);
    if (problem.empty()) {
      const std::size_t k = line.find("global_step=");
      problem = k == npos ? "no \"global_step=\"" : count_field("global_step", line.substr(k + 12, skip_digits(line, k + 12) - k - 12), &it.iteration);
    }
    if (problem.empty()) {
      if (const std::size_t k = line.find("MaxMemAllocated="); k != npos) {
        std::string_view value = field_after(line, k + 16, ',');
        if (value.ends_with("GB")) value.remove_suffix(2);
        problem = positive_field("MaxMemAllocated (GB)", value, kBytesPerGiB, &memory);
      }
    }
    if (!problem.empty()) return skip(l, problem);
    log_.peak_memory_bytes = std::max(log_.peak_memory_bytes, memory);
    keep(l, it);
  }

  // Hugging Face Trainer's summary: "{'train_runtime': 123.4, ..., 'train_steps_per_second': 0.51, ...}": one mean
  // step time over the whole run, kept apart from the per-step iterations (it includes the warm-up).
  void trainer_summary(const LineReader::Line& l, std::size_t at) {
    trainer_ = true;
    double steps_per_s = 0;
    std::string problem = positive_field("train_steps_per_second", dict_number(l.text, at), 1, &steps_per_s);
    if (problem.empty() && !std::isfinite(1 / steps_per_s)) problem = field_problem("train_steps_per_second", dict_number(l.text, at), "is out of range");
    if (!problem.empty()) return skip(l, problem);
    log_.run_mean_step_time_s = 1 / steps_per_s;
  }

  void skip(const LineReader::Line& l, std::string reason) { log_.malformed.add(l.number, l.text, std::move(reason)); }
  void keep(const LineReader::Line& l, LogIteration it) {
    it.line = l.number;
    log_.iterations.push_back(it);
  }

  void megatron(const LineReader::Line& l, std::string_view digits) {
    megatron_ = true;
    const std::string_view line = l.text;
    LogIteration it;
    std::string problem = count_field("iteration number", digits, &it.iteration);
    if (problem.empty()) {
      constexpr std::string_view key = "elapsed time per iteration (ms):";
      const std::size_t k = line.find(key);
      problem = k == npos ? "no \"elapsed time per iteration (ms)\""
                          : positive_field("elapsed time per iteration (ms)", field_after(line, k + key.size(), '|'), 1e-3, &it.time_s);
    }
    if (problem.empty()) {
      constexpr std::string_view key = "throughput per GPU (TFLOP/s/GPU):";
      if (const std::size_t k = line.find(key); k != npos)
        problem = positive_field("throughput per GPU (TFLOP/s/GPU)", field_after(line, k + key.size(), '|'), 1, &it.tflops_per_gpu);
    }
    if (!problem.empty()) return skip(l, problem);
    keep(l, it);
  }

  // "step:  2  loss: 11.9876  memory: 47.35GiB(59.88%)  tps: 6,512  tflops: 377.12  mfu: 38.13%"
  void torchtitan(const LineReader::Line& l, std::string_view step) {
    titan_ = true;
    const std::string_view line = l.text;
    LogIteration it;
    double memory = 0;
    std::string problem = count_field("step", step, &it.iteration);
    if (problem.empty()) {
      const std::size_t k = find_word(line, "tps:");
      problem = k == npos ? "no \"tps:\" value" : positive_field("tps", field_after(line, k + 4), 1, &it.tokens_per_s, true);
    }
    if (problem.empty()) {
      if (const std::size_t k = find_word(line, "tflops:"); k != npos)
        problem = positive_field("tflops", field_after(line, k + 7), 1, &it.tflops_per_gpu);
    }
    if (problem.empty()) {
      if (const std::size_t k = find_word(line, "memory:"); k != npos) {
        std::string_view value = field_after(line, k + 7, '(');
        if (value.ends_with("GiB")) {
          value.remove_suffix(3);
        } else {
          const std::size_t u = skip_spaces(line, static_cast<std::size_t>(value.data() - line.data()) + value.size());
          if (!starts_with_at(line, u, "GiB", false)) problem = field_problem("memory", value, "is not in GiB");
        }
        if (problem.empty()) problem = positive_field("memory (GiB)", value, kBytesPerGiB, &memory);
      }
    }
    if (!problem.empty()) return skip(l, problem);
    log_.peak_memory_bytes = std::max(log_.peak_memory_bytes, memory);
    if (memory > 0) log_.memory_counter = MemoryCounter::AllocatorReserved;
    keep(l, it);
  }

  void generic(const LineReader::Line& l, std::string_view digits, const Timing& time) {
    generic_ = true;
    LogIteration it;
    std::string problem = count_field("step", digits, &it.iteration);
    if (problem.empty())
      problem = positive_field(std::string(time.key) + (time.scale < 1 ? " (ms)" : " (s)"), time.number, time.scale, &it.time_s, true);
    if (!problem.empty()) return skip(l, problem);
    keep(l, it);
  }
};

TrainingLog parse(LineReader& reader) {
  Parser parser;
  LineReader::Line l;
  while (reader.next(&l)) parser.line(l);
  return parser.finish(reader.lines());
}

}  // namespace

TrainingLog parse_training_log(std::istream& in) {
  LineReader reader(in);
  return parse(reader);
}

TrainingLog parse_training_log(std::string_view text) {
  LineReader reader(text);
  return parse(reader);
}

LogSummary summarize(const TrainingLog& log, int skip) {
  const std::size_t n = log.iterations.size();
  const std::size_t first = std::min(n, skip >= 0 ? std::size_t(skip) : std::max<std::size_t>(1, n / 10));
  std::vector<double> times, tflops, tps, samples;
  for (std::size_t i = first; i < n; ++i) {
    const LogIteration& it = log.iterations[i];
    if (it.time_s > 0) times.push_back(it.time_s);
    if (it.tflops_per_gpu > 0) tflops.push_back(it.tflops_per_gpu);
    if (it.tokens_per_s > 0) tps.push_back(it.tokens_per_s);
    if (it.samples_per_s > 0) samples.push_back(it.samples_per_s);
  }
  LogSummary s;
  s.iterations = static_cast<int>(std::min<std::size_t>(n, 2147483647));
  s.warmup = static_cast<int>(std::min<std::size_t>(first, 2147483647));
  s.used = static_cast<int>(std::min<std::size_t>(n - first, 2147483647));
  s.median_time_s = quantile(times, 0.5);
  s.p10_time_s = quantile(times, 0.1);
  s.p90_time_s = quantile(times, 0.9);
  s.median_tflops_per_gpu = quantile(tflops, 0.5);
  s.median_tokens_per_s_per_gpu = quantile(tps, 0.5);
  s.median_samples_per_s = quantile(samples, 0.5);
  return s;
}

}  // namespace trainsim
