// Plugin ABI 5 (plugin.h, apply_rope_cache) through the host (plugins/host/plugin_rope_cache.h):
// the example fused_cache_rope.so as a RopeCacheImpl agrees with oracle_rope_and_cache on random
// calls in every layout, storage and direction and leaves every unaddressed cache byte as it was;
// each of its bug builds differs where its bug says (so the host hands back what the plugin did,
// not what it was given); a crash or a write past the cache is a clear PluginFailure; an ABI 4
// plugin has no fused side; `ropecheck list --json --plugin` shows the fused capabilities.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "core/frequency.h"
#include "core/kv_cache.h"
#include "core/tolerance.h"
#include "impls/oracle/oracle_kv_cache.h"
#include "plugins/host/plugin_host.h"
#include "plugins/host/plugin_rope_cache.h"
#include "plugins/host/plugin_subjects.h"
#include "tests/support/fused_call.h"
#include "tests/support/test_process.h"

namespace ropecheck {
namespace plugin_fused_test {

using test::built_plugin;

// One fused call's inputs and outputs, owned (tests/support/fused_call.h), and the caches' fill
// before the call.
struct FusedCase : test::FusedCallBuffers {
  std::vector<std::byte> k_before, v_before;

  std::string describe() const {
    return fmt::format("{} {} {} block_size {} blocks {} kv_heads {} head_dim {} latent {} q_heads {} tokens {} "
                       "scales k [{}] v [{}] slots [{}]",
                       to_string(cache.layout), to_string(cache.storage), to_string(cache.scale_direction),
                       cache.block_size, cache.blocks, cache.kv_heads, cache.head_dim, cache.latent_dim, q_heads,
                       tokens, fmt::join(cache.k_scale, ","), fmt::join(cache.v_scale, ","), fmt::join(slots, ","));
  }
};

// The caches filled with random bytes before the call: an unaddressed byte must keep its value,
// whatever it is (a NaN pattern included).
void fill_caches_randomly(FusedCase& c, std::mt19937_64& rng) {
  std::uniform_int_distribution<int> byte(0, 255);
  test::fill_caches(c, [&] { return static_cast<std::byte>(byte(rng)); });
  c.k_before = c.k_cache;
  c.v_before = c.v_cache;
}

template <typename T>
T pick(std::mt19937_64& rng, std::initializer_list<T> values) {
  std::uniform_int_distribution<std::size_t> at(0, values.size() - 1);
  return *(values.begin() + static_cast<std::ptrdiff_t>(at(rng)));
}

// A random call: the engines' block sizes, slots drawn without repeats from the whole cache (so
// they cross blocks, share blocks, leave gaps and come in any order), about one token in five
// padding (-1), values up to a few thousand so that an FP8 write saturates now and then.
FusedCase random_case(std::mt19937_64& rng, CacheLayout layout, CacheStorage storage, ScaleDirection direction) {
  FusedCase c;
  const bool mla = layout == CacheLayout::mla;
  c.cache.layout = layout;
  c.cache.storage = storage;
  c.cache.scale_direction = direction;
  c.cache.padding = PaddingRule::rotate_q_only;  // the example's rule
  c.cache.block_size = pick<std::int64_t>(rng, {16, 32, 64, 128});
  c.cache.blocks = std::uniform_int_distribution<std::int64_t>(1, 4)(rng);
  c.cache.kv_heads = mla ? 1 : std::uniform_int_distribution<std::int64_t>(1, 3)(rng);
  c.cache.head_dim = pick<std::int64_t>(rng, {8, 16, 64});
  c.cache.latent_dim = mla ? pick<std::int64_t>(rng, {16, 72}) : 0;
  std::uniform_real_distribution<float> scale(0.05f, 4.0f);
  if (is_fp8(storage)) {
    const bool per_head = std::bernoulli_distribution(0.5)(rng);
    const auto count = static_cast<std::size_t>(per_head ? c.cache.kv_heads : 1);
    for (std::size_t i = 0; i < count; ++i) c.cache.k_scale.push_back(scale(rng));
    if (!mla) {
      for (std::size_t i = 0; i < count; ++i) c.cache.v_scale.push_back(scale(rng));
    }
  }
  c.spec.head_dim = static_cast<int>(c.cache.head_dim);
  c.spec.rotary_dim = std::bernoulli_distribution(0.25)(rng) ? c.spec.head_dim / 2 : c.spec.head_dim;
  if (c.spec.rotary_dim % 2 != 0) c.spec.rotary_dim = c.spec.head_dim;
  c.spec.layout = pick<Layout>(rng, {Layout::interleaved, Layout::half_split});
  c.spec.angle_precision = AnglePrecision::fp64;
  const std::int64_t slots = cache_slots(c.cache);
  c.tokens = std::uniform_int_distribution<std::int64_t>(1, std::min<std::int64_t>(slots, 40))(rng);
  c.q_heads = c.cache.kv_heads * std::uniform_int_distribution<std::int64_t>(1, 2)(rng);
  std::vector<std::int64_t> all(static_cast<std::size_t>(slots));
  for (std::int64_t s = 0; s < slots; ++s) all[static_cast<std::size_t>(s)] = s;
  std::shuffle(all.begin(), all.end(), rng);
  std::bernoulli_distribution padding(0.2);
  for (std::int64_t t = 0; t < c.tokens; ++t) {
    c.slots.push_back(padding(rng) ? -1 : all[static_cast<std::size_t>(t)]);
    c.positions.push_back(std::uniform_int_distribution<std::int64_t>(0, 4096)(rng));
  }
  const float amplitude = pick<float>(rng, {1.0f, 100.0f, 3000.0f});
  std::uniform_real_distribution<float> value(-amplitude, amplitude);
  const auto fill = [&](std::vector<float>& x, std::int64_t n) {
    x.resize(static_cast<std::size_t>(n));
    for (auto& e : x) e = value(rng);
  };
  fill(c.q, c.tokens * c.q_heads * c.cache.head_dim);
  fill(c.k, c.tokens * c.cache.kv_heads * c.cache.head_dim);
  fill(c.v, c.tokens * c.cache.kv_heads * (mla ? c.cache.latent_dim : c.cache.head_dim));
  fill_caches_randomly(c, rng);
  return c;
}

// Bound on |rotated - truth| of each feature of one head's row of `x` (fp64 angles, fp32
// storage): rotation_bound_units times eps32 times the pair's norm (as unit_pair_norm has it), the
// rotary pairs only; 0 for the tail, which passes through.
std::vector<double> rotation_bounds(const RopeSpec& spec, std::span<const float> row, std::int64_t position) {
  const ErrorModel model = error_model(spec, StorageType::fp32);
  const std::vector<double> theta = inverse_frequencies(spec);
  std::vector<double> bound(row.size(), 0.0);
  for (int i = 0; i < spec.rotary_dim / 2; ++i) {
    const bool interleaved = spec.layout == Layout::interleaved;
    const auto a = static_cast<std::size_t>(interleaved ? 2 * i : i);
    const auto b = static_cast<std::size_t>(interleaved ? 2 * i + 1 : i + spec.rotary_dim / 2);
    const double norm = unit_pair_norm(StorageType::fp32, model.attention_factor, std::hypot(row[a], row[b]));
    const double e = rotation_bound_units(model, position, theta[static_cast<std::size_t>(i)], i) * kEps32 * norm;
    bound[a] = bound[b] = e;
  }
  return bound;
}

// Whether `got` (a cache element read back, in the stored domain) is the write of `truth` (the
// exact stored-domain value) for an input that was off by at most `input_error` (k's rotation; 0
// for v) and is taken into the stored domain times `factor` (s or 1/s; 1 without FP8):
//   fp32: the input as is, |got - truth| <= input_error;
//   bf16, fp16: plus one rounding of the result, storage_rounding_error;
//   FP8: y = fl32(x * s) or fl32(x / s) is off by delta = input_error * factor + u32 |x factor|,
//   then rounded once, fp8_rounding_error(y); where |y| passes the largest value the write
//   saturates to it exactly, so surely past it (|truth| - delta > max) got must be +-max with
//   truth's sign, and never Inf or NaN.
bool written_within(CacheStorage storage, double factor, double truth, double input_error, float got,
                    std::string* why) {
  double bound = input_error * factor;
  if (is_fp8(storage)) {
    const Fp8Format format = fp8_format(storage);
    const double max = fp8_traits(format).max;
    bound += kUnitRoundoff32 * (std::abs(truth) + bound);
    if (!std::isfinite(got)) {
      *why = fmt::format("{} is not finite (truth {})", got, truth);
      return false;
    }
    if (std::abs(truth) - bound > max) {
      *why = fmt::format("{} is past the largest value {} and not saturated to it", truth, max);
      return got == std::copysign(max, truth);
    }
    bound += fp8_rounding_error(format, std::min(std::abs(truth) + bound, max));
  } else if (storage != CacheStorage::fp32) {
    const StorageType s = storage == CacheStorage::bf16 ? StorageType::bf16 : StorageType::fp16;
    bound += storage_rounding_error(s, std::abs(truth) + bound);
  }
  *why = fmt::format("|{} - {}| > {}", got, truth, bound);
  return std::abs(static_cast<double>(got) - truth) <= bound;
}

// The call's result against the oracle's truth: q within the RoPE bound, every addressed cache
// element within written_within(), every other cache byte bit-identical to its fill.
void expect_agrees_with_oracle(const FusedCase& c, const std::vector<float>& q_after) {
  const FusedCacheTruth truth = oracle_rope_and_cache(c.spec, c.cache, c.q, c.q_heads, c.k, c.v, c.tokens,
                                                      c.positions, c.slots);
  const std::int64_t d = c.cache.head_dim;
  for (std::int64_t t = 0; t < c.tokens; ++t) {
    for (std::int64_t h = 0; h < c.q_heads; ++h) {
      const auto at = static_cast<std::size_t>((t * c.q_heads + h) * d);
      const auto bounds = rotation_bounds(c.spec, std::span(c.q).subspan(at, static_cast<std::size_t>(d)),
                                          c.positions[static_cast<std::size_t>(t)]);
      for (std::int64_t f = 0; f < d; ++f) {
        const auto i = at + static_cast<std::size_t>(f);
        ASSERT_LE(std::abs(q_after[i] - truth.q[i]), bounds[static_cast<std::size_t>(f)])
            << "q token " << t << " head " << h << " feature " << f << "; " << c.describe();
      }
    }
  }
  // The stored-domain input error of each element the truth addresses: k's rotation bound, 0 for v.
  const bool mla = c.cache.layout == CacheLayout::mla;
  std::vector<double> k_error(truth.written.size(), 0.0);
  for (std::int64_t t = 0; t < c.tokens; ++t) {
    const std::int64_t slot = c.slots[static_cast<std::size_t>(t)];
    if (slot < 0) continue;
    for (std::int64_t h = 0; h < c.cache.kv_heads; ++h) {
      const auto at = static_cast<std::size_t>((t * c.cache.kv_heads + h) * d);
      const auto bounds = rotation_bounds(c.spec, std::span(c.k).subspan(at, static_cast<std::size_t>(d)),
                                          c.positions[static_cast<std::size_t>(t)]);
      for (std::int64_t f = 0; f < d; ++f) {
        const auto index = cache_index(c.cache, slot, h, (mla ? c.cache.latent_dim : 0) + f);
        k_error[static_cast<std::size_t>(index)] = bounds[static_cast<std::size_t>(f)];
      }
    }
  }
  const std::int64_t features = row_features(c.cache);
  const int bytes = element_bytes(c.cache.storage);
  for (const bool of_v : {false, true}) {
    if (of_v && mla) continue;
    const std::vector<std::byte>& got = of_v ? c.v_cache : c.k_cache;
    const std::vector<std::byte>& before = of_v ? c.v_before : c.k_before;
    const std::vector<double>& want = of_v ? truth.v_cache : truth.k_cache;
    for (std::size_t i = 0; i < truth.written.size(); ++i) {
      const std::size_t at = i * static_cast<std::size_t>(bytes);
      if (!truth.written[i]) {
        ASSERT_EQ(std::memcmp(got.data() + at, before.data() + at, static_cast<std::size_t>(bytes)), 0)
            << (of_v ? "v" : "k") << " cache element " << i << " was not addressed but changed; " << c.describe();
        continue;
      }
      // The element's kv head, for its scale: NHD's and HND's index formulas (kv_cache.h).
      const auto e = static_cast<std::int64_t>(i);
      const std::int64_t head = c.cache.layout == CacheLayout::hnd ? (e / (c.cache.block_size * features)) % c.cache.kv_heads
                                                                   : (e / features) % c.cache.kv_heads;
      const double scale = cache_scale(c.cache, !of_v, head);
      const double factor = c.cache.scale_direction == ScaleDirection::multiply ? scale : 1.0 / scale;
      const float value = read_cache_element(c.cache.storage, got, e);
      std::string why;
      ASSERT_TRUE(written_within(c.cache.storage, is_fp8(c.cache.storage) ? factor : 1.0, want[i],
                                 of_v ? 0.0 : k_error[i], value, &why))
          << (of_v ? "v" : "k") << " cache element " << i << ": " << why << "; " << c.describe();
    }
  }
}

std::shared_ptr<const RopeCacheImpl> load_fused(const std::string& name) {
  PluginLibrary library = load_plugin_library(built_plugin(name));
  if (library.rope_cache == nullptr) throw std::runtime_error(name + " has no fused side");
  return std::move(library.rope_cache);
}

TEST(RopeCachePlugin, TheExampleAgreesWithTheOracleInEveryLayoutStorageAndDirection) {
  const auto impl = load_fused("fused_cache_rope");
  EXPECT_EQ(impl->id(), "plugin/fused_cache_rope");
  std::mt19937_64 rng(56);
  int calls = 0;
  for (const CacheLayout layout : {CacheLayout::nhd, CacheLayout::hnd, CacheLayout::mla}) {
    for (const CacheStorage storage : {CacheStorage::fp32, CacheStorage::bf16, CacheStorage::fp16,
                                       CacheStorage::fp8_e4m3, CacheStorage::fp8_e5m2}) {
      for (const ScaleDirection direction : {ScaleDirection::multiply, ScaleDirection::divide}) {
        for (int n = 0; n < 6; ++n) {
          FusedCase c = random_case(rng, layout, storage, direction);
          std::vector<float> q_after = c.q;
          RopeCacheCall call = c.call();
          call.q = q_after;
          impl->apply(call);
          expect_agrees_with_oracle(c, q_after);
          if (HasFatalFailure()) return;
          ++calls;
        }
      }
    }
  }
  EXPECT_EQ(calls, 3 * 5 * 2 * 6);
}

// ---- the bug builds: each differs where its bug says -------------------------------------------

// A small fixed call: NHD fp32, 16 blocks of 16 (so that a swapped block and offset stay in the
// cache), 2 kv heads, the last slot free, one padding token.
FusedCase fixed_case(CacheStorage storage = CacheStorage::fp32, ScaleDirection direction = ScaleDirection::divide,
                     float amplitude = 3.0f) {
  std::mt19937_64 rng(7);
  FusedCase c;
  c.cache.layout = CacheLayout::nhd;
  c.cache.storage = storage;
  c.cache.scale_direction = direction;
  c.cache.padding = PaddingRule::rotate_q_only;
  c.cache.blocks = 16;
  c.cache.block_size = 16;
  c.cache.kv_heads = 2;
  c.cache.head_dim = 8;
  if (is_fp8(storage)) {
    c.cache.k_scale = {2.0f};
    c.cache.v_scale = {2.0f};
  }
  c.spec.head_dim = c.spec.rotary_dim = 8;
  c.spec.angle_precision = AnglePrecision::fp64;
  c.tokens = 4;
  c.q_heads = 2;
  c.slots = {18, -1, 3, 40};
  c.positions = {5, 9, 1, 300};
  std::uniform_real_distribution<float> value(-amplitude, amplitude);
  for (auto* x : {&c.q, &c.k, &c.v}) {
    x->resize(static_cast<std::size_t>(c.tokens * 2 * 8));
    for (auto& e : *x) e = value(rng);
  }
  fill_caches_randomly(c, rng);
  return c;
}

// The call's outputs from `library`'s fused side.
struct Outputs {
  std::vector<float> q;
  std::vector<std::byte> k_cache, v_cache;
};
Outputs outputs(const std::string& library, FusedCase c) {
  const auto impl = load_fused(library);
  Outputs out{c.q, {}, {}};
  RopeCacheCall call = c.call();
  call.q = out.q;
  impl->apply(call);
  out.k_cache = c.k_cache;
  out.v_cache = c.v_cache;
  return out;
}

// A row of `cache` (kv head h of slot s) read back, widened.
std::vector<float> row_of(const KvCacheSpec& spec, const std::vector<std::byte>& cache, std::int64_t slot,
                          std::int64_t head) {
  std::vector<float> row;
  for (std::int64_t f = 0; f < spec.head_dim; ++f) {
    row.push_back(read_cache_element(spec.storage, cache, cache_index(spec, slot, head, f)));
  }
  return row;
}
bool row_unchanged(const FusedCase& c, const std::vector<std::byte>& cache, std::int64_t slot, std::int64_t head) {
  const auto at = static_cast<std::size_t>(cache_index(c.cache, slot, head, 0) * element_bytes(c.cache.storage));
  const auto n = static_cast<std::size_t>(c.cache.head_dim * element_bytes(c.cache.storage));
  return std::memcmp(cache.data() + at, c.k_before.data() + at, n) == 0;
}

// What each bug class must show on its call, beside the correct example's result on the same call.
// Returns "" when the bug shows where it must, else what is missing.
std::string bug_shows(const std::string& bug_class, const std::string& library) {
  if (bug_class == "slot_minus_one") {  // the padding token's k lands in the last slot
    const FusedCase c = fixed_case();
    const Outputs bad = outputs(library, c);
    const std::int64_t last = cache_slots(c.cache) - 1;
    if (row_unchanged(c, bad.k_cache, last, 0)) return "the last slot is unchanged";
    return "";
  }
  if (bug_class == "block_offset_swapped") {  // slot 18 (block 1, offset 2) lands in slot 2 * 16 + 1
    const FusedCase c = fixed_case();
    const Outputs bad = outputs(library, c);
    if (!row_unchanged(c, bad.k_cache, 18, 0)) return "slot 18 was written";
    if (row_unchanged(c, bad.k_cache, 33, 0)) return "slot 33 (block 2, offset 1) was not written";
    return "";
  }
  if (bug_class == "hnd_stride_on_nhd") {  // slot 3's head 1 lands where HND would put it
    const FusedCase c = fixed_case();
    const Outputs bad = outputs(library, c);
    KvCacheSpec hnd = c.cache;
    hnd.layout = CacheLayout::hnd;
    const auto at = static_cast<std::size_t>(cache_index(hnd, 3, 1, 0) * 4);
    if (std::memcmp(bad.k_cache.data() + at, c.k_before.data() + at, 32) == 0) return "HND's place is unchanged";
    if (!row_unchanged(c, bad.k_cache, 3, 1) && cache_index(hnd, 3, 1, 0) != cache_index(c.cache, 3, 1, 0)) {
      return "NHD's place of slot 3 head 1 was written too";
    }
    return "";
  }
  if (bug_class == "scale_direction_flipped") {  // v * 2 stored where v / 2 must be: 4 times as large
    const FusedCase c = fixed_case(CacheStorage::fp8_e5m2, ScaleDirection::divide, 1.0f);
    const Outputs bad = outputs(library, c), good = outputs("fused_cache_rope", c);
    const auto got = row_of(c.cache, bad.v_cache, 3, 0), want = row_of(c.cache, good.v_cache, 3, 0);
    for (std::size_t f = 0; f < got.size(); ++f) {
      // e5m2 keeps 2 mantissa bits: a ratio of 4 is exact unless subnormal; allow one rounding step.
      if (want[f] != 0 && std::abs(got[f] / want[f] - 4.0) > 1.0) {
        return fmt::format("v element {}: {} is not about 4 x {}", f, got[f], want[f]);
      }
    }
    return got == want ? "v unchanged from the correct write" : "";
  }
  if (bug_class == "no_saturation") {  // e4m3 far past 448: NaN where the correct write saturates
    const FusedCase c = fixed_case(CacheStorage::fp8_e4m3, ScaleDirection::multiply, 2000.0f);
    const Outputs bad = outputs(library, c);
    const auto got = row_of(c.cache, bad.v_cache, 3, 0);
    return std::any_of(got.begin(), got.end(), [](float x) { return std::isnan(x); }) ? "" : "no element is NaN";
  }
  if (bug_class == "v_unrotated_in_k") {  // k's row holds v as it came
    const FusedCase c = fixed_case();
    const Outputs bad = outputs(library, c);
    const auto got = row_of(c.cache, bad.k_cache, 3, 1);
    const std::vector<float> v(c.v.begin() + (2 * 2 + 1) * 8, c.v.begin() + (2 * 2 + 2) * 8);  // token 2, head 1
    return got == v ? "" : "slot 3's k row is not token 2's v";
  }
  if (bug_class == "padding_rule_violated") {  // the padding token's q left as it came
    const FusedCase c = fixed_case();
    const Outputs bad = outputs(library, c), good = outputs("fused_cache_rope", c);
    const auto token = [](const std::vector<float>& q) { return std::vector<float>(q.begin() + 16, q.begin() + 32); };
    if (token(bad.q) != token(c.q)) return "the padding token's q was rotated";
    if (token(good.q) == token(c.q)) return "the correct example left it too (no rotation to miss)";
    return "";
  }
  return "no scenario for this bug class: add one here";
}

std::vector<std::pair<std::string, std::string>> fused_cache_bugs() {
  std::vector<std::pair<std::string, std::string>> bugs;
  std::stringstream list(ROPECHECK_FUSED_CACHE_BUGS);
  for (std::string entry; std::getline(list, entry, ',');) {
    const auto colon = entry.find(':');
    bugs.emplace_back(entry.substr(0, colon), entry.substr(colon + 1));
  }
  return bugs;
}

TEST(RopeCachePlugin, EachBugBuildDiffersWhereItsBugSays) {
  const auto bugs = fused_cache_bugs();
  ASSERT_EQ(bugs.size(), 7u) << "issue 56's seven bug classes: " << ROPECHECK_FUSED_CACHE_BUGS;
  for (const auto& [library, bug_class] : bugs) {
    EXPECT_EQ(bug_shows(bug_class, library), "") << library << " (" << bug_class << ")";
    // The correct example shows none of them: the scenario can fail.
    EXPECT_NE(bug_shows(bug_class, "fused_cache_rope"), "") << "fused_cache_rope against " << bug_class;
  }
}

// ---- misbehaviour, older ABIs, list --------------------------------------------------------------

std::string failure_of(const std::string& library) {
  FusedCase c = fixed_case();
  const auto impl = load_fused(library);
  try {
    impl->apply(c.call());
  } catch (const PluginFailure& e) {
    return e.what();
  }
  return "";
}

TEST(RopeCachePlugin, ACrashOrAWritePastTheCacheIsAClearFailure) {
  const std::string crash = failure_of("fused_cache_crash");
  EXPECT_TRUE(test::contains(crash, "SIGSEGV")) << crash;
  EXPECT_TRUE(test::contains(crash, "apply_rope_cache")) << crash;
  EXPECT_TRUE(test::contains(crash, "slots [18, -1, 3, 40]")) << crash;  // the call that failed
  const std::string overflow = failure_of("fused_cache_overflow");
  EXPECT_TRUE(test::contains(overflow, "past the end of k_cache")) << overflow;
}

TEST(RopeCachePlugin, AnAbi4PluginLoadsWithoutAFusedSide) {
  const PluginLibrary library = load_plugin_library(built_plugin("backward_rope"));
  EXPECT_NE(library.rope, nullptr);
  EXPECT_EQ(library.rope_cache, nullptr);
  EXPECT_FALSE(plugin_info(*library.rope)->rope_cache.has_value());
  const LoadedPlugins loaded = load_plugins({built_plugin("backward_rope"), built_plugin("fused_cache_rope")}, {});
  ASSERT_EQ(loaded.rope_cache.size(), 1u);  // the ABI 5 plugin's only
  EXPECT_EQ(loaded.rope_cache[0]->id(), "plugin/fused_cache_rope");
}

TEST(RopeCachePlugin, ListShowsTheFusedCapabilities) {
  const test::Exited run = test::spawn({ROPECHECK_CLI_PATH, "list", "--json", "--plugin", built_plugin("fused_cache_rope")});
  ASSERT_EQ(run.code, 0) << run.err;
  const auto list = nlohmann::json::parse(run.out);
  const auto& fused = list["plugins"][0]["plugin"]["rope_cache"];
  EXPECT_EQ(fused["layouts"], nlohmann::json({"nhd", "hnd", "mla"}));
  EXPECT_EQ(fused["storages"], nlohmann::json({"fp32", "bf16", "fp16", "fp8_e4m3", "fp8_e5m2"}));
  EXPECT_EQ(fused["scale_directions"], nlohmann::json({"multiply", "divide"}));
  EXPECT_EQ(fused["padding"], "rotate_q_only");
  EXPECT_EQ(list["plugins"][0]["plugin"]["abi_version"], 5);
}

}  // namespace plugin_fused_test
}  // namespace ropecheck
