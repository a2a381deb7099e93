// The fused cache call's cases and judges (rope_cache_cases.h).
#include "properties/harness/rope_cache_cases.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <rapidcheck.h>

#include <algorithm>
#include <functional>
#include <cmath>
#include <limits>
#include <ostream>
#include <random>

#include "core/fp8.h"
#include "core/frequency.h"
#include "core/tolerance.h"
#include "properties/harness/generators.h"

namespace ropecheck {
namespace {

// Features of one token's rows: [heads][dim] starting at token t.
std::span<const float> token_rows(const std::vector<float>& x, std::int64_t t, std::int64_t heads, std::int64_t dim) {
  return std::span(x).subspan(static_cast<std::size_t>(t * heads * dim), static_cast<std::size_t>(heads * dim));
}

// The slots: valid ones distinct, half of them at a block's edges (the last slot of a block, the
// first of the next: where an index that crosses a block goes wrong), the rest anywhere; a block
// or more left unaddressed at the end (where slot -1 taken as an index lands); in any order.
std::vector<std::int64_t> draw_slots(std::mt19937_64& rng, const std::vector<bool>& padding, std::int64_t blocks,
                                     std::int64_t block_size, bool odd_padding) {
  const std::int64_t valid = std::count(padding.begin(), padding.end(), false);
  const std::int64_t usable = (blocks - 1) * block_size;  // the last block stays free
  std::vector<std::int64_t> edges, rest;
  for (std::int64_t s = 0; s < usable; ++s) {
    const std::int64_t offset = s % block_size;
    (offset == 0 || offset == block_size - 1 ? edges : rest).push_back(s);
  }
  std::shuffle(edges.begin(), edges.end(), rng);
  std::shuffle(rest.begin(), rest.end(), rng);
  std::vector<std::int64_t> chosen;
  while (static_cast<std::int64_t>(chosen.size()) < valid) {
    const bool edge = (rng() % 2 == 0 && !edges.empty()) || rest.empty();
    auto& pool = edge ? edges : rest;
    chosen.push_back(pool.back());
    pool.pop_back();
  }
  std::shuffle(chosen.begin(), chosen.end(), rng);
  const std::int64_t odd[] = {-2, -block_size, -block_size - 1, std::numeric_limits<std::int64_t>::min()};
  std::vector<std::int64_t> slots(padding.size());
  std::size_t next = 0;
  for (std::size_t t = 0; t < padding.size(); ++t) {
    if (!padding[t]) {
      slots[t] = chosen[next++];
    } else {
      slots[t] = odd_padding && rng() % 4 == 0 ? odd[rng() % 4] : -1;
    }
  }
  return slots;
}

// An FP8 scale from the values it quantizes, as engines compute one (vLLM: amax / 448): the
// largest |value| times the scale's direction lands at `fill` times the format's largest.
float fp8_scale_for(double amax, double fill, Fp8Format format, ScaleDirection direction) {
  if (!(amax > 0)) amax = 1;
  const double stored_max = fp8_traits(format).max * fill;
  const double s = direction == ScaleDirection::multiply ? stored_max / amax : amax / stored_max;
  return static_cast<float>(std::clamp(s, 0x1p-100, 0x1p100));
}

double abs_max(std::span<const float> x) {
  double m = 0;
  for (const float v : x) m = std::max(m, std::abs(static_cast<double>(v)));
  return m;
}

// Per tensor (one) or per kv head (kv_heads) scales for x [tokens][heads][dim].
std::vector<float> draw_scales(const std::vector<float>& x, std::int64_t tokens, std::int64_t heads, std::int64_t dim,
                               bool per_head, double fill, Fp8Format format, ScaleDirection direction) {
  std::vector<float> scales;
  for (std::int64_t h = 0; h < (per_head ? heads : 1); ++h) {
    double amax = 0;
    for (std::int64_t t = 0; t < tokens; ++t) {
      for (std::int64_t g = per_head ? h : 0; g < (per_head ? h + 1 : heads); ++g) {
        amax = std::max(amax, abs_max(std::span(x).subspan(static_cast<std::size_t>((t * heads + g) * dim),
                                                           static_cast<std::size_t>(dim))));
      }
    }
    scales.push_back(fp8_scale_for(amax, fill, format, direction));
  }
  return scales;
}

}  // namespace

// How RapidCheck prints the drawn modes in a counterexample (found by argument-dependent lookup).
void showValue(CacheLayout layout, std::ostream& os) { os << to_string(layout); }
void showValue(CacheStorage storage, std::ostream& os) { os << to_string(storage); }
void showValue(ScaleDirection direction, std::ostream& os) { os << to_string(direction); }

RopeCacheCase pick_rope_cache_case(const RopeCacheImpl& impl, CacheCaseAim aim) {
  const RopeCacheCapabilities caps = impl.capabilities();
  RopeCacheCase c;
  KvCacheSpec& cache = c.cache;
  cache.layout = *rc::gen::elementOf(caps.layouts).as("layout");
  std::vector<CacheStorage> storages = caps.storages;
  if (aim == CacheCaseAim::saturating || aim == CacheCaseAim::fp8) std::erase_if(storages, [](CacheStorage s) { return !is_fp8(s); });
  if (storages.empty()) RC_DISCARD("no FP8 storage");
  cache.storage = *rc::gen::elementOf(storages).as("storage");
  cache.padding = caps.padding;
  const bool mla = cache.layout == CacheLayout::mla;

  // The RoPE half: a case as the RoPE properties draw one, within the call's RoPE forms. For an
  // fp16 cache, values in fp16's range (no rotated k overflows it); held to fp32's bound, which is
  // what q comes back in.
  RopeCapabilities rope_caps = impl.rope_capabilities();
  rope_caps.storage = cache.storage == CacheStorage::fp16 ? StorageType::fp16 : StorageType::fp32;
  c.rope = pick_qk_case(rope_caps, Rotary::any);
  c.rope.storage = StorageType::fp32;
  QkCase& r = c.rope;
  if (mla) {  // one k_pe head
    std::vector<float> k_pe;
    for (std::int64_t t = 0; t < r.tokens; ++t) {
      const auto row = token_rows(r.k, t, r.k_heads, r.spec.head_dim).first(static_cast<std::size_t>(r.spec.head_dim));
      k_pe.insert(k_pe.end(), row.begin(), row.end());
    }
    r.k = std::move(k_pe);
    r.k_heads = 1;
    cache.latent_dim = *rc::gen::element<std::int64_t>(2, 8, 30, 512).as("latent_dim (kv_c)");
  }
  cache.kv_heads = r.k_heads;
  cache.head_dim = r.spec.head_dim;
  const std::int64_t v_dim = mla ? cache.latent_dim : cache.head_dim;
  RopeSpec v_shape = r.spec;
  v_shape.head_dim = static_cast<int>(v_dim);
  v_shape.rotary_dim = 0;
  c.v = pick_tensor(v_shape, r.tokens, cache.kv_heads, rope_caps.storage, mla ? "kv_c" : "v");

  // The slots and the cache.
  cache.block_size = *rc::gen::element<std::int64_t>(16, 32, 64, 128).as("block_size");
  const int padding_in = aim == CacheCaseAim::padding ? 2 : 5;  // one token in 2, or in 5
  std::vector<bool> padding(static_cast<std::size_t>(r.tokens));
  for (auto&& p : padding) p = *rc::gen::inRange(0, padding_in).as("padding token") == 0;
  const std::int64_t valid = std::count(padding.begin(), padding.end(), false);
  cache.blocks = (valid + cache.block_size - 1) / cache.block_size + 1 +
                 *rc::gen::inRange<std::int64_t>(0, 3).as("blocks beyond the slots' own");
  std::mt19937_64 rng(*rc::gen::arbitrary<std::uint64_t>().as("seed of the slots and the cache's bytes"));
  c.slots = draw_slots(rng, padding, cache.blocks, cache.block_size, aim == CacheCaseAim::padding);

  if (is_fp8(cache.storage)) {
    cache.scale_direction = *rc::gen::elementOf(caps.directions).as("scale direction");
    const bool per_head =
        cache.kv_heads > 1 && (aim == CacheCaseAim::fp8 || *rc::gen::arbitrary<bool>().as("per-head scales"));
    // How far the largest value reaches into the format: mostly within it, past it to saturate.
    const double fill = aim == CacheCaseAim::saturating
                            ? *rc::gen::element(2.0, 16.0, 0x1p20).as("largest value over the format's")
                            : *rc::gen::element(0.9, 0.25, 0x1p-6).as("largest value over the format's");
    const Fp8Format format = fp8_format(cache.storage);
    cache.k_scale = draw_scales(r.k, r.tokens, cache.kv_heads, cache.head_dim, per_head, fill, format,
                                cache.scale_direction);
    if (!mla) {
      cache.v_scale = draw_scales(c.v, r.tokens, cache.kv_heads, v_dim, per_head, fill, format, cache.scale_direction);
    }
  }
  // The bytes before: random, so that a write where none belongs shows, whatever it writes.
  const auto bytes = static_cast<std::size_t>(cache_elements(cache) * element_bytes(cache.storage));
  c.k_cache.resize(bytes);
  for (auto& b : c.k_cache) b = static_cast<std::byte>(rng());
  if (!mla) {
    c.v_cache.resize(bytes);
    for (auto& b : c.v_cache) b = static_cast<std::byte>(rng());
  }
  return c;
}

RopeCacheOutput run_rope_cache_case(const RopeCacheImpl& impl, const RopeCacheCase& c) {
  RopeCacheOutput out{c.rope.q, c.k_cache, c.v_cache};
  RopeCacheCall call;
  call.spec = c.rope.spec;
  call.cache = c.cache;
  call.q = out.q;
  call.q_heads = c.rope.q_heads;
  call.k = c.rope.k;
  call.v = c.v;
  call.tokens = c.rope.tokens;
  call.positions = c.rope.positions;
  call.slots = c.slots;
  call.k_cache = out.k_cache;
  call.v_cache = out.v_cache;
  impl.apply(call);
  return out;
}

RopeCacheCase without_padding(const RopeCacheCase& c) {
  RopeCacheCase valid = c;
  QkCase& r = valid.rope;
  r.q.clear();
  r.k.clear();
  r.positions.clear();
  valid.v.clear();
  valid.slots.clear();
  const std::int64_t axes = axis_count(c.rope.spec);
  const std::int64_t v_dim = c.cache.layout == CacheLayout::mla ? c.cache.latent_dim : c.cache.head_dim;
  for (std::int64_t t = 0; t < c.rope.tokens; ++t) {
    if (c.slots[static_cast<std::size_t>(t)] < 0) continue;
    const auto append = [t](std::vector<float>& to, const std::vector<float>& from, std::int64_t heads,
                            std::int64_t dim) {
      const auto rows = token_rows(from, t, heads, dim);
      to.insert(to.end(), rows.begin(), rows.end());
    };
    append(r.q, c.rope.q, c.rope.q_heads, c.rope.spec.head_dim);
    append(r.k, c.rope.k, c.rope.k_heads, c.rope.spec.head_dim);
    append(valid.v, c.v, c.cache.kv_heads, v_dim);
    for (std::int64_t a = 0; a < axes; ++a) r.positions.push_back(c.rope.positions[static_cast<std::size_t>(t * axes + a)]);
    valid.slots.push_back(c.slots[static_cast<std::size_t>(t)]);
  }
  r.tokens = static_cast<std::int64_t>(valid.slots.size());
  return valid;
}

FusedCacheTruth truth_of(const RopeCacheCase& c) {
  return oracle_rope_and_cache(c.rope.spec, c.cache, c.rope.q, c.rope.q_heads, c.rope.k, c.v, c.rope.tokens,
                               c.rope.positions, c.slots);
}

std::string describe_cache(const KvCacheSpec& cache) {
  std::string text = fmt::format("layout {}, {}, block_size {} x {} blocks, kv_heads {}, head_dim {}",
                                 to_string(cache.layout), to_string(cache.storage), cache.block_size, cache.blocks,
                                 cache.kv_heads, cache.head_dim);
  if (cache.layout == CacheLayout::mla) text += fmt::format(", latent_dim {}", cache.latent_dim);
  if (is_fp8(cache.storage)) {
    const auto scales = [](const std::vector<float>& s) {
      return s.empty() ? std::string("-")
                       : s.size() == 1 ? fmt::format("{:.9g} per tensor", s[0])
                                       : fmt::format("[{:.9g}] per head", fmt::join(s, ", "));
    };
    text += fmt::format(", k scale {}", scales(cache.k_scale));
    if (cache.layout != CacheLayout::mla) text += fmt::format(", v scale {}", scales(cache.v_scale));
    text += fmt::format(", {}d", to_string(cache.scale_direction));
  }
  return text + fmt::format(", padding {}", to_string(cache.padding));
}

std::string describe_token(const RopeCacheCase& c, std::int64_t token) {
  const std::int64_t slot = c.slots[static_cast<std::size_t>(token)];
  if (slot < 0) return fmt::format("token {} (slot {}: padding)", token, slot);
  return fmt::format("token {} (slot {}: block {}, offset {})", token, slot, slot / c.cache.block_size,
                     slot % c.cache.block_size);
}

WorstElement worst_q_error(const RopeCacheCase& c, const FusedCacheTruth& truth, const std::vector<float>& q) {
  const QkCase& r = c.rope;
  const auto bound = [&](std::size_t at, double theta, int pair) {
    return rotation_bound_units(r.model(), r.positions[at], theta, pair);
  };
  return worst_rotary_error(r.spec, r.storage, r.q, q, truth.q, r.q_heads, r.positions, bound);
}

void for_each_written(const RopeCacheCase& c, const FusedCacheTruth& truth,
                      const std::function<void(const WrittenElement&)>& visit) {
  const QkCase& r = c.rope;
  const KvCacheSpec& cache = c.cache;
  const bool mla = cache.layout == CacheLayout::mla, fp8 = is_fp8(cache.storage);
  const CacheTolerance tolerance = cache_tolerance(cache.storage);
  const std::int64_t dim = r.spec.head_dim, v_dim = mla ? cache.latent_dim : dim;
  const auto theta = inverse_frequencies(r.spec);
  const double a = attention_factor(r.spec);
  const PairPositions pair_position(r.spec);
  // Each rotary feature's pair, and its partner's feature.
  std::vector<int> pair_of(static_cast<std::size_t>(dim), -1);
  std::vector<std::size_t> partner(static_cast<std::size_t>(dim));
  for (int i = 0; i < r.spec.rotary_dim / 2; ++i) {
    const auto [x, y] = pair_features(r.spec, i);
    pair_of[x] = pair_of[y] = i;
    partner[x] = y;
    partner[y] = x;
  }
  const auto element = [&](std::int64_t t, std::int64_t h, bool of_k, std::int64_t f, std::int64_t slot,
                           double rotation_bound) {
    WrittenElement e;
    e.token = t;
    e.head = h;
    e.of_k = of_k;
    e.feature = f;
    e.index = cache_index(cache, slot, h, (of_k && mla ? cache.latent_dim : 0) + f);
    e.truth = (of_k || mla ? truth.k_cache : truth.v_cache)[static_cast<std::size_t>(e.index)];
    e.scale = cache_scale(cache, of_k, h);
    e.factor = cache.scale_direction == ScaleDirection::multiply ? e.scale : 1 / e.scale;
    e.before_narrowing = tolerance.pre_narrowing(rotation_bound, fp8 ? e.factor : 1, e.truth);
    visit(e);
  };
  for (std::int64_t t = 0; t < r.tokens; ++t) {
    const std::int64_t slot = c.slots[static_cast<std::size_t>(t)];
    if (slot < 0) continue;
    for (std::int64_t h = 0; h < cache.kv_heads; ++h) {
      const auto k_row = token_rows(r.k, t, r.k_heads, dim).subspan(static_cast<std::size_t>(h * dim),
                                                                    static_cast<std::size_t>(dim));
      for (std::int64_t f = 0; f < dim; ++f) {
        double rotation_bound = 0;  // a pass-through feature is copied exactly
        if (const int i = pair_of[static_cast<std::size_t>(f)]; i >= 0) {
          const double norm = pair_magnitude(k_row[static_cast<std::size_t>(f)], k_row[partner[static_cast<std::size_t>(f)]]);
          const std::int64_t m = r.positions[pair_position(static_cast<std::size_t>(t), static_cast<std::size_t>(i))];
          rotation_bound = rotation_bound_units(r.model(), m, theta[static_cast<std::size_t>(i)], i) * kEps32 *
                           unit_pair_norm(StorageType::fp32, a, norm);
        }
        element(t, h, true, f, slot, rotation_bound);
      }
      for (std::int64_t f = 0; f < v_dim; ++f) element(t, h, false, f, slot, 0.0);
    }
  }
}

std::string describe_element(const RopeCacheCase& c, const WrittenElement& e) {
  const bool mla = c.cache.layout == CacheLayout::mla;
  return fmt::format("{}, head {}, {} feature {}", describe_token(c, e.token), e.head,
                     e.of_k ? (mla ? "k_pe" : "k") : (mla ? "kv_c" : "v"), e.feature);
}

std::string describe_call(const RopeCacheCase& c) {
  return fmt::format("cache: {}; slots [{}]", describe_cache(c.cache), fmt::join(c.slots, ", "));
}

WorstElement worst_cache_error(const RopeCacheCase& c, const FusedCacheTruth& truth, const RopeCacheOutput& out,
                               bool dequantized) {
  const KvCacheSpec& cache = c.cache;
  const bool fp8 = is_fp8(cache.storage);
  const CacheTolerance tolerance = cache_tolerance(cache.storage);
  const std::span<const std::byte> k_bytes = out.k_cache;
  const std::span<const std::byte> v_bytes = cache.layout == CacheLayout::mla ? out.k_cache : out.v_cache;
  WorstElement worst;
  for_each_written(c, truth, [&](const WrittenElement& e) {
    const double bound = tolerance.bound(e.truth, e.before_narrowing);
    const double got = read_cache_element(cache.storage, e.of_k ? k_bytes : v_bytes, e.index);
    const double expected = tolerance.clamp(e.truth);  // past FP8's largest: saturated
    double error = std::abs(got - expected);
    if (std::isnan(error)) error = INFINITY;
    const double ratio = bound > 0 ? error / bound : (error > 0 ? INFINITY : 0.0);
    if (ratio <= worst.ratio && !worst.where.empty()) return;
    // Dequantized: what a reader of the cache sees, both divided by the scale's factor.
    const double shown = dequantized && fp8 ? e.factor : 1;
    const std::string value =
        dequantized && fp8
            ? fmt::format("dequantized {:.9g} for {:.9g} (stored {:.9g}, expected {:.9g})",
                          from_stored_domain(got, e.scale, cache.scale_direction),
                          from_stored_domain(expected, e.scale, cache.scale_direction), got, expected)
            : fmt::format("stored {:.9g}, expected {:.9g}", got, expected);
    worst = {ratio, error / shown, bound / shown,
             fmt::format("{}: {} (scale {:.9g} {}d); {}", describe_element(c, e), value, e.scale,
                         to_string(cache.scale_direction), describe_call(c))};
  });
  return worst;
}

WorstElement first_unsaturated(const RopeCacheCase& c, const FusedCacheTruth& truth, const RopeCacheOutput& out) {
  const KvCacheSpec& cache = c.cache;
  const double largest = cache_tolerance(cache.storage).saturates_at;
  const std::span<const std::byte> k_bytes = out.k_cache;
  const std::span<const std::byte> v_bytes = cache.layout == CacheLayout::mla ? out.k_cache : out.v_cache;
  WorstElement found{0.0, 0.0, 0.0, ""};
  for_each_written(c, truth, [&](const WrittenElement& e) {
    if (!found.where.empty()) return;
    const double got = read_cache_element(cache.storage, e.of_k ? k_bytes : v_bytes, e.index);
    std::string wrong;
    if (!std::isfinite(got) || std::abs(got) > largest) {
      wrong = fmt::format("stored {} (the format's largest is {})", got, largest);
    } else if (std::abs(e.truth) - e.before_narrowing > largest && got != std::copysign(largest, e.truth)) {
      // The fp32 value in the stored domain is past the largest for certain: saturation gives
      // the largest exactly, with the value's sign.
      wrong = fmt::format("stored {} for {:.9g}, not the saturated {}", got, e.truth, std::copysign(largest, e.truth));
    }
    if (!wrong.empty()) {
      found = {1.0, 1.0, 0.0,
               fmt::format("{}: {} (scale {:.9g} {}d); {}", describe_element(c, e), wrong, e.scale,
                           to_string(cache.scale_direction), describe_call(c))};
    }
  });
  return found;
}

WorstElement first_unaddressed_change(const RopeCacheCase& c, const FusedCacheTruth& truth, const RopeCacheOutput& out) {
  const bool mla = c.cache.layout == CacheLayout::mla;
  const auto width = static_cast<std::size_t>(element_bytes(c.cache.storage));
  for (const auto& [before, after, name] : {std::tuple{&c.k_cache, &out.k_cache, mla ? "cache" : "k cache"},
                                            std::tuple{&c.v_cache, &out.v_cache, "v cache"}}) {
    for (std::size_t byte = 0; byte < before->size(); ++byte) {
      if ((*before)[byte] == (*after)[byte] || truth.written[byte / width]) continue;
      const auto element = static_cast<std::int64_t>(byte / width);
      const std::int64_t per_slot = c.cache.kv_heads * row_features(c.cache);
      // Which slot the element belongs to, in the layout: the inverse of cache_index.
      const std::int64_t features = row_features(c.cache), bs = c.cache.block_size;
      std::int64_t block = 0, offset = 0, head = 0, feature = element % features;
      if (c.cache.layout == CacheLayout::hnd) {
        const std::int64_t row = element / features;  // ((block * kv_heads + head) * bs + offset)
        offset = row % bs;
        head = (row / bs) % c.cache.kv_heads;
        block = row / bs / c.cache.kv_heads;
      } else {
        const std::int64_t slot = element / per_slot;
        head = (element / features) % c.cache.kv_heads;
        block = slot / bs;
        offset = slot % bs;
      }
      return {1.0, 1.0, 0.0,
              fmt::format("the {}'s element at block {}, offset {} (slot {}), head {}, feature {} changed: no valid "
                          "slot addresses it; {}",
                          name, block, offset, block * bs + offset, head, feature, describe_call(c))};
    }
  }
  return {0.0, 0.0, 0.0, ""};
}

}  // namespace ropecheck
