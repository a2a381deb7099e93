// qk_norm_rope/<level> (QK-norm fused before RoPE, in the engines' call forms) and
// norm_then_rope/<level> (its two passes), at every level this CPU runs, against the float64
// truth (oracle_norm_rope) within the derived bound (core/tolerance.h: the norm's
// qk_norm_relative_error, the rotation's rotation_bound_units of a pair (1 + delta) times as long,
// the attention factor, the storage's rounding):
// - every storage, both angle sources, both layouts, partial rotary, strided views (a packed qkv,
//   MLA's rope part of [nope | rope] heads, q and k with strides of their own), k absent, plain
//   and one_plus weights, calls without a norm, a YaRN scaling, head dims 64, 128, 256 and ones
//   whose vectors end part way (40, 6), threads 1 to 4;
// - every element outside the views' rows keeps its value;
// - the threads' split changes no bit, and in fp32 storage the two passes are the fused call bit
//   for bit (the normalized value is the same fp32 either way);
// - the check can fail: the fused call judged against the other weight convention's truth.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "core/frequency.h"
#include "core/isa.h"
#include "core/rope_form.h"
#include "core/storage.h"
#include "core/tolerance.h"
#include "impls/fused/rope_form_impl.h"
#include "impls/oracle/oracle_rope_form.h"
#include "impls/registry.h"

namespace ropecheck::qk_norm_rope_kernels_test {
namespace {

const std::span<const Isa> kLevels = built_levels();

// One shape: the spec's dims, the views, the buffer's size, tokens, threads, the norm.
struct Shape {
  std::string name;
  int head_dim, rotary_dim;
  HeadView q, k;
  std::int64_t elements, tokens;
  int threads;
  bool norm;
  NormWeight weight;
  bool yarn = false;
};

std::vector<Shape> shapes() {
  std::vector<Shape> s;
  {  // Qwen3-like packed qkv: 4 q, 2 k, 2 v heads of 128 a token
    const std::int64_t d = 128, row = 8 * d, tokens = 19;
    s.push_back({"packed_qkv_128", 128, 128, {4, 0, row, d}, {2, 4 * d, row, d}, tokens * row, tokens, 3, true,
                 NormWeight::plain});
  }
  {  // flat q of 64, no k, partial rotary, Gemma's 1 + w
    const std::int64_t d = 64, tokens = 9;
    s.push_back({"flat_q_only_64_partial", 64, 32, flat_view(3, d), {}, tokens * 3 * d, tokens, 1, true,
                 NormWeight::one_plus});
  }
  {  // 256: q and k in regions of their own, strides of their own, gaps, YaRN
    const std::int64_t d = 256, tokens = 5, q_row = 2 * d + 24, k_row = d + 40;
    const std::int64_t k_at = 8 + tokens * q_row;
    s.push_back({"separate_256_yarn", 256, 256, {2, 8, q_row, d + 12}, {1, k_at, k_row, d},
                 k_at + tokens * k_row + 8, tokens, 2, true, NormWeight::plain, true});
  }
  {  // MLA-like: the rope part (40 features, 24 rotary) at offset 16 of [nope 16 | rope 40] heads
    const std::int64_t d = 40, head = 56, tokens = 7, row = 3 * head + d;
    s.push_back({"mla_rope_part_40", 40, 24, {3, 16, row, head}, {1, 3 * head, row, d}, tokens * row, tokens, 4, true,
                 NormWeight::one_plus});
  }
  {  // the same, without a norm (the call form alone)
    const std::int64_t d = 40, head = 56, tokens = 7, row = 3 * head + d;
    s.push_back({"mla_rope_part_40_plain", 40, 24, {3, 16, row, head}, {1, 3 * head, row, d}, tokens * row, tokens, 2,
                 false, NormWeight::plain});
  }
  {  // tiny heads: every vector a remainder
    const std::int64_t d = 6, tokens = 11;
    s.push_back({"tiny_6", 6, 6, flat_view(2, d), flat_view(1, d, tokens * 2 * d), tokens * 3 * d, tokens, 1, true,
                 NormWeight::plain});
  }
  return s;
}

RopeSpec spec_of(const Shape& s, Layout layout) {
  RopeSpec spec;
  spec.head_dim = s.head_dim;
  spec.rotary_dim = s.rotary_dim;
  spec.layout = layout;
  spec.base = 1e6;
  if (s.yarn) {
    spec.scaling.kind = ScalingKind::yarn;
    spec.scaling.factor = 4;
    spec.scaling.original_max_position = 64;
  }
  return spec;
}

// A call's inputs, kept so the same call can be made again on a fresh copy.
struct Inputs {
  std::vector<std::byte> buffer;
  std::vector<std::int64_t> positions;
  std::vector<float> cache, q_weight, k_weight;
};

Inputs make_inputs(const Shape& s, const RopeSpec& spec, StorageType storage, AngleSource source, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> value(0.0f, 1.5f);
  std::uniform_real_distribution<float> weight(-0.6f, 1.4f);
  Inputs in;
  in.buffer.resize(static_cast<std::size_t>(s.elements * element_bytes(storage)));
  for (std::int64_t i = 0; i < s.elements; ++i) store_element(storage, in.buffer, i, value(rng));
  // Positions out of order, repeated, with a run (the rows' advance) and a large one.
  const std::int64_t rows = 3000;
  for (std::int64_t t = 0; t < s.tokens; ++t) {
    in.positions.push_back(t % 4 == 3 ? (t * 977) % rows : t + 30);
  }
  if (source == AngleSource::cos_sin_cache) in.cache = build_cos_sin_cache(spec, rows);
  for (int f = 0; f < s.head_dim; ++f) {
    in.q_weight.push_back(weight(rng));
    in.k_weight.push_back(weight(rng));
  }
  return in;
}

RopeFormCall make_call(const Shape& s, const RopeSpec& spec, StorageType storage, AngleSource source, Inputs& in,
                       int threads) {
  RopeFormCall call;
  call.spec = spec;
  call.storage = storage;
  call.buffer = in.buffer;
  call.tokens = s.tokens;
  call.q = s.q;
  call.k = s.k;
  call.positions = in.positions;
  call.angles = source;
  if (source == AngleSource::cos_sin_cache) {
    call.cos_sin_cache = in.cache;
    call.cache_rows = static_cast<std::int64_t>(in.cache.size()) / spec.rotary_dim;
  }
  call.has_norm = s.norm;
  call.norm.eps = 1e-6;
  call.norm.weight = s.weight;
  call.q_weight = in.q_weight;
  call.k_weight = in.k_weight;
  call.threads = threads;
  return call;
}

// The elements of `view`'s rows, gathered [tokens][heads][head_dim] as the oracle takes them.
std::vector<float> gather(const Shape& s, StorageType storage, std::span<const std::byte> buffer, const HeadView& view) {
  std::vector<float> x;
  for (std::int64_t t = 0; t < s.tokens; ++t) {
    for (std::int64_t h = 0; h < view.heads; ++h) {
      for (int f = 0; f < s.head_dim; ++f) x.push_back(load_element(storage, buffer, row_start(view, t, h) + f));
    }
  }
  return x;
}

// Checks `after` (the call's buffer) against the truth of `before` within the derived bound;
// returns the failures' descriptions (the first few).
std::vector<std::string> judge(const Shape& s, const RopeSpec& spec, StorageType storage, NormPrecision precision,
                               const Inputs& before, std::span<const std::byte> after, NormWeight truth_weight) {
  std::vector<std::string> failures;
  const auto fail = [&](std::string what) {
    if (failures.size() < 5) failures.push_back(std::move(what));
  };
  const double a = attention_factor(spec);
  const double delta = s.norm ? qk_norm_relative_error(s.head_dim, precision, storage) : 0.0;
  const ErrorModel model = error_model(spec, storage);
  const std::vector<double> theta = inverse_frequencies(spec);
  const int pairs = spec.rotary_dim / 2;
  QkNorm norm;
  norm.eps = 1e-6;
  norm.weight = truth_weight;
  norm.precision = precision;
  for (const bool of_q : {true, false}) {
    const HeadView& view = of_q ? s.q : s.k;
    if (view.heads == 0) continue;
    const std::vector<float> x = gather(s, storage, before.buffer, view);
    const NormRopeTruth truth = oracle_norm_rope(spec, s.norm ? &norm : nullptr, of_q ? before.q_weight : before.k_weight,
                                                 x, s.tokens, view.heads, before.positions);
    for (std::int64_t t = 0; t < s.tokens; ++t) {
      const std::int64_t m = before.positions[static_cast<std::size_t>(t)];
      for (std::int64_t h = 0; h < view.heads; ++h) {
        const std::size_t at = static_cast<std::size_t>((t * view.heads + h) * s.head_dim);
        for (int f = 0; f < s.head_dim; ++f) {
          const double got = load_element(storage, after, row_start(view, t, h) + f);
          const double want = truth.rotated[at + static_cast<std::size_t>(f)];
          double bound;
          if (f < spec.rotary_dim) {
            const int i = spec.layout == Layout::interleaved ? f / 2 : f % pairs;
            const int fa = spec.layout == Layout::interleaved ? 2 * i : i;
            const int fb = spec.layout == Layout::interleaved ? 2 * i + 1 : i + pairs;
            const double pair = std::hypot(truth.normalized[at + static_cast<std::size_t>(fa)],
                                           truth.normalized[at + static_cast<std::size_t>(fb)]);
            const double units = a * delta / kEps32 +
                                 rotation_bound_units(model, m, theta[static_cast<std::size_t>(i)], i) * (1 + delta);
            bound = kEps32 * unit_pair_norm(storage, a, pair) * units;
          } else {
            const double hat = std::abs(truth.normalized[at + static_cast<std::size_t>(f)]);
            bound = delta * hat + storage_rounding_error(storage, hat * (1 + delta));
          }
          if (!(std::abs(got - want) <= bound)) {
            fail(fmt::format("{} token {} head {} feature {}: {} where the truth is {} (bound {:.3g}, error {:.3g})",
                             of_q ? "q" : "k", t, h, f, got, want, bound, std::abs(got - want)));
          }
        }
      }
    }
  }
  // Everything outside the rows keeps its value.
  std::vector<bool> in_rows(static_cast<std::size_t>(s.elements), false);
  for (const HeadView* view : {&s.q, &s.k}) {
    for (std::int64_t t = 0; t < s.tokens; ++t) {
      for (std::int64_t h = 0; h < view->heads; ++h) {
        for (int f = 0; f < s.head_dim; ++f) in_rows[static_cast<std::size_t>(row_start(*view, t, h) + f)] = true;
      }
    }
  }
  const int bytes = element_bytes(storage);
  for (std::int64_t i = 0; i < s.elements; ++i) {
    if (in_rows[static_cast<std::size_t>(i)]) continue;
    if (std::memcmp(after.data() + i * bytes, before.buffer.data() + i * bytes, static_cast<std::size_t>(bytes)) != 0) {
      fail(fmt::format("element {}, outside the views' rows, was written", i));
    }
  }
  return failures;
}

std::vector<const RopeFormImpl*> available(std::string_view kind) {
  std::vector<const RopeFormImpl*> impls;
  for (const Isa level : kLevels) {
    const RopeFormImpl* impl = find_rope_form(fmt::format("{}/{}", kind, to_string(level)));
    EXPECT_NE(impl, nullptr) << kind << "/" << to_string(level) << " is not registered";
    if (impl != nullptr && impl->available()) impls.push_back(impl);
  }
  return impls;
}

void check_all(std::string_view kind, NormPrecision precision) {
  unsigned seed = 1;
  for (const RopeFormImpl* impl : available(kind)) {
    for (const Shape& s : shapes()) {
      for (const StorageType storage : {StorageType::fp32, StorageType::bf16, StorageType::fp16}) {
        for (const AngleSource source : {AngleSource::spec, AngleSource::cos_sin_cache}) {
          for (const Layout layout : {Layout::interleaved, Layout::half_split}) {
            const RopeSpec spec = spec_of(s, layout);
            const Inputs before = make_inputs(s, spec, storage, source, ++seed);
            Inputs in = before;
            RopeFormCall call = make_call(s, spec, storage, source, in, s.threads);
            call.norm.precision = precision;
            impl->apply(call);
            const auto failures = judge(s, spec, storage, precision, before, in.buffer, s.weight);
            EXPECT_TRUE(failures.empty()) << impl->id() << " " << s.name << " " << to_string(storage) << " "
                                          << to_string(source) << " " << to_string(layout) << ":\n  "
                                          << fmt::format("{}", fmt::join(failures, "\n  "));
          }
        }
      }
    }
  }
}

TEST(QkNormRopeKernels, EveryLevelWithinTheDerivedBoundOfTheTruthInEveryForm) {
  check_all("qk_norm_rope", NormPrecision::fp32);
}

TEST(QkNormRopeKernels, TwoPassesWithinTheirStoragePrecisionBound) {
  check_all("norm_then_rope", NormPrecision::storage);
}

TEST(QkNormRopeKernels, ThreadsChangeNoBitAndFp32TwoPassesAreTheFusedCall) {
  const Shape s = shapes()[0];
  for (const RopeFormImpl* impl : available("qk_norm_rope")) {
    const RopeFormImpl* two_pass = find_rope_form(fmt::format("norm_then_rope/{}", impl->rope_capabilities().isa));
    ASSERT_NE(two_pass, nullptr);
    for (const StorageType storage : {StorageType::fp32, StorageType::bf16}) {
      for (const AngleSource source : {AngleSource::spec, AngleSource::cos_sin_cache}) {
        for (const Layout layout : {Layout::half_split, Layout::interleaved}) {
          const RopeSpec spec = spec_of(s, layout);
          const Inputs before = make_inputs(s, spec, storage, source, 7);
          Inputs one = before, many = before;
          impl->apply(make_call(s, spec, storage, source, one, 1));
          impl->apply(make_call(s, spec, storage, source, many, 4));
          EXPECT_EQ(one.buffer, many.buffer) << impl->id() << " " << to_string(storage) << " " << to_string(source);
          // The same bits as the two passes in fp32 where the fused call normalizes as they do (x r,
          // then w', then the rotation). Half-split heads of 64, 128 or 256 take the levels' fast
          // path, which folds w' into the angles (w' c: as many roundings, other bits; within the
          // bound, EveryLevelWithinTheDerivedBoundOfTheTruthInEveryForm).
          if (storage != StorageType::fp32 || layout == Layout::half_split) continue;
          Inputs passes = before;
          RopeFormCall call = make_call(s, spec, storage, source, passes, 2);
          call.norm.precision = NormPrecision::storage;
          two_pass->apply(call);
          EXPECT_EQ(one.buffer, passes.buffer) << two_pass->id() << " " << to_string(source);
        }
      }
    }
  }
}

TEST(QkNormRopeKernels, TheCheckCatchesTheOtherWeightConvention) {
  // Judged against plain weights' truth, Gemma's 1 + w must be far outside the bound.
  const Shape s = shapes()[1];
  for (const RopeFormImpl* impl : available("qk_norm_rope")) {
    const RopeSpec spec = spec_of(s, Layout::half_split);
    const Inputs before = make_inputs(s, spec, StorageType::fp32, AngleSource::spec, 3);
    Inputs in = before;
    impl->apply(make_call(s, spec, StorageType::fp32, AngleSource::spec, in, 1));
    EXPECT_FALSE(judge(s, spec, StorageType::fp32, NormPrecision::fp32, before, in.buffer, NormWeight::plain).empty())
        << impl->id();
    EXPECT_TRUE(judge(s, spec, StorageType::fp32, NormPrecision::fp32, before, in.buffer, NormWeight::one_plus).empty())
        << impl->id();
  }
}

// Non-finite inputs on the levels' fast path (half-split heads of 128): a NaN and two infinities
// in three heads, then also a NaN in one token's cache row (every head of that token folds it into
// its coefficients). Each result must be NaN, infinite or finite where the scalar level's is: the
// fast path's 16-bit narrowing drops its NaN case only for heads that cannot produce one.
TEST(QkNormRopeKernels, NonFiniteInputsGiveTheScalarLevelsClassOfResult) {
  const Shape s = shapes()[0];
  const RopeFormImpl* scalar = find_rope_form("qk_norm_rope/scalar");
  ASSERT_NE(scalar, nullptr);
  const auto kind = [](double v) { return std::isnan(v) ? 0 : std::isinf(v) ? (v > 0 ? 1 : 2) : 3; };
  for (const StorageType storage : {StorageType::fp32, StorageType::bf16, StorageType::fp16}) {
    const RopeSpec spec = spec_of(s, Layout::half_split);
    Inputs before = make_inputs(s, spec, storage, AngleSource::cos_sin_cache, 11);
    store_element(storage, before.buffer, row_start(s.q, 1, 0) + 5, std::nanf(""));
    store_element(storage, before.buffer, row_start(s.q, 2, 3) + 70, INFINITY);
    store_element(storage, before.buffer, row_start(s.k, 4, 1) + 9, -INFINITY);
    for (int run = 0; run < 2; ++run) {
      Inputs in = before;
      // All payload bits set: rounded without its NaN case, the carry would reach the sign.
      if (run == 1) {
        in.cache[static_cast<std::size_t>(in.positions[5] * spec.rotary_dim + 20)] = std::bit_cast<float>(0x7FFFFFFFu);
      }
      Inputs truth = in;
      scalar->apply(make_call(s, spec, storage, AngleSource::cos_sin_cache, truth, 1));
      for (const RopeFormImpl* impl : available("qk_norm_rope")) {
        Inputs got = in;
        impl->apply(make_call(s, spec, storage, AngleSource::cos_sin_cache, got, 1));
        int mismatches = 0;
        for (std::int64_t i = 0; i < s.elements; ++i) {
          const double want = load_element(storage, truth.buffer, i), have = load_element(storage, got.buffer, i);
          if (kind(want) != kind(have) && ++mismatches <= 3) {
            ADD_FAILURE() << impl->id() << " " << to_string(storage) << " run " << run << " element " << i << ": " << have
                          << ", the scalar level " << want;
          }
        }
      }
    }
  }
}

TEST(QkNormRopeKernels, LevelsTheCpuLacksSayWhy) {
  for (const Isa level : kLevels) {
    for (const std::string_view kind : {"qk_norm_rope", "norm_then_rope"}) {
      const RopeFormImpl* impl = find_rope_form(fmt::format("{}/{}", kind, to_string(level)));
      ASSERT_NE(impl, nullptr);
      std::string why;
      EXPECT_EQ(impl->available(&why), cpu_supports(level));
      if (!cpu_supports(level)) {
        EXPECT_FALSE(why.empty()) << impl->id();
      }
    }
  }
}

}  // namespace
}  // namespace ropecheck::qk_norm_rope_kernels_test
