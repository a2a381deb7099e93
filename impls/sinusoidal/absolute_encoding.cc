// Validation for the sinusoidal table, and the learned absolute-position table (seed 001).
#include "impls/sinusoidal/absolute_encoding.h"

#include <fmt/format.h>

#include <cmath>
#include <random>

#include "core/errors.h"

namespace ropecheck {

void validate(const SinusoidalSpec& spec) {
  if (spec.d_model <= 0 || spec.d_model % 2 != 0 || spec.d_model > kMaxHeadDim) {
    throw InvalidInput(fmt::format("d_model must be even and in [2, {}], got {}", kMaxHeadDim,
                                   spec.d_model));
  }
  if (!std::isfinite(spec.base) || spec.base <= 1.0) {
    throw InvalidInput(fmt::format("sinusoidal base must be finite and > 1, got {}", spec.base));
  }
}

namespace {

void validate_positions(std::span<const std::int64_t> positions) {
  if (positions.empty()) throw InvalidInput("no positions given");
  for (std::size_t t = 0; t < positions.size(); ++t) {
    if (positions[t] > kMaxAbsPosition || positions[t] < -kMaxAbsPosition) {
      throw InvalidInput(fmt::format("position {} (index {}) is outside [-2^24, 2^24]",
                                     positions[t], t));
    }
  }
}

}  // namespace

void SinusoidalImpl::table(const SinusoidalSpec& spec, std::span<const std::int64_t> positions,
                           std::span<float> out) const {
  validate(spec);
  validate_positions(positions);
  const auto needed = positions.size() * static_cast<std::size_t>(spec.d_model);
  if (out.size() != needed) {
    throw InvalidInput(fmt::format("output holds {} floats, {} positions x d_model {} need {}",
                                   out.size(), positions.size(), spec.d_model, needed));
  }
  compute(spec, positions, out);
}

std::vector<float> SinusoidalImpl::table(const SinusoidalSpec& spec,
                                         std::span<const std::int64_t> positions) const {
  validate(spec);
  std::vector<float> out(positions.size() * static_cast<std::size_t>(spec.d_model));
  table(spec, positions, out);
  return out;
}

LearnedPositionTable::LearnedPositionTable(int max_positions, int d_model, std::uint64_t seed)
    : LearnedPositionTable(max_positions, d_model, [&] {
        if (max_positions <= 0 || d_model <= 0) {
          throw InvalidInput(fmt::format("learned table needs positive sizes, got {} x {}",
                                         max_positions, d_model));
        }
        std::mt19937_64 rng(seed);
        std::normal_distribution<float> normal(0.0f, 1.0f);
        std::vector<float> w(static_cast<std::size_t>(max_positions) * static_cast<std::size_t>(d_model));
        for (auto& v : w) v = normal(rng);
        return w;
      }()) {}

LearnedPositionTable::LearnedPositionTable(int max_positions, int d_model, std::vector<float> weights)
    : max_positions_(max_positions), d_model_(d_model), weights_(std::move(weights)) {
  if (max_positions <= 0 || d_model <= 0 ||
      weights_.size() != static_cast<std::size_t>(max_positions) * static_cast<std::size_t>(d_model)) {
    throw InvalidInput(fmt::format("learned table of {} floats is not {} positions x d_model {}",
                                   weights_.size(), max_positions, d_model));
  }
}

std::span<const float> LearnedPositionTable::row(std::int64_t position) const {
  if (position < 0 || position >= max_positions_) {
    throw InvalidInput(fmt::format("position {} is outside the learned table [0, {})", position,
                                   max_positions_));
  }
  return std::span<const float>(weights_).subspan(
      static_cast<std::size_t>(position) * static_cast<std::size_t>(d_model_),
      static_cast<std::size_t>(d_model_));
}

std::vector<float> LearnedPositionTable::lookup(std::span<const std::int64_t> positions) const {
  std::vector<float> out;
  out.reserve(positions.size() * static_cast<std::size_t>(d_model_));
  for (const auto p : positions) {
    const auto r = row(p);
    out.insert(out.end(), r.begin(), r.end());
  }
  return out;
}

void LearnedPositionTable::add_to(std::span<float> x, std::int64_t batch,
                                  std::span<const std::int64_t> positions) const {
  const auto d = static_cast<std::size_t>(d_model_);
  if (batch <= 0 || x.size() != static_cast<std::size_t>(batch) * positions.size() * d) {
    throw InvalidInput(fmt::format("x holds {} floats, batch {} x {} tokens x d_model {} need {}",
                                   x.size(), batch, positions.size(), d_model_,
                                   static_cast<double>(batch) * static_cast<double>(positions.size()) * d_model_));
  }
  const auto rows = lookup(positions);  // validates every position before touching x
  for (std::size_t b = 0; b < static_cast<std::size_t>(batch); ++b) {
    for (std::size_t j = 0; j < rows.size(); ++j) x[b * rows.size() + j] += rows[j];
  }
}

}  // namespace ropecheck
