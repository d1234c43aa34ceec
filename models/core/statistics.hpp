#pragma once
// Order statistics of samples, one definition for the whole project: the q-quantile by linear interpolation between
// order statistics (Hyndman & Fan 1996, type 7; numpy's and R's default), so a percentile means the same in the
// reliability study, training-log summaries and the accuracy bands.
#include <vector>

namespace trainsim {

// Of values sorted ascending; q in [0, 1]. 0 for none.
double sorted_quantile(const std::vector<double>& sorted, double q);
// Of values in any order (sorts a copy).
double quantile(std::vector<double> values, double q);

}  // namespace trainsim
