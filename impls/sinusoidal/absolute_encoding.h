// Absolute positional encodings: the sinusoidal table (seed 003) and a learned lookup table
// (seed 001), beside RoPE with the same spec / registry style.
//
//   PE(pos, 2i)   = sin(pos * w_i),  PE(pos, 2i+1) = cos(pos * w_i),  w_i = base^(-2i / d_model)
// Wavelengths 2pi/w_i form a geometric progression from 2pi to base*2pi.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/spec.h"

namespace ropecheck {

struct SinusoidalSpec {
  int d_model = 512;       // even
  double base = 10000.0;   // finite, > 1
};

// Throws InvalidInput for odd or non-positive d_model or a bad base.
void validate(const SinusoidalSpec& spec);

// An implementation of the sinusoidal table: fills out, row-major [positions.size()][d_model].
class SinusoidalImpl {
 public:
  virtual ~SinusoidalImpl() = default;
  virtual std::string_view id() const = 0;       // `sinusoidal/<form>` or `mutant/<the_bug>`
  virtual std::string_view summary() const = 0;
  // fp64: angles pos * w_i formed in double; fp32: PyTorch's div_term formation in fp32
  // (tolerance.h has the error model of each).
  virtual AnglePrecision angle_precision() const = 0;
  // Validates (spec, sizes, |pos| <= kMaxAbsPosition) then computes. Throws InvalidInput.
  void table(const SinusoidalSpec& spec, std::span<const std::int64_t> positions,
             std::span<float> out) const;
  std::vector<float> table(const SinusoidalSpec& spec,
                           std::span<const std::int64_t> positions) const;

 protected:
  virtual void compute(const SinusoidalSpec& spec, std::span<const std::int64_t> positions,
                       std::span<float> out) const = 0;
};

// Learned absolute positions (seed 001): an embedding table [max_positions][d_model] indexed
// by position and added to token embeddings, broadcast over the batch.
class LearnedPositionTable {
 public:
  // Rows drawn from N(0, 1) with the given seed, as nn.Embedding initialises them.
  LearnedPositionTable(int max_positions, int d_model, std::uint64_t seed);
  LearnedPositionTable(int max_positions, int d_model, std::vector<float> weights);

  int max_positions() const { return max_positions_; }
  int d_model() const { return d_model_; }
  std::span<const float> row(std::int64_t position) const;  // throws InvalidInput out of range

  // out[t] = table[positions[t]], [tokens][d_model].
  std::vector<float> lookup(std::span<const std::int64_t> positions) const;
  // x is [batch][tokens][d_model]; adds table[positions[t]] to every batch entry's token t.
  void add_to(std::span<float> x, std::int64_t batch, std::span<const std::int64_t> positions) const;

 private:
  int max_positions_;
  int d_model_;
  std::vector<float> weights_;
};

}  // namespace ropecheck
