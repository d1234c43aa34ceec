#include "reference_fit.hpp"

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <map>
#include <unsupported/Eigen/LevenbergMarquardt>
#include <unsupported/Eigen/NumericalDiff>

namespace trainsim {

namespace {

// Each parameter moves in its physical range [lower, upper] through p = lower + (upper - lower)(1 + sin x)/2
// (the bounded-variable transform of MINUIT): the least-squares solver works on an unbounded x.
double to_value(const FittedParameterInfo& p, double x) { return p.lower + (p.upper - p.lower) * (1 + std::sin(x)) / 2; }
double to_internal(const FittedParameterInfo& p, double v) {
  const double u = std::clamp(2 * (v - p.lower) / (p.upper - p.lower) - 1, -1.0, 1.0);
  return std::asin(u);
}

// The parameters being fitted (indices into fitted_parameter_info()) take x; the others keep `base`'s values.
FittedParameters from_internal(const Eigen::VectorXd& x, const std::vector<std::size_t>& free, const FittedParameters& base) {
  FittedParameters f = base;
  const auto& info = fitted_parameter_info();
  for (std::size_t i = 0; i < free.size(); ++i) f.*info[free[i]].member = to_value(info[free[i]], x[static_cast<Eigen::Index>(i)]);
  return f;
}

// Huber's M-estimate (Huber 1964; the tuning constant 1.345 of Holland & Welsch 1977, 95% efficient when the errors
// are normal) at the scale of the least-squares residuals, 1.4826 x their median absolute deviation (the normal
// distribution's sigma from its MAD): residuals within the scale count squared, larger ones linearly, so that a few
// runs with a mechanism the model does not name (README, "reading the misses") do not set a parameter for all.
constexpr double kHuberTuning = 1.345;
constexpr double kMadToSigma = 1.4826;

// Residuals: log(measured / predicted time) per case, so that 10% slow and 10% fast weigh alike; with a Huber scale
// each is sign(e) sqrt(rho(e)), rho the Huber loss, so that the sum of squares is the Huber objective.
struct LogRatioResiduals : Eigen::DenseFunctor<double> {
  const std::vector<const ReferenceCase*>* cases;
  const std::vector<std::size_t>* free;
  const FittedParameters* base;
  // 1 / sqrt(cases of the case's source): each source's squared residuals weigh alike, whatever its number of cases,
  // so one source's many runs of one regime do not outweigh another's (the sources are the independent observations
  // leave-one-source-out judges).
  std::vector<double> weight;
  double huber_scale = 0;  // 0: least squares
  LogRatioResiduals(const std::vector<const ReferenceCase*>& c, const std::vector<std::size_t>& fr, const FittedParameters& b)
      : Eigen::DenseFunctor<double>(static_cast<int>(fr.size()), static_cast<int>(c.size())), cases(&c), free(&fr), base(&b) {
    std::map<std::string, int> per_source;
    for (const ReferenceCase* rc : c) ++per_source[rc->source];
    for (const ReferenceCase* rc : c) weight.push_back(1 / std::sqrt(static_cast<double>(per_source[rc->source])));
  }
  // Unweighted log(measured / predicted) per case at x.
  std::vector<double> log_ratios(const InputType& x) const {
    const FittedParameters f = from_internal(x, *free, *base);
    std::vector<double> e;
    for (const ReferenceCase* c : *cases) e.push_back(std::log(time_ratio(*c, predict_case(*c, &f))));
    return e;
  }
  int operator()(const InputType& x, ValueType& r) const {
    const std::vector<double> e = log_ratios(x);
    for (std::size_t i = 0; i < e.size(); ++i) {
      const double a = std::fabs(e[i]);
      const double robust = huber_scale > 0 && a > huber_scale ? std::copysign(std::sqrt(2 * huber_scale * a - huber_scale * huber_scale), e[i]) : e[i];
      r[static_cast<Eigen::Index>(i)] = weight[i] * robust;
    }
    return 0;
  }
};

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t k = v.size() / 2;
  return v.size() % 2 ? v[k] : (v[k - 1] + v[k]) / 2;
}

// Huber's scale for residuals e: kHuberTuning x kMadToSigma x median |e - median(e)|.
double huber_scale_of(const std::vector<double>& e) {
  if (e.empty()) return 0;
  const double centre = median_of(e);
  std::vector<double> deviation;
  for (double v : e) deviation.push_back(std::fabs(v - centre));
  return kHuberTuning * kMadToSigma * median_of(deviation);
}

std::vector<const ReferenceCase*> speed_cases(const ReferenceSet& set) {
  std::vector<const ReferenceCase*> out;
  for (const auto& c : set.cases)
    if (c.counted && c.speed()) out.push_back(&c);
  return out;
}

// Nelder-Mead simplex minimisation of f from x0 (initial edge `step` along each axis; the standard reflection 1,
// expansion 2, contraction and shrink 1/2) until the simplex's values agree to 1e-14 or `max_evaluations` are
// spent. Returns the best vertex and its value in `best`.
template <class F>
Eigen::VectorXd nelder_mead(F&& f, const Eigen::VectorXd& x0, double step, int max_evaluations, double& best) {
  const Eigen::Index n = x0.size();
  std::vector<Eigen::VectorXd> p(static_cast<std::size_t>(n + 1), x0);
  std::vector<double> v(static_cast<std::size_t>(n + 1));
  for (Eigen::Index i = 0; i < n; ++i) p[static_cast<std::size_t>(i + 1)][i] += step;
  for (std::size_t i = 0; i < p.size(); ++i) v[i] = f(p[i]);
  int evaluations = static_cast<int>(p.size());
  std::vector<std::size_t> order(p.size());
  while (evaluations < max_evaluations) {
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return v[a] < v[b]; });
    const std::size_t lo = order.front(), hi = order.back(), second = order[order.size() - 2];
    if (v[hi] - v[lo] <= 1e-14 * (1 + std::fabs(v[lo]))) break;
    Eigen::VectorXd centroid = Eigen::VectorXd::Zero(n);
    for (std::size_t i = 0; i < p.size(); ++i)
      if (i != hi) centroid += p[i];
    centroid /= static_cast<double>(n);
    const Eigen::VectorXd reflected = centroid + (centroid - p[hi]);
    const double fr = f(reflected);
    ++evaluations;
    if (fr < v[lo]) {
      const Eigen::VectorXd expanded = centroid + 2 * (centroid - p[hi]);
      const double fe = f(expanded);
      ++evaluations;
      if (fe < fr) p[hi] = expanded, v[hi] = fe;
      else p[hi] = reflected, v[hi] = fr;
    } else if (fr < v[second]) {
      p[hi] = reflected, v[hi] = fr;
    } else {
      const bool outside = fr < v[hi];
      const Eigen::VectorXd contracted = outside ? Eigen::VectorXd(centroid + 0.5 * (reflected - centroid))
                                                 : Eigen::VectorXd(centroid + 0.5 * (p[hi] - centroid));
      const double fc = f(contracted);
      ++evaluations;
      if (fc < (outside ? fr : v[hi])) {
        p[hi] = contracted, v[hi] = fc;
      } else {
        for (std::size_t i = 0; i < p.size(); ++i) {
          if (i == lo) continue;
          p[i] = p[lo] + 0.5 * (p[i] - p[lo]);
          v[i] = f(p[i]);
          ++evaluations;
        }
      }
    }
  }
  const std::size_t arg = static_cast<std::size_t>(std::min_element(v.begin(), v.end()) - v.begin());
  best = v[arg];
  return p[arg];
}

}  // namespace

ErrorSummary summarize_errors(const std::vector<double>& signed_errors) {
  ErrorSummary s;
  s.cases = static_cast<int>(signed_errors.size());
  if (signed_errors.empty()) return s;
  std::vector<double> abs;
  for (double e : signed_errors) {
    abs.push_back(std::fabs(e));
    s.bias += e;
  }
  std::sort(abs.begin(), abs.end());
  const std::size_t k = abs.size() / 2;
  s.median = abs.size() % 2 ? abs[k] : (abs[k - 1] + abs[k]) / 2;
  for (double a : abs) s.mean += a;
  s.mean /= s.cases;
  s.max = abs.back();
  s.bias /= s.cases;
  return s;
}

namespace {
// Minimises the sum of squares of `residuals` from x.
Eigen::VectorXd minimise(LogRatioResiduals& residuals, Eigen::VectorXd x) {
  Eigen::VectorXd r(residuals.values());
  auto sum_of_squares = [&](const Eigen::VectorXd& at) {
    residuals(at, r);
    return r.squaredNorm();
  };
  // The step time is piecewise smooth in the parameters (a GPU waits for the host or it does not, a collective
  // hides behind compute or it does not), so a derivative-free simplex search finds the basin, restarted
  // from its best point until a restart no longer improves it, and Levenberg-Marquardt polishes the minimum.
  double best = sum_of_squares(x);
  for (int restart = 0; restart < 8; ++restart) {
    const double before = best;
    x = nelder_mead(sum_of_squares, x, 0.3, 4000, best);
    if (before - best <= 1e-12 * (1 + before)) break;
  }
  Eigen::NumericalDiff<LogRatioResiduals> derivative(residuals, 1e-10);
  Eigen::LevenbergMarquardt<Eigen::NumericalDiff<LogRatioResiduals>> lm(derivative);
  Eigen::VectorXd polished = x;
  lm.minimize(polished);
  if (sum_of_squares(polished) < best) x = polished;
  return x;
}
}  // namespace

FittedParameters fit_parameters(const std::vector<const ReferenceCase*>& cases, const FittedParameters& start, std::vector<std::size_t> free,
                                double* huber_scale) {
  const auto& info = fitted_parameter_info();
  if (huber_scale) *huber_scale = 0;
  if (free.empty())
    for (std::size_t i = 0; i < info.size(); ++i) free.push_back(i);
  const int n = static_cast<int>(free.size());
  if (static_cast<int>(cases.size()) < n) return start;  // fewer cases than parameters: nothing to fit
  Eigen::VectorXd x(n);
  for (int i = 0; i < n; ++i) x[i] = to_internal(info[free[static_cast<std::size_t>(i)]], start.*info[free[static_cast<std::size_t>(i)]].member);
  LogRatioResiduals residuals(cases, free, start);
  x = minimise(residuals, x);  // least squares: the scale's residuals
  // Huber's M-estimate from there; residuals that all vanish (the model fits every case) leave nothing to weigh down.
  const double scale = huber_scale_of(residuals.log_ratios(x));
  if (scale > 1e-9) {
    residuals.huber_scale = scale;
    x = minimise(residuals, x);
  }
  if (huber_scale) *huber_scale = scale;
  return from_internal(x, free, start);
}

ReferenceFit fit_reference(const ReferenceSet& set, const FittedParameters& start) {
  ReferenceFit out;
  out.start = start;
  const std::vector<const ReferenceCase*> cases = speed_cases(set);
  out.cases = static_cast<int>(cases.size());
  out.fitted = fit_parameters(cases, start, {}, &out.huber_scale);

  std::vector<double> before, in_sample, cross(cases.size());
  out.cross_validated_ratio.resize(cases.size());
  for (const ReferenceCase* c : cases) {
    before.push_back(case_error(*c, predict_case(*c, &start)));
    const double p = predict_case(*c, &out.fitted);
    in_sample.push_back(case_error(*c, p));
    out.case_ids.push_back(c->id);
    out.in_sample_ratio.push_back(time_ratio(*c, p));
  }
  out.before = summarize_errors(before);
  out.in_sample = summarize_errors(in_sample);

  std::map<std::string, std::vector<std::size_t>> by_source;
  for (std::size_t i = 0; i < cases.size(); ++i) by_source[cases[i]->source].push_back(i);
  for (const auto& [source, members] : by_source) {
    std::vector<const ReferenceCase*> rest;
    for (std::size_t i = 0; i < cases.size(); ++i)
      if (cases[i]->source != source) rest.push_back(cases[i]);
    SourceFit sf;
    sf.source = source;
    sf.cases = static_cast<int>(members.size());
    sf.fitted = fit_parameters(rest, start);  // from the prior, not from a fit that saw the source
    std::vector<double> held;
    for (std::size_t i : members) {
      const double p = predict_case(*cases[i], &sf.fitted);
      cross[i] = case_error(*cases[i], p);
      out.cross_validated_ratio[i] = time_ratio(*cases[i], p);
      held.push_back(cross[i]);
    }
    sf.held_out = summarize_errors(held);
    out.sources.push_back(sf);
  }
  out.cross_validated = summarize_errors(cross);
  return out;
}

ReferenceFit fit_reference_files(const ReferenceDirs& dirs, ReferenceSet* set) {
  const FittedParameters start = fit_starting_point();
  const ReferenceFit first = fit_reference(load_reference_cases(dirs, &start), start);
  ReferenceSet cases = load_reference_cases(dirs, &first.fitted);
  ReferenceFit fit = fit_reference(cases, start);
  if (set) *set = std::move(cases);
  return fit;
}

}  // namespace trainsim
