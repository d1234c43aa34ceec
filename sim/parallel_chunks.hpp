#pragma once
// The Monte-Carlo's one way to spread runs over threads: `body(worker, chunk, begin, end)` for the runs
// [begin, end) of each chunk of `chunk_size` runs, chunks handed to whichever thread is free, every thread (the
// calling one included) with its own worker from `make_worker()`. The calling thread's worker is built first,
// so a bad setup throws there before any thread starts. A run's result must depend only on its index (its
// seed), so results are the same for any thread count. The first exception stops every thread and is
// rethrown. Progress (runs done of the counter's plan) is reported from the calling thread only.
#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "sim/reliability/job_montecarlo.hpp"

namespace trainsim::sim {

template <class MakeWorker, class Body>
void for_each_chunk(int runs, int chunk_size, int threads, ProgressCounter* progress, MakeWorker make_worker, Body body) {
  if (runs <= 0) return;
  chunk_size = std::max(1, chunk_size);
  const int chunks = (runs + chunk_size - 1) / chunk_size;
  threads = std::clamp(threads, 1, chunks);
  std::atomic<int> next{0}, done{0};
  std::exception_ptr error;
  std::mutex error_mutex;
  auto fail = [&] {
    std::lock_guard<std::mutex> lock(error_mutex);
    if (!error) error = std::current_exception();
    next.store(chunks);
  };
  auto report = [&](double runs_done) {
    if (progress && progress->report && progress->planned_runs > 0)
      progress->report(std::min(1.0, (progress->done_runs + runs_done) / progress->planned_runs));
  };
  auto first = make_worker();
  auto work = [&](auto& worker, bool reporter) {
    try {
      for (;;) {
        const int chunk = next.fetch_add(1);
        if (chunk >= chunks) break;
        const int begin = chunk * chunk_size, end = std::min(runs, begin + chunk_size);
        body(worker, chunk, begin, end);
        const int finished = done.fetch_add(end - begin) + (end - begin);
        if (reporter) report(finished);
      }
    } catch (...) {
      fail();
    }
  };
  std::vector<std::thread> pool;
  for (int i = 1; i < threads; ++i)
    pool.emplace_back([&] {
      try {
        auto worker = make_worker();
        work(worker, false);
      } catch (...) {
        fail();
      }
    });
  work(first, true);
  for (auto& t : pool) t.join();
  if (error) std::rethrow_exception(error);
  if (progress) {
    progress->done_runs += runs;
    report(0);
  }
}

}  // namespace trainsim::sim
