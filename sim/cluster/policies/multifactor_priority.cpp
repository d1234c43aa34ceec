#include "sim/cluster/policies/multifactor_priority.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <queue>
#include <tuple>

namespace trainsim::sim::cluster {

namespace {
constexpr double kNone = -std::numeric_limits<double>::infinity();

double size_factor(const SchedulingPass& pass, int j) {
  // GPUs asked over the cluster's configured GPUs (Slurm: the job's nodes or CPUs over the partition's).
  const double total = pass.cluster().total_gpus();
  const double size = total > 0 ? std::min(1.0, pass.gpus(j) / total) : 0.0;
  return pass.cluster().priority.favor_small ? 1 - size : size;
}
}  // namespace

MultifactorPriority::Job& MultifactorPriority::job(const SchedulingPass& pass, int j) {
  const auto k = static_cast<std::size_t>(j);
  if (k >= jobs_.size()) jobs_.resize(k + 1);
  Job& jb = jobs_[k];
  if (jb.user < 0) {
    const std::string& name = pass.job(j).user;
    auto [it, added] = user_index_.try_emplace(name, static_cast<int>(users_.size()));
    if (added) users_.push_back(User{name, 0, 0, 1, {}, {}});
    jb.user = it->second;  // a user is an association from its first job on
  }
  return jb;
}

void MultifactorPriority::charge(double now, const MultifactorSettings& s) {
  if (last_s_ < 0 || now <= last_s_) {
    last_s_ = std::max(last_s_, now);
    return;
  }
  // Usage decays by 2^(-dt/T); GPUs held at rate g over dt add g x T/ln2 x (1 - 2^(-dt/T)), the decayed integral.
  const double dt = now - last_s_, T = s.decay_half_life_s;
  const double decay = std::exp2(-dt / T), added = T / std::log(2.0) * (1 - decay);
  for (User& u : users_) u.usage = u.usage * decay + u.holding * added;
  last_s_ = now;
}

void MultifactorPriority::rank_users() {
  // Fair Tree on a flat tree of users with equal shares: level fairshare = share / usage share (infinite without
  // usage); users ranked by it, ties sharing a rank, the highest ranked N of N users: factor = rank / N.
  double total = 0;
  for (const User& u : users_) total += u.usage;
  const double n = static_cast<double>(users_.size());
  std::vector<std::pair<double, int>> level;
  level.reserve(users_.size());
  for (std::size_t u = 0; u < users_.size(); ++u)
    level.push_back({total > 0 && users_[u].usage > 0 ? (1 / n) / (users_[u].usage / total) : std::numeric_limits<double>::infinity(),
                     static_cast<int>(u)});
  std::sort(level.begin(), level.end());
  // Ascending: a user's rank is the number of users whose level fairshare is at most its own.
  for (std::size_t i = 0; i < level.size();) {
    std::size_t k = i;
    while (k < level.size() && level[k].first == level[i].first) ++k;
    for (std::size_t m = i; m < k; ++m) users_[static_cast<std::size_t>(level[m].second)].fairshare = static_cast<double>(k) / n;
    i = k;
  }
}

MultifactorPriority::Factors MultifactorPriority::factors(const SchedulingPass& pass, int j) {
  const MultifactorSettings& s = pass.cluster().priority;
  const ClusterJob& c = pass.job(j);
  Factors f;
  f.age = std::min(1.0, std::max(0.0, pass.now() - c.submit_s) / s.max_age_s);
  f.fairshare = users_[static_cast<std::size_t>(job(pass, j).user)].fairshare;
  f.job_size = size_factor(pass, j);
  f.qos = max_qos_ > 0 ? std::max(0, c.priority) / max_qos_ : 0.0;
  f.priority = s.weight_age * f.age + s.weight_fairshare * f.fairshare + s.weight_job_size * f.job_size + s.weight_qos * f.qos;
  return f;
}

void MultifactorPriority::insert(const SchedulingPass& pass, int j) {
  const MultifactorSettings& s = pass.cluster().priority;
  Job& jb = job(pass, j);
  const ClusterJob& c = pass.job(j);
  jb.static_key = s.weight_job_size * size_factor(pass, j) + s.weight_qos * (max_qos_ > 0 ? std::max(0, c.priority) / max_qos_ : 0.0);
  User& u = users_[static_cast<std::size_t>(jb.user)];
  if (pass.now() - c.submit_s >= s.max_age_s) {
    u.capped.insert({-(jb.static_key + s.weight_age), j});
    jb.set = 2;
  } else {
    u.uncapped.insert({-(jb.static_key - s.weight_age * c.submit_s / s.max_age_s), j});
    by_submit_.insert({c.submit_s, j});
    jb.set = 1;
  }
}

void MultifactorPriority::take_new_entries(const SchedulingPass& pass) {
  const std::uint64_t entries = pass.queue_entries();
  if (entries == entries_seen_) return;
  const std::vector<int>& queue = pass.waiting();  // in job-index (arrival) order
  const auto tail = std::upper_bound(queue.begin(), queue.end(), last_index_);
  const bool only_arrivals = static_cast<std::uint64_t>(queue.end() - tail) == entries - entries_seen_;
  entries_seen_ = entries;
  std::vector<int> fresh;
  for (auto it = only_arrivals ? tail : queue.begin(); it != queue.end(); ++it)
    if (*it > last_index_ || jobs_.size() <= static_cast<std::size_t>(*it) || jobs_[static_cast<std::size_t>(*it)].set == 0) fresh.push_back(*it);
  if (!queue.empty()) last_index_ = std::max(last_index_, queue.back());
  // The QOS scale is the highest priority seen: a higher one changes every job's key.
  bool rescale = false;
  for (int j : fresh)
    if (pass.job(j).priority > max_qos_) max_qos_ = pass.job(j).priority, rescale = true;
  if (rescale && pass.cluster().priority.weight_qos > 0) {
    rebuild(pass);
    return;
  }
  for (int j : fresh) insert(pass, j);
}

void MultifactorPriority::rebuild(const SchedulingPass& pass) {
  for (User& u : users_) u.uncapped.clear(), u.capped.clear();
  by_submit_.clear();
  for (Job& jb : jobs_) jb.set = 0;
  for (int j : pass.waiting()) insert(pass, j);
}

void MultifactorPriority::cap_aged(const SchedulingPass& pass) {
  const MultifactorSettings& s = pass.cluster().priority;
  while (!by_submit_.empty() && pass.now() - by_submit_.begin()->first >= s.max_age_s) {
    const int j = by_submit_.begin()->second;
    by_submit_.erase(by_submit_.begin());
    Job& jb = jobs_[static_cast<std::size_t>(j)];
    User& u = users_[static_cast<std::size_t>(jb.user)];
    u.uncapped.erase({-(jb.static_key - s.weight_age * pass.job(j).submit_s / s.max_age_s), j});
    u.capped.insert({-(jb.static_key + s.weight_age), j});
    jb.set = 2;
  }
}

std::pair<double, int> MultifactorPriority::head(const SchedulingPass& pass, User& u, Set::iterator& a, Set::iterator& b) {
  const MultifactorSettings& s = pass.cluster().priority;
  // Jobs that left the queue since they were inserted are dropped when met (no scan of every set per pass).
  auto drop_stale = [&](Set& set, Set::iterator& it, bool uncapped) {
    while (it != set.end() && !pass.is_waiting(it->second)) {
      const int j = it->second;
      jobs_[static_cast<std::size_t>(j)].set = 0;
      if (uncapped) by_submit_.erase({pass.job(j).submit_s, j});
      it = set.erase(it);
    }
  };
  drop_stale(u.uncapped, a, true);
  drop_stale(u.capped, b, false);
  const double shared = s.weight_fairshare * u.fairshare;
  const double pa = a == u.uncapped.end() ? kNone : -a->first + s.weight_age * pass.now() / s.max_age_s + shared;
  const double pb = b == u.capped.end() ? kNone : -b->first + shared;
  if (pa == kNone && pb == kNone) return {kNone, -1};
  // The higher priority; queue order (the smaller job index) among equals.
  if (pb > pa || (pb == pa && b->second < a->second)) return {pb, b->second};
  return {pa, a->second};
}

std::vector<int> MultifactorPriority::order(const SchedulingPass& pass, std::size_t first) {
  const MultifactorSettings& s = pass.cluster().priority;
  charge(pass.now(), s);
  take_new_entries(pass);
  cap_aged(pass);
  rank_users();
  // Merge the users' heads: (priority, -job, user), the largest first.
  std::vector<Set::iterator> ua(users_.size()), ub(users_.size());
  std::priority_queue<std::tuple<double, int, int>> heads;
  for (std::size_t u = 0; u < users_.size(); ++u) {
    ua[u] = users_[u].uncapped.begin();
    ub[u] = users_[u].capped.begin();
    const auto [p, j] = head(pass, users_[u], ua[u], ub[u]);
    if (j >= 0) heads.push({p, -j, static_cast<int>(u)});
  }
  std::vector<int> out;
  while (out.size() < first && !heads.empty()) {
    const auto [p, neg_j, u] = heads.top();
    heads.pop();
    const int j = -neg_j;
    out.push_back(j);
    const auto k = static_cast<std::size_t>(u);
    if (ua[k] != users_[k].uncapped.end() && ua[k]->second == j) ++ua[k];
    else ++ub[k];
    const auto [next_p, next_j] = head(pass, users_[k], ua[k], ub[k]);
    if (next_j >= 0) heads.push({next_p, -next_j, u});
  }
  return out;
}

void MultifactorPriority::note_running(const SchedulingPass& pass) {
  for (User& u : users_) u.holding = 0;
  for (int j : pass.running()) users_[static_cast<std::size_t>(job(pass, j).user)].holding += pass.gpus(j);
}

double MultifactorPriority::usage(const std::string& user) const {
  const auto it = user_index_.find(user);
  return it == user_index_.end() ? 0.0 : users_[static_cast<std::size_t>(it->second)].usage;
}

}  // namespace trainsim::sim::cluster
