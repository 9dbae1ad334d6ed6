#include "core/random.h"

#include <cmath>

namespace fleetsim {

uint64_t Rng::NextU64() {
  state_ += kGoldenGamma;
  return Mix64(state_);
}

double Rng::Uniform() {
  return static_cast<double>(NextU64() >> 11) * 0x1.0p-53;
}

double Rng::Exponential() {
  return -std::log(1.0 - Uniform());
}

double Rng::Normal() {
  for (;;) {
    const double x = 2.0 * Uniform() - 1.0;
    const double y = 2.0 * Uniform() - 1.0;
    const double s = x * x + y * y;
    if (s > 0.0 && s < 1.0) return x * std::sqrt(-2.0 * std::log(s) / s);
  }
}

double Rng::Gamma(double shape) {
  if (shape < 1.0) {
    // Gamma(a) = Gamma(a + 1) * U^(1/a); 1 - U keeps the base in (0, 1].
    const double boost = std::pow(1.0 - Uniform(), 1.0 / shape);
    return Gamma(shape + 1.0) * boost;
  }
  const double d = shape - 1.0 / 3.0;
  const double c = 1.0 / std::sqrt(9.0 * d);
  for (;;) {
    const double x = Normal();
    double v = 1.0 + c * x;
    if (v <= 0.0) continue;
    v = v * v * v;
    const double u = 1.0 - Uniform();  // in (0, 1]: log(u) is finite
    const double x2 = x * x;
    if (u < 1.0 - 0.0331 * x2 * x2) return d * v;
    if (std::log(u) < 0.5 * x2 + d * (1.0 - v + std::log(v))) return d * v;
  }
}

}  // namespace fleetsim
