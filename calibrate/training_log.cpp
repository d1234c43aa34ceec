#include "training_log.hpp"

#include <algorithm>
#include <cmath>
#include <regex>

namespace trainsim {
namespace {

// One pattern per quantity; the numbers are read with std::stod after the match.
const std::regex kMegatronIteration(R"(\biteration\s+(\d+)\s*/\s*\d+\s*\|)");
const std::regex kMegatronTime(R"(elapsed time per iteration \(ms\):\s*([0-9.eE+-]+))");
const std::regex kMegatronTflops(R"(throughput per GPU \(TFLOP/s/GPU\):\s*([0-9.eE+-]+))");
const std::regex kMegatronMemory(R"(max allocated:\s*([0-9.eE+-]+))");
const std::regex kTitanStep(R"(\bstep:\s*(\d+)\b)");
const std::regex kTitanTps(R"(\btps:\s*([0-9][0-9,]*(?:\.[0-9]+)?))");
const std::regex kTitanTflops(R"(\btflops:\s*([0-9.eE+-]+))");
const std::regex kTitanMemory(R"(\bmemory:\s*([0-9.]+)\s*GiB)");
const std::regex kGenericStep(R"(\b(?:step|iter|iteration)\s*[=:#]?\s*(\d+)\b)", std::regex::icase);
const std::regex kGenericTime(R"(\b(?:step_time|step time|iter_time|time|elapsed)\s*[=:]?\s*([0-9.eE+-]+)\s*(ms|s)\b)", std::regex::icase);

// The whole field must be a number ("13.7.2e" is malformed, not 13.7); thousands separators allowed.
double number(const std::string& s) {
  std::string digits;
  for (char c : s)
    if (c != ',') digits += c;
  std::size_t used = 0;
  const double v = std::stod(digits, &used);
  if (used != digits.size()) throw std::invalid_argument("not a number: " + s);
  return v;
}

}  // namespace

TrainingLog parse_training_log(std::istream& in) {
  TrainingLog log;
  std::string line;
  std::smatch m;
  bool megatron = false, titan = false, generic = false;
  while (std::getline(in, line)) {
    ++log.lines;
    try {
      if (std::regex_search(line, m, kMegatronMemory) && line.find("memory (MB)") != std::string::npos) {
        log.max_allocated_bytes = std::max(log.max_allocated_bytes, number(m[1]) * 1048576.0);  // Megatron reports MiB as "MB"
        continue;
      }
      if (std::regex_search(line, m, kMegatronIteration)) {
        megatron = true;
        LogIteration it;
        it.iteration = std::stoll(m[1]);
        if (std::regex_search(line, m, kMegatronTime)) it.time_s = number(m[1]) / 1000.0;
        if (std::regex_search(line, m, kMegatronTflops)) it.tflops_per_gpu = number(m[1]);
        if (it.time_s <= 0) log.malformed_lines.push_back(log.lines);
        else log.iterations.push_back(it);
        continue;
      }
      if (std::regex_search(line, m, kTitanStep) && line.find("tps:") != std::string::npos) {
        titan = true;
        LogIteration it;
        it.iteration = std::stoll(m[1]);
        if (std::regex_search(line, m, kTitanTps)) it.tokens_per_s = number(m[1]);
        if (std::regex_search(line, m, kTitanTflops)) it.tflops_per_gpu = number(m[1]);
        if (std::regex_search(line, m, kTitanMemory)) log.max_allocated_bytes = std::max(log.max_allocated_bytes, number(m[1]) * 1073741824.0);
        if (it.tokens_per_s <= 0) log.malformed_lines.push_back(log.lines);
        else log.iterations.push_back(it);
        continue;
      }
      std::smatch t;
      if (std::regex_search(line, m, kGenericStep) && std::regex_search(line, t, kGenericTime)) {
        generic = true;
        LogIteration it;
        it.iteration = std::stoll(m[1]);
        it.time_s = number(t[1]) * (t[2] == "ms" ? 1e-3 : 1.0);
        if (!(it.time_s > 0) || !std::isfinite(it.time_s)) log.malformed_lines.push_back(log.lines);
        else log.iterations.push_back(it);
      }
    } catch (const std::exception&) {  // a number too long or garbled for stod
      log.malformed_lines.push_back(log.lines);
    }
  }
  log.format = megatron ? "megatron" : titan ? "torchtitan" : generic ? "pytorch" : "unknown";
  return log;
}

namespace {
double percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const double pos = q * double(v.size() - 1);
  const std::size_t lo = static_cast<std::size_t>(std::floor(pos)), hi = static_cast<std::size_t>(std::ceil(pos));
  return v[lo] + (v[hi] - v[lo]) * (pos - double(lo));
}
}  // namespace

LogSummary summarize(const TrainingLog& log, int skip) {
  const std::size_t n = log.iterations.size();
  std::size_t first = skip >= 0 ? std::size_t(skip) : std::max<std::size_t>(1, n / 10);
  if (first >= n) first = n > 1 ? n - 1 : 0;
  std::vector<double> times, tflops, tps;
  for (std::size_t i = first; i < n; ++i) {
    const LogIteration& it = log.iterations[i];
    if (it.time_s > 0) times.push_back(it.time_s);
    if (it.tflops_per_gpu > 0) tflops.push_back(it.tflops_per_gpu);
    if (it.tokens_per_s > 0) tps.push_back(it.tokens_per_s);
  }
  LogSummary s;
  s.used = int(n - first);
  s.median_time_s = percentile(times, 0.5);
  s.p10_time_s = percentile(times, 0.1);
  s.p90_time_s = percentile(times, 0.9);
  s.median_tflops_per_gpu = percentile(tflops, 0.5);
  s.median_tokens_per_s_per_gpu = percentile(tps, 0.5);
  return s;
}

}  // namespace trainsim
