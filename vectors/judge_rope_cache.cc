// judge_rope_cache and rope_cache_call_text (judge_rope_cache.h). The cache's messages name both
// ends of the slot mapping, the token's (token, head, feature) and the cache's (block, offset),
// because the fused call's bugs are in that mapping: slot -1 taken as an index, block and offset
// swapped, the other layout's strides.
#include "vectors/judge_rope_cache.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <bit>
#include <cmath>
#include <cstring>

#include "core/position_axes.h"
#include "core/tolerance.h"

namespace ropecheck {
namespace {

// The pair of rotated feature f (< rotary_dim) and the pair's other feature.
std::pair<int, std::size_t> pair_of(const RopeSpec& spec, std::size_t f) {
  if (spec.layout == Layout::interleaved) return {static_cast<int>(f / 2), f ^ 1u};
  const auto half = static_cast<std::size_t>(spec.rotary_dim / 2);
  return {static_cast<int>(f % half), f < half ? f + half : f - half};
}

// The worst element and the first one over its bound; `where` is formatted only when kept.
class Verdict {
 public:
  template <typename Where>
  void record(double ratio, double error, double bound, const char* units, const Where& where) {
    const bool worst = ratio > result_.worst.ratio || result_.worst.where.empty();
    const bool first = ratio > 1 && result_.first_wrong.empty();
    if (!worst && !first) return;
    const std::string text = where();
    if (worst) result_.worst = {ratio, error, bound, text, units};
    if (first) result_.first_wrong = text;
  }
  void merge(const WorstError& other, bool over_bound) {
    if (over_bound && result_.first_wrong.empty()) result_.first_wrong = other.where;
    result_.worst = worse_of(result_.worst, other);
  }
  RopeCacheVerdict result() const { return result_; }

 private:
  RopeCacheVerdict result_;
};

constexpr const char* kStoredUnits = "abs (stored)";

double ratio_of(double error, double bound) {
  if (std::isnan(error)) return INFINITY;
  if (bound > 0) return error / bound;
  return error == 0 ? 0.0 : INFINITY;
}

// (block, offset, head, feature) of element `index`: cache_index inverted.
struct CacheCoordinates {
  std::int64_t block, offset, head, feature;
};

CacheCoordinates coordinates(const KvCacheSpec& cache, std::int64_t index) {
  const std::int64_t features = row_features(cache);
  const std::int64_t feature = index % features, rest = index / features;
  if (cache.layout == CacheLayout::hnd) {
    const std::int64_t offset = rest % cache.block_size, head_block = rest / cache.block_size;
    return {head_block / cache.kv_heads, offset, head_block % cache.kv_heads, feature};
  }
  const std::int64_t head = rest % cache.kv_heads, slot = rest / cache.kv_heads;
  return {slot / cache.block_size, slot % cache.block_size, head, feature};
}

std::string element_text(CacheStorage storage, std::span<const std::byte> cache, std::int64_t index) {
  const int bytes = element_bytes(storage);
  std::uint32_t bits = 0;
  std::memcpy(&bits, cache.data() + index * bytes, static_cast<std::size_t>(bytes));  // little-endian
  return fmt::format("{:.9g} (0x{:0{}x})", read_cache_element(storage, cache, index), bits, 2 * bytes);
}

// "head 1, feature 17", or the mla row's part: "kv_c feature 5", "k_pe feature 3".
std::string feature_text(const KvCacheSpec& cache, std::int64_t head, std::int64_t feature) {
  if (cache.layout != CacheLayout::mla) return fmt::format("head {}, feature {}", head, feature);
  if (feature < cache.latent_dim) return fmt::format("kv_c feature {}", feature);
  return fmt::format("k_pe feature {}", feature - cache.latent_dim);
}

}  // namespace

RopeCacheVerdict judge_rope_cache(const ManifestCase& c, const RopeCacheCaseData& data, const RopeCacheOutputs& out,
                                  AnglePrecision angles) {
  const KvCacheSpec& cache = c.cache;
  const RopeSpec& spec = c.rope_spec;
  const CacheTolerance& tolerance = c.cache_tolerance;
  const bool mla = cache.layout == CacheLayout::mla;
  const auto tokens = static_cast<std::int64_t>(data.slots.size());
  const std::int64_t dim = spec.head_dim;
  const auto axes = static_cast<std::size_t>(axis_count(spec));
  const std::vector<int> axis_of = pair_axes(spec.axes, spec.rotary_dim);
  Verdict verdict;

  // q: a padding token's left bit for bit under skip_token, then every element within the RoPE
  // bound (q_expected holds such a token's input, so the bound asks nothing more of it).
  const auto q_row = static_cast<std::size_t>(c.q_heads * dim);
  if (cache.padding == PaddingRule::skip_token) {
    for (std::int64_t t = 0; t < tokens; ++t) {
      if (data.slots[static_cast<std::size_t>(t)] >= 0) continue;
      for (std::size_t j = static_cast<std::size_t>(t) * q_row; j < static_cast<std::size_t>(t + 1) * q_row; ++j) {
        if (std::bit_cast<std::uint32_t>(out.q[j]) == std::bit_cast<std::uint32_t>(data.q[j])) continue;
        verdict.record(INFINITY, INFINITY, 0.0, "", [&] {
          const std::size_t in_row = j % q_row;
          return fmt::format("q token {} head {} feature {} (slot {}, padding: skip_token leaves its q as it came): "
                             "got {:.9g}, input {:.9g}",
                             t, in_row / static_cast<std::size_t>(dim), in_row % static_cast<std::size_t>(dim),
                             data.slots[static_cast<std::size_t>(t)], out.q[j], data.q[j]);
        });
        break;
      }
    }
  }
  WorstError q = judge_rope_tensor(c, "q", data.q, out.q, data.q_expected, data.positions, data.theta, angles);
  verdict.merge(q, q.ratio > 1);

  // Each valid token's rows, k then v, in token order.
  std::vector<bool> written(static_cast<std::size_t>(cache_elements(cache)), false);
  for (std::int64_t t = 0; t < tokens; ++t) {
    const std::int64_t slot = data.slots[static_cast<std::size_t>(t)];
    if (slot < 0) continue;
    for (const bool of_k : {true, false}) {
      if (!of_k && mla) continue;
      const std::vector<double>& rows = of_k ? data.k_rows : data.v_rows;
      const std::vector<std::byte>& got = of_k ? out.k_cache : out.v_cache;
      const std::int64_t features = of_k ? row_features(cache) : dim;
      const char* name = of_k ? "k_cache" : "v_cache";
      for (std::int64_t h = 0; h < cache.kv_heads; ++h) {
        const double scale = cache_scale(cache, of_k, h);
        const double sigma = !is_fp8(cache.storage) ? 1.0
                             : cache.scale_direction == ScaleDirection::multiply ? scale : 1.0 / scale;
        for (std::int64_t f = 0; f < features; ++f) {
          const std::int64_t index = cache_index(cache, slot, h, f);
          written[static_cast<std::size_t>(index)] = true;
          const double y = rows[static_cast<std::size_t>((t * cache.kv_heads + h) * features + f)];
          const double s = read_cache_element(cache.storage, got, index);
          // The rotated k element's bound before scaling: k, or k_pe after the mla latent.
          const std::int64_t kf = mla ? f - cache.latent_dim : f;
          double rotation = 0.0;
          if (of_k && kf >= 0 && kf < spec.rotary_dim) {
            const auto row = static_cast<std::size_t>((t * cache.kv_heads + h) * dim);
            const auto [pair, partner] = pair_of(spec, static_cast<std::size_t>(kf));
            const double norm = std::hypot(static_cast<double>(data.k[row + static_cast<std::size_t>(kf)]),
                                           static_cast<double>(data.k[row + partner]));
            const std::int64_t position =
                data.positions[static_cast<std::size_t>(t) * axes + static_cast<std::size_t>(axis_of[static_cast<std::size_t>(pair)])];
            rotation = c.rope_tolerance.bound_units(angles, position, data.theta[static_cast<std::size_t>(pair)], pair) *
                       kEps32 * c.rope_tolerance.unit_pair_norm(norm);
          }
          const double error = std::abs(s - tolerance.clamp(y));
          double bound = 0.0, ratio = 0.0;
          if (std::abs(y) >= tolerance.saturates_at) {
            ratio = s == std::copysign(tolerance.saturates_at, y) ? 0.0 : INFINITY;  // saturation is exact
          } else {
            bound = tolerance.bound(y, tolerance.pre_narrowing(rotation, sigma, y));
            ratio = ratio_of(error, bound);
          }
          verdict.record(ratio, error, bound, kStoredUnits, [&] {
            const std::string where =
                fmt::format("{} (token {}, {}) -> (block {}, offset {})", name, t, feature_text(cache, h, f),
                            slot / cache.block_size, slot % cache.block_size);
            const std::string saturated =
                std::abs(y) >= tolerance.saturates_at ? fmt::format(", saturated: exactly {:g}", tolerance.clamp(y)) : "";
            if (!is_fp8(cache.storage)) return fmt::format("{}: got {:.9g}, want {:.17g}{}", where, s, y, saturated);
            return fmt::format("{}: got {:.9g}, want {:.9g} dequantized (stored {:.9g}, want {:.9g}{})", where,
                               from_stored_domain(s, scale, cache.scale_direction),
                               from_stored_domain(tolerance.clamp(y), scale, cache.scale_direction), s, y, saturated);
          });
        }
      }
    }
  }

  // Every element no valid slot addresses: the initial bytes.
  const auto bytes = static_cast<std::size_t>(element_bytes(cache.storage));
  for (const bool of_k : {true, false}) {
    if (!of_k && mla) continue;
    const std::vector<std::byte>& got = of_k ? out.k_cache : out.v_cache;
    const std::vector<std::byte>& initial = of_k ? data.k_initial : data.v_initial;
    for (std::size_t i = 0; i < written.size(); ++i) {
      if (written[i] || std::memcmp(got.data() + i * bytes, initial.data() + i * bytes, bytes) == 0) continue;
      verdict.record(INFINITY, INFINITY, 0.0, kStoredUnits, [&] {
        const auto at = coordinates(cache, static_cast<std::int64_t>(i));
        return fmt::format("{} (block {}, offset {}, {}) = slot {}, addressed by no valid slot, must keep its bits: "
                           "got {}, was {}",
                           of_k ? "k_cache" : "v_cache", at.block, at.offset, feature_text(cache, at.head, at.feature),
                           at.block * cache.block_size + at.offset,
                           element_text(cache.storage, got, static_cast<std::int64_t>(i)),
                           element_text(cache.storage, initial, static_cast<std::int64_t>(i)));
      });
    }
  }
  return verdict.result();
}

std::string rope_cache_call_text(const ManifestCase& c, std::span<const std::int64_t> slots) {
  const KvCacheSpec& cache = c.cache;
  std::string scales = "no scale";
  if (is_fp8(cache.storage)) {
    const bool per_tensor = cache.k_scale.size() == 1 && cache.v_scale.size() <= 1;
    scales = fmt::format("k_scale [{}]{} {}, {} (stored = x {} scale)", fmt::join(cache.k_scale, ", "),
                         cache.v_scale.empty() ? "" : fmt::format(" v_scale [{}]", fmt::join(cache.v_scale, ", ")),
                         per_tensor ? "per tensor" : "per head", to_string(cache.scale_direction),
                         cache.scale_direction == ScaleDirection::multiply ? "*" : "/");
  }
  const std::string widths = cache.layout == CacheLayout::mla
                                 ? fmt::format("latent_dim {} + head_dim {}", cache.latent_dim, cache.head_dim)
                                 : fmt::format("kv_heads {}, head_dim {}", cache.kv_heads, cache.head_dim);
  return fmt::format("layout {}, storage {}, block_size {} ({} blocks), {}, {}, padding {}, slots [{}]",
                     to_string(cache.layout), to_string(cache.storage), cache.block_size, cache.blocks, widths, scales,
                     to_string(cache.padding), fmt::join(slots, ", "));
}

}  // namespace ropecheck
