// What op implementations share when they write formulas with other ops (VJPs, composed ops).
#pragma once
#include "pcp/ops/ops.h"

namespace pcp {

// A constant in a formula, typed as a Python float: weak, so S(0.5) * x keeps x's dtype.
inline Tensor S(double v) { return weak_scalar(v); }

}  // namespace pcp
