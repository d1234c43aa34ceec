#pragma once
// `trainsim calibrate fit-reference`: the fitted parameters (models/calibration/fitted_parameters.hpp) by Huber's robust
// M-estimate (least squares near the fit, linear beyond a scale taken from the least-squares residuals) on the log
// of measured / predicted iteration time over every counted speed case of ../shared/reference/, each
// source (publication or measurement run) weighted alike whatever its number of cases, each parameter kept in its
// physical range. The honest error is the leave-one-source-out
// cross-validation: refit without one publication's cases and predict them, for every source in turn.
#include <string>
#include <vector>

#include "reference_cases.hpp"

namespace trainsim {

// Error figures over speed cases (signed errors as case_error: + = the model is faster).
struct ErrorSummary {
  int cases = 0;
  double median = 0, mean = 0, max = 0, bias = 0;  // of |error|; bias = mean signed error
};
ErrorSummary summarize_errors(const std::vector<double>& signed_errors);

struct SourceFit {
  std::string source;
  int cases = 0;
  FittedParameters fitted;  // fitted without this source's cases
  ErrorSummary held_out;    // this source's cases predicted with `fitted`
};

struct ReferenceFit {
  FittedParameters start, fitted;
  double huber_scale = 0;   // of the fit on every case: |log ratio| beyond it counts linearly (0: least squares)
  int cases = 0;            // counted speed cases
  ErrorSummary before;      // at `start`
  ErrorSummary in_sample;   // at `fitted`
  ErrorSummary cross_validated;  // every case predicted by the fit that left its source out
  std::vector<SourceFit> sources;
  // Per counted speed case, in ReferenceSet order: measured / predicted time in sample and cross-validated.
  std::vector<std::string> case_ids;
  std::vector<double> in_sample_ratio, cross_validated_ratio;
};

// Over `cases` (speed cases only are used) from `start`: least squares, then Huber's M-estimate at 1.345 x the
// least-squares residuals' sigma (1.4826 x their median absolute deviation; reference_fit.cpp), written to
// `huber_scale` when given (0 where the least-squares fit leaves no residual). `free`: the indices into
// fitted_parameter_info() to fit (empty: all); the others keep `start`'s values. Fewer cases than free parameters:
// `start` unchanged.
FittedParameters fit_parameters(const std::vector<const ReferenceCase*>& cases, const FittedParameters& start, std::vector<std::size_t> free = {},
                                double* huber_scale = nullptr);
// The fit on every counted speed case of `set`, and the leave-one-source-out cross-validation.
ReferenceFit fit_reference(const ReferenceSet& set, const FittedParameters& start);
// What `trainsim calibrate fit-reference` runs: from fit_starting_point(), in two rounds (the layouts the sources
// leave to the search picked with the start, then again with the first round's fit), so that the result does not
// depend on the parameters shipped when it ran. `set` (optional) receives the second round's cases.
ReferenceFit fit_reference_files(const ReferenceDirs& dirs, ReferenceSet* set = nullptr);

}  // namespace trainsim
