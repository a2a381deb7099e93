// One call in an engine's form, owned, for the tests of call-form implementations outside the
// properties (the Python forms, the torch peers): q and k as the engines lay them in one buffer
// (flat, a packed qkv, MLA's q_pe parts, views with gaps, k absent), every element a value, angles
// from the spec or the cos/sin cache, QK-norm with a checkpoint's weights. Each test judges it its
// own way.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "core/rope_form.h"
#include "impls/fused/rope_form_impl.h"

namespace ropecheck::test {

// Where q and k lie in the buffer, as the engines hand them over.
enum class Views {
  flat,        // q [T, Hq * d], then k [T, Hk * d]
  packed_qkv,  // [T, (Hq + 2 Hk) d]: q, k, v of a token side by side (v untouched)
  mla,         // q heads [nope | rope] (the view: the rope parts), then k_pe beside the latent kv_c
  gapped,      // q heads and k heads with gaps between them and between tokens; k heads adjacent
  q_only,      // k absent
};
inline constexpr Views kAllViews[] = {Views::flat, Views::packed_qkv, Views::mla, Views::gapped, Views::q_only};
inline std::string_view views_name(Views views) {
  constexpr std::string_view kNames[] = {"flat", "packed_qkv", "mla", "gapped", "q_only"};
  return kNames[static_cast<int>(views)];
}

struct FormShape {
  Views views = Views::flat;
  StorageType storage = StorageType::fp32;
  AngleSource angles = AngleSource::cos_sin_cache;
  Layout layout = Layout::half_split;
  bool partial = false;  // rotary_dim = head_dim / 2
  bool norm = false;
  NormWeight weight = NormWeight::plain;
  NormPrecision precision = NormPrecision::fp32;
  AnglePrecision angle_precision = AnglePrecision::fp32;
  float amplitude = 0;  // 0: each head's in [0.25, 4]; else every value in [-amplitude, amplitude]
};

// One call's operands, owned; the buffer as it was before the call.
struct FormCase {
  FormShape shape;
  RopeSpec spec;
  std::vector<std::byte> buffer;
  std::int64_t tokens = 0;
  HeadView q, k;
  std::vector<std::int64_t> positions;
  std::vector<float> cache;
  std::int64_t cache_rows = 0;
  QkNorm norm;
  std::vector<float> q_weight, k_weight;

  RopeFormCall call(std::vector<std::byte>& out) const {
    out = buffer;
    RopeFormCall c;
    c.spec = spec;
    c.storage = shape.storage;
    c.buffer = out;
    c.tokens = tokens;
    c.q = q;
    c.k = k;
    c.positions = positions;
    c.angles = shape.angles;
    c.cos_sin_cache = cache;
    c.cache_rows = cache_rows;
    c.has_norm = shape.norm;
    c.norm = norm;
    c.q_weight = q_weight;
    c.k_weight = k_weight;
    return c;
  }
  std::string what() const {
    std::vector<std::byte> scratch;
    return std::string(views_name(shape.views)) + ": " + describe(call(scratch));
  }
};

inline FormCase form_case(const FormShape& shape, unsigned seed) {
  std::mt19937 rng(seed);
  const auto pick = [&](std::int64_t lo, std::int64_t hi) { return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng); };
  FormCase c;
  c.shape = shape;
  const bool mla = shape.views == Views::mla;
  const std::int64_t d = mla ? 64 : std::int64_t{32} << pick(0, 2);  // DeepSeek's q_pe is 64 wide
  c.spec.head_dim = static_cast<int>(d);
  c.spec.rotary_dim = shape.partial ? c.spec.head_dim / 2 : c.spec.head_dim;
  c.spec.layout = shape.layout;
  c.spec.base = pick(0, 1) == 0 ? 10000.0 : 1000000.0;
  c.spec.angle_precision = shape.angle_precision;
  c.tokens = pick(3, 7);
  const std::int64_t t = c.tokens, hq = pick(2, 4), hk = mla ? 1 : pick(2, 3);
  std::int64_t elements = 0;
  switch (shape.views) {
    case Views::flat:
    case Views::q_only:
      c.q = flat_view(hq, d);
      c.k = flat_view(hk, d, t * hq * d);
      elements = t * (hq + hk) * d;
      break;
    case Views::packed_qkv:
      c.q = {hq, 0, (hq + 2 * hk) * d, d};
      c.k = {hk, hq * d, (hq + 2 * hk) * d, d};
      elements = t * (hq + 2 * hk) * d;
      break;
    case Views::mla: {  // q: [T, Hq, nope 128 | rope 64]; then [T, kv_c 96 | k_pe 64]
      const std::int64_t nope = 128, latent = 96;
      c.q = {hq, nope, hq * (nope + d), nope + d};
      c.k = {1, t * hq * (nope + d) + latent, latent + d, d};
      elements = t * hq * (nope + d) + t * (latent + d);
      break;
    }
    case Views::gapped: {  // per token: q heads each d + 8 apart, k heads adjacent, then 24 spare
      const std::int64_t stride = hq * (d + 8) + hk * d + 24;
      c.q = {hq, 8, stride, d + 8};
      c.k = {hk, 8 + hq * (d + 8), stride, d};
      elements = t * stride + 8;
      break;
    }
  }
  if (shape.views == Views::q_only) c.k = HeadView{};
  c.buffer.resize(static_cast<std::size_t>(elements * element_bytes(shape.storage)));
  // Every element a value (the untouched ones too: a bug that moves them shows), each head's
  // amplitude its own so that the norm has work to do.
  std::uniform_real_distribution<float> unit(-1.0f, 1.0f), amplitude(0.25f, 4.0f);
  for (std::int64_t e = 0; e < elements; e += d) {
    const float a = shape.amplitude > 0 ? shape.amplitude : amplitude(rng);
    for (std::int64_t f = e; f < std::min(elements, e + d); ++f) store_element(shape.storage, c.buffer, f, a * unit(rng));
  }
  if (shape.angles == AngleSource::cos_sin_cache) {
    c.cache_rows = 4096;
    c.cache = build_cos_sin_cache(c.spec, c.cache_rows);
    for (std::int64_t i = 0; i < t; ++i) c.positions.push_back(pick(0, c.cache_rows - 1));
  } else {
    for (std::int64_t i = 0; i < t; ++i) c.positions.push_back(pick(-(1 << 16), 1 << 16));
  }
  if (shape.norm) {
    c.norm = QkNorm{1e-6, shape.weight, shape.precision};
    // Checkpoints' weights: around 1 for the plain convention, around 0 for 1 + w.
    std::uniform_real_distribution<float> w(shape.weight == NormWeight::plain ? 0.5f : -0.5f,
                                            shape.weight == NormWeight::plain ? 1.5f : 0.5f);
    for (std::int64_t f = 0; f < d; ++f) {
      c.q_weight.push_back(w(rng));
      c.k_weight.push_back(w(rng));
    }
  }
  return c;
}

// The buffer an implementation left after the call on a copy of the case's.
inline std::vector<std::byte> run_form(const RopeFormImpl& impl, const FormCase& c) {
  std::vector<std::byte> out;
  impl.apply(c.call(out));
  return out;
}

}  // namespace ropecheck::test
