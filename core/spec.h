// RopeSpec: everything that defines one RoPE rotation, independent of how it is computed.
//
// Pairs and frequencies (i in [0, rotary_dim/2)):
//   theta_i = base^(-2i / rotary_dim)   (the exponent uses rotary_dim: partial rotary as in HF),
//   then scaled as spec.scaling says (scaling.h), and cos/sin times the attention factor
//   interleaved: pair i = features (2i, 2i+1)               [x0 y0 x1 y1 ... | tail]
//   half_split:  pair i = features (i, i + rotary_dim/2)    [x0 x1 ... y0 y1 ... | tail]
// Features [rotary_dim, head_dim) pass through unchanged, bit for bit.
// Multi-axis RoPE (spec.axes, position_axes.h) gives a token one position per axis and each pair
// the position of its axis (and, for vision, its section's frequency).
// The backward pass (spec.pass) is the same rotation transposed: see Pass.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/position_axes.h"
#include "core/scaling.h"

namespace ropecheck {

enum class Layout {
  interleaved,  // RoFormer paper, Meta LLaMA, GPT-J, ggml NORM
  half_split,   // HF transformers, GPT-NeoX, ggml NEOX
};

// How an implementation forms the angle m * theta_i before taking sin/cos.
enum class AnglePrecision {
  fp32,  // float(m) * float(theta_i) in fp32, as HF does: error grows like |m theta| * eps32
  fp64,  // the product in double: error flat in position at fp32 output scale
  // theta = float(m), then theta *= theta_scale pair by pair in fp32, theta_scale =
  // powf(base, -2/rotary_dim) (ggml's rope cache, cached-theta kernels): the relative error
  // grows with the pair index i as well as with |m theta_i|
  fp32_recurrence,
};

// Which pass of RoPE a call computes. The forward rotates x: y = a R(m) x on the rotary features,
// the tail copied. The backward takes the gradient of the loss with respect to y in q and k and
// returns the one with respect to x: dx = a R(m)^T dy = a R(-m) dy (R is orthogonal), for every
// scaling form and axis mode alike; the attention factor a multiplies the gradient too, and the
// tail's gradient passes through unchanged. One rotation, so one set of bounds (tolerance.h).
enum class Pass {
  forward,
  backward,
};
inline constexpr Pass kAllPasses[] = {Pass::forward, Pass::backward};

struct RopeSpec {
  int head_dim = 128;
  int rotary_dim = 128;
  double base = 10000.0;
  Layout layout = Layout::interleaved;
  AnglePrecision angle_precision = AnglePrecision::fp64;
  RopeScaling scaling;  // frequency scaling (scaling.h); none by default
  PositionAxes axes;    // positions on several axes (position_axes.h); one axis by default
  Pass pass = Pass::forward;  // the rotation, or its gradient (above)
};

// Positions per token: 1, or the multi-axis mode's axes (position_axes.h).
inline int axis_count(const RopeSpec& spec) { return axis_count(spec.axes); }

// Positions are limited to |m| <= 2^24, the range in which every integer is exact in fp32
// (the HF form converts positions to float); negative positions are valid (R_-m = R_m^-1).
inline constexpr std::int64_t kMaxAbsPosition = std::int64_t{1} << 24;
inline constexpr int kMaxHeadDim = 1 << 16;

// Throws InvalidInput naming what is wrong: odd or non-positive head_dim, odd, non-positive or
// too large rotary_dim, non-finite or non-positive base, a base of 1 (no rotation at all),
// bad scaling parameters (scaling.h), bad sections (position_axes.h), vision axes with scaling.
void validate(const RopeSpec& spec);

std::string_view to_string(Layout layout);
std::string_view to_string(AnglePrecision precision);
std::string_view to_string(Pass pass);
Layout parse_layout(std::string_view text);                     // throws InvalidInput
AnglePrecision parse_angle_precision(std::string_view text);    // throws InvalidInput
Pass parse_pass(std::string_view text);                          // throws InvalidInput
std::string describe(const RopeSpec& spec);
std::string describe(const RopeScaling& scaling);  // "scaling=yarn factor=4 ..."  // one line, for counterexamples and logs

}  // namespace ropecheck
