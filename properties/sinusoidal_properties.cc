// The sinusoidal-table properties (seed 003), checked against the exact table computed here in
// long double, with the per-implementation error model of tolerance.h. Positions go up to 2^16:
// far past any sinusoidal model's context, and where the fp32 div_term bound is still < 0.1.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "properties/catalogue.h"
#include "properties/harness/rapidcheck_bridge.h"
#include "core/tolerance.h"

namespace ropecheck {
namespace {

constexpr std::int64_t kMaxSinusoidalPosition = std::int64_t{1} << 16;
constexpr std::string_view kUnits = "eps32";

long double exact_angle(const SinusoidalSpec& spec, std::int64_t pos, int i) {
  return static_cast<long double>(pos) *
         std::pow(static_cast<long double>(spec.base), -2.0L * i / spec.d_model);
}

long double exact_value(const SinusoidalSpec& spec, std::int64_t pos, int j) {
  const long double angle = exact_angle(spec, pos, j / 2);
  return j % 2 == 0 ? std::sin(angle) : std::cos(angle);
}

double bound(const SinusoidalImpl& impl, const SinusoidalSpec& spec, std::int64_t pos, int i) {
  return sinusoidal_bound_units(impl.angle_precision(), pos, i, spec.d_model, spec.base);
}

rc::Gen<SinusoidalSpec> sinusoidal_spec() {
  // Model widths a third of the time (apply, not oneOf, so that shrinking reaches d_model 2).
  auto d_model = rc::gen::apply([](int pick, int model, int any) { return pick == 2 ? model : any; },
                                rc::gen::inRange(0, 3), rc::gen::element(512, 768, 1024),
                                rc::gen::map(rc::gen::inRange(1, 513), [](int h) { return 2 * h; }));
  auto base = rc::gen::weightedOneOf<double>(
      {{1, rc::gen::just(10000.0)},
       {1, rc::gen::map(rc::gen::inRange(0, 1 << 20), [](int u) {
          return std::pow(10.0, 2.0 + 4.0 * u / (1 << 20));
        })}});
  return rc::gen::apply([](int d, double b) { return SinusoidalSpec{d, b}; }, d_model, base);
}

rc::Gen<std::int64_t> sinusoidal_position() {
  return rc::gen::inRange<std::int64_t>(0, kMaxSinusoidalPosition + 1);
}

std::vector<float> row(const SinusoidalImpl& impl, const SinusoidalSpec& spec, std::int64_t pos) {
  const std::int64_t p[] = {pos};
  return impl.table(spec, p);
}

}  // namespace

void showValue(const SinusoidalSpec& spec, std::ostream& os) {
  os << "d_model=" << spec.d_model << " base=" << spec.base;
}

namespace {

PropertyResult bounded(const Subject& subject, const RunConfig& config) {
  ErrorTracker tracker;
  return check_property(subject, config, "|PE|", tracker, [&] {
    const auto spec = *sinusoidal_spec().as("spec");
    const auto positions = *rc::gen::container<std::vector<std::int64_t>>(
                                *rc::gen::inRange<std::size_t>(1, 9).as("positions' count"),
                                rc::gen::inRange<std::int64_t>(-kMaxAbsPosition, kMaxAbsPosition + 1))
                                .as("positions");
    const auto pe = subject.sinusoidal->table(spec, positions);
    for (std::size_t j = 0; j < pe.size(); ++j) {
      tracker.observe(std::abs(pe[j]), 1.0);
      if (!(std::abs(pe[j]) <= 1.0f)) {
        RC_FAIL(fmt::format("PE[{}][{}] = {:.9g} outside [-1, 1]", j / static_cast<std::size_t>(spec.d_model),
                            j % static_cast<std::size_t>(spec.d_model), pe[j]));
      }
    }
  });
}

PropertyResult pe_at_zero(const Subject& subject, const RunConfig& config) {
  ErrorTracker tracker;
  return check_property(subject, config, kUnits, tracker, [&] {
    const auto spec = *sinusoidal_spec().as("spec");
    const auto pe = row(*subject.sinusoidal, spec, 0);
    for (std::size_t j = 0; j < pe.size(); ++j) {
      const float want = j % 2 == 0 ? 0.0f : 1.0f;  // sin 0, cos 0: exact in any precision
      tracker.observe(std::abs(pe[j] - want) / kEps32, 0.0);
      if (pe[j] != want) RC_FAIL(fmt::format("PE(0)[{}] = {:.9g}, want {}", j, pe[j], want));
    }
  });
}

PropertyResult pe_at_one_d512(const Subject& subject, const RunConfig& config) {
  ErrorTracker tracker;
  RunConfig once = config;
  once.cases = 1;  // a fixed table
  return check_property(subject, once, kUnits, tracker, [&] {
    // Seed 003: PE(1) = (0.8414, 0.5403, 0.8218, 0.5696, ..., 0.0001, 0.9999) for d = 512. The
    // printed numbers are the exact values truncated to 4 decimals (sin 1 = 0.84147..., the last
    // cos is 0.99999999463, which fp32 rounds to 1.0f): so the exact value must truncate to the
    // printed one, and the implementation must be within its bound of the exact value.
    const SinusoidalSpec spec{512, 10000.0};
    const std::pair<int, double> printed[] = {{0, 0.8414}, {1, 0.5403},   {2, 0.8218},
                                              {3, 0.5696}, {510, 0.0001}, {511, 0.9999}};
    const auto pe = row(*subject.sinusoidal, spec, 1);
    for (const auto& [j, seed_value] : printed) {
      const long double exact = exact_value(spec, 1, j);
      const long double truncated = std::floor(exact * 10000.0L) / 10000.0L;
      if (std::abs(truncated - seed_value) > 1e-9L) {
        RC_FAIL(fmt::format("the exact PE(1)[{}] = {:.9f} does not truncate to the seed's {}", j,
                            static_cast<double>(exact), seed_value));
      }
      const double error = static_cast<double>(std::abs(pe[static_cast<std::size_t>(j)] - exact)) / kEps32;
      const double limit = bound(*subject.sinusoidal, spec, 1, j / 2);
      tracker.observe(error, limit);
      if (error > limit) {
        RC_FAIL(fmt::format("PE(1)[{}] = {:.9g}, exact {:.9f} (seed prints {}): error {:.4g} > "
                            "bound {:.4g} eps32", j, pe[static_cast<std::size_t>(j)],
                            static_cast<double>(exact), seed_value, error, limit));
      }
    }
  });
}

PropertyResult unique(const Subject& subject, const RunConfig& config) {
  ErrorTracker tracker;
  return check_property(subject, config, "eps32", tracker, [&] {
    // Distinct positions give distinct rows: ||PE(p1) - PE(p2)|| must be within the two rows'
    // error of the exact distance 2 sqrt(sum_i sin^2(w_i (p1 - p2) / 2)), and that exact
    // distance must exceed the error (cases where fp32 cannot separate the rows are discarded).
    const auto spec = *sinusoidal_spec().as("spec");
    const auto p1 = *sinusoidal_position().as("position p1");
    const auto p2 = *rc::gen::distinctFrom(sinusoidal_position(), p1).as("position p2");
    const auto a = row(*subject.sinusoidal, spec, p1), b = row(*subject.sinusoidal, spec, p2);
    long double exact_sq = 0;
    double error_budget_sq = 0;
    for (int i = 0; i < spec.d_model / 2; ++i) {
      const long double s = std::sin(exact_angle(spec, p1 - p2, i) / 2);
      exact_sq += 4 * s * s;
      // each element of each row off by at most its bound: two elements per pair
      const double e = (bound(*subject.sinusoidal, spec, p1, i) + bound(*subject.sinusoidal, spec, p2, i)) * kEps32;
      error_budget_sq += 2 * e * e;
    }
    const double exact = std::sqrt(static_cast<double>(exact_sq));
    const double budget = std::sqrt(error_budget_sq);  // ||e|| of the difference vector
    RC_PRE(exact > budget);
    double got_sq = 0;
    for (std::size_t j = 0; j < a.size(); ++j) got_sq += (static_cast<double>(a[j]) - b[j]) * (static_cast<double>(a[j]) - b[j]);
    const double got = std::sqrt(got_sq);
    tracker.observe(std::abs(got - exact) / kEps32, budget / kEps32);
    if (!(got > 0) || std::abs(got - exact) > budget) {
      RC_FAIL(fmt::format("||PE({}) - PE({})|| = {:.9g}, exact {:.9g}, allowed error {:.3g}", p1,
                          p2, got, exact, budget));
    }
  });
}

PropertyResult shift_is_rotation(const Subject& subject, const RunConfig& config) {
  ErrorTracker tracker;
  return check_property(subject, config, kUnits, tracker, [&] {
    // Seed 003: (sin, cos)(pos + k) = [[cos b, sin b], [-sin b, cos b]] (sin, cos)(pos),
    // b = w_i k, the same map for every pos. Applied exactly to the implementation's PE(pos),
    // whose pair error (norm <= sqrt(2) B(pos)) it carries over, against PE(pos + k) (B(pos + k)).
    const auto spec = *sinusoidal_spec().as("spec");
    const auto pos = *sinusoidal_position().as("position pos");
    const auto k = *rc::gen::inRange<std::int64_t>(-pos, kMaxSinusoidalPosition - pos + 1).as("offset k");
    const auto at = row(*subject.sinusoidal, spec, pos), shifted = row(*subject.sinusoidal, spec, pos + k);
    for (int i = 0; i < spec.d_model / 2; ++i) {
      const long double b = exact_angle(spec, k, i);
      const long double s = at[static_cast<std::size_t>(2 * i)], c = at[static_cast<std::size_t>(2 * i + 1)];
      const long double want[2] = {s * std::cos(b) + c * std::sin(b), c * std::cos(b) - s * std::sin(b)};
      const double limit = std::sqrt(2.0) * bound(*subject.sinusoidal, spec, pos, i) +
                           bound(*subject.sinusoidal, spec, pos + k, i);
      for (int e = 0; e < 2; ++e) {
        const double error =
            static_cast<double>(std::abs(shifted[static_cast<std::size_t>(2 * i + e)] - want[e])) / kEps32;
        tracker.observe(error, limit);
        if (error > limit) {
          RC_FAIL(fmt::format("pair {} element {}: PE(pos+k) = {:.9g}, rotation of PE(pos) gives "
                              "{:.9g} (pos {}, k {}): error {:.4g} > bound {:.4g} eps32",
                              i, e, shifted[static_cast<std::size_t>(2 * i + e)],
                              static_cast<double>(want[e]), pos, k, error, limit));
        }
      }
    }
  });
}

PropertyResult dot_depends_on_abs_k(const Subject& subject, const RunConfig& config) {
  ErrorTracker tracker;
  return check_property(subject, config, kUnits, tracker, [&] {
    // Seed 003: PE(pos + k) . PE(pos) = sum_i cos(w_i k), whatever pos, and the same for -k.
    // Each element is off by at most its bound and every value is <= 1, so a dot product is off
    // by at most sum over elements of (B(pos) + B(pos + k)).
    const auto spec = *sinusoidal_spec().as("spec");
    const auto k = *rc::gen::inRange<std::int64_t>(0, kMaxSinusoidalPosition / 2 + 1).as("|offset k|");
    const auto sign = *rc::gen::element<std::int64_t>(1, -1).as("sign of k");
    const auto pos = *rc::gen::inRange<std::int64_t>(std::max<std::int64_t>(0, -sign * k),
                                                     kMaxSinusoidalPosition - std::max<std::int64_t>(0, sign * k) + 1)
                          .as("position pos");
    const auto a = row(*subject.sinusoidal, spec, pos + sign * k), b = row(*subject.sinusoidal, spec, pos);
    long double exact = 0, got = 0;
    double limit = 0;
    for (int i = 0; i < spec.d_model / 2; ++i) {
      exact += std::cos(exact_angle(spec, k, i));
      limit += 2 * (bound(*subject.sinusoidal, spec, pos, i) + bound(*subject.sinusoidal, spec, pos + sign * k, i));
    }
    for (std::size_t j = 0; j < a.size(); ++j) got += static_cast<long double>(a[j]) * b[j];
    const double error = static_cast<double>(std::abs(got - exact)) / kEps32;
    tracker.observe(error, limit);
    if (error > limit) {
      RC_FAIL(fmt::format("PE(pos{}k) . PE(pos) = {:.9g} but sum_i cos(w_i k) = {:.9g} (pos {}, "
                          "k {}): error {:.4g} > bound {:.4g} eps32",
                          sign > 0 ? "+" : "-", static_cast<double>(got), static_cast<double>(exact),
                          pos, k, error, limit));
    }
  });
}

}  // namespace

std::span<const Property> sinusoidal_properties() {
  static const Property kAll[] = {
      {"sinusoidal_bounded", "every value in [-1, 1] (seed 003)", SubjectKind::sinusoidal, bounded},
      {"sinusoidal_pe_at_zero", "PE(0) = (0, 1, 0, 1, ...) exactly (seed 003)",
       SubjectKind::sinusoidal, pe_at_zero},
      {"sinusoidal_pe_at_one_d512",
       "PE(1) for d=512 is (0.8414, 0.5403, 0.8218, 0.5696, ..., 0.0001, 0.9999) truncated (seed 003)",
       SubjectKind::sinusoidal, pe_at_one_d512},
      {"sinusoidal_unique", "distinct positions give rows at their exact distance apart (seed 003)",
       SubjectKind::sinusoidal, unique},
      {"sinusoidal_shift_is_rotation",
       "PE(pos+k) is the same rotation by w_i k of PE(pos) for every pos (seed 003)",
       SubjectKind::sinusoidal, shift_is_rotation},
      {"sinusoidal_dot_depends_on_abs_k",
       "PE(pos+k).PE(pos) = sum_i cos(w_i k), whatever pos and the sign of k (seed 003)",
       SubjectKind::sinusoidal, dot_depends_on_abs_k},
  };
  return kAll;
}

}  // namespace ropecheck
