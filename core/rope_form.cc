// The call forms and QK-norm (rope_form.h): views, their checks, the cos/sin cache.
#include "core/rope_form.h"

#include <fmt/format.h>

#include <cmath>

#include "core/errors.h"
#include "core/frequency.h"
#include "core/kv_cache.h"

namespace ropecheck {

std::string_view to_string(AngleSource source) {
  return source == AngleSource::spec ? "spec" : "cos_sin_cache";
}
std::string_view to_string(NormWeight weight) { return weight == NormWeight::plain ? "plain" : "one_plus"; }
std::string_view to_string(NormPrecision precision) {
  return precision == NormPrecision::fp32 ? "fp32" : "storage";
}

namespace {

CacheStorage as_cache_storage(StorageType storage) {
  switch (storage) {
    case StorageType::bf16: return CacheStorage::bf16;
    case StorageType::fp16: return CacheStorage::fp16;
    case StorageType::fp32: break;
  }
  return CacheStorage::fp32;
}

}  // namespace

float load_element(StorageType storage, std::span<const std::byte> buffer, std::int64_t index) {
  return read_cache_element(as_cache_storage(storage), buffer, index);
}
void store_element(StorageType storage, std::span<std::byte> buffer, std::int64_t index, float value) {
  write_cache_element(as_cache_storage(storage), buffer, index, value);
}
int element_bytes(StorageType storage) { return element_bytes(as_cache_storage(storage)); }

HeadView flat_view(std::int64_t heads, std::int64_t head_dim, std::int64_t offset) {
  return {heads, offset, heads * head_dim, head_dim};
}

std::int64_t view_end(const HeadView& view, std::int64_t tokens, std::int64_t head_dim) {
  if (view.heads <= 0 || tokens <= 0) return view.offset;
  return row_start(view, tokens - 1, view.heads - 1) + head_dim;
}

void validate_view(const HeadView& view, std::int64_t tokens, std::int64_t head_dim, std::int64_t elements,
                   std::string_view name) {
  if (view.heads < 0 || view.offset < 0 || view.token_stride < 0 || view.head_stride < 0) {
    throw InvalidInput(fmt::format("{}: negative heads, offset or stride ({})", name, describe(view)));
  }
  if (view.heads == 0 || tokens == 0) return;
  if (view.heads > 1 && view.head_stride < head_dim) {
    throw InvalidInput(fmt::format("{}: heads overlap, head stride {} < head_dim {} ({})", name, view.head_stride,
                                   head_dim, describe(view)));
  }
  const std::int64_t token_extent = (view.heads - 1) * view.head_stride + head_dim;
  if (tokens > 1 && view.token_stride < token_extent) {
    throw InvalidInput(fmt::format("{}: tokens overlap, token stride {} < one token's {} elements ({})", name,
                                   view.token_stride, token_extent, describe(view)));
  }
  // Each factor is at most the buffer's size once the strides fit in it: no overflow below.
  if (view.token_stride > elements || view.head_stride > elements || view.offset > elements ||
      view_end(view, tokens, head_dim) > elements) {
    throw InvalidInput(fmt::format("{}: its rows reach past the buffer's {} elements ({}, {} tokens)", name,
                                   elements, describe(view), tokens));
  }
}

void validate_disjoint(const HeadView& q, const HeadView& k, std::int64_t tokens, std::int64_t head_dim) {
  if (q.heads == 0 || k.heads == 0 || tokens == 0) return;
  const std::int64_t q_extent = (q.heads - 1) * q.head_stride + head_dim;
  const std::int64_t k_extent = (k.heads - 1) * k.head_stride + head_dim;
  bool disjoint = view_end(q, tokens, head_dim) <= k.offset || view_end(k, tokens, head_dim) <= q.offset;
  if (!disjoint && q.token_stride == k.token_stride && q.token_stride > 0) {
    // Token t's rows of either view sit at offset + t * stride: within one period they are the
    // spans [q, q + q_extent) and [k, k + k_extent) modulo the stride.
    const std::int64_t period = q.token_stride;
    const std::int64_t d = ((k.offset - q.offset) % period + period) % period;
    disjoint = d >= q_extent && d + k_extent <= period;
  }
  if (!disjoint) {
    throw InvalidInput(fmt::format("q and k overlap: q {}, k {}", describe(q), describe(k)));
  }
}

void validate(const QkNorm& norm) {
  if (!std::isfinite(norm.eps) || norm.eps <= 0) {
    throw InvalidInput(fmt::format("qk_norm: eps {} must be finite and > 0", norm.eps));
  }
}

std::vector<float> build_cos_sin_cache(const RopeSpec& spec, std::int64_t rows) {
  validate(spec);
  if (axis_count(spec) != 1) throw InvalidInput("cos/sin cache: one position axis only (the engines' cache form)");
  if (spec.pass != Pass::forward) throw InvalidInput("cos/sin cache: the forward pass only");
  if (rows < 1 || rows > kMaxAbsPosition) {
    throw InvalidInput(fmt::format("cos/sin cache: {} rows, not in [1, 2^24]", rows));
  }
  const std::vector<double> theta = inverse_frequencies(spec);
  const double a = attention_factor(spec);
  const auto pairs = static_cast<std::int64_t>(theta.size());
  std::vector<float> cache(static_cast<std::size_t>(rows * 2 * pairs));
  for (std::int64_t m = 0; m < rows; ++m) {
    float* row = cache.data() + m * 2 * pairs;
    for (std::int64_t i = 0; i < pairs; ++i) {
      // m theta_i in double: |m theta| <= 2^24, so the angle is off by at most 2^-29 rad.
      const double angle = static_cast<double>(m) * theta[static_cast<std::size_t>(i)];
      row[i] = static_cast<float>(std::cos(angle) * a);
      row[pairs + i] = static_cast<float>(std::sin(angle) * a);
    }
  }
  return cache;
}

std::string describe(const QkNorm& norm) {
  return fmt::format("qk_norm eps={:g} weight={} precision={}", norm.eps, to_string(norm.weight),
                     to_string(norm.precision));
}

std::string describe(const HeadView& view) {
  if (view.heads == 0) return "absent";
  return fmt::format("heads {} at offset {}, token stride {}, head stride {}", view.heads, view.offset,
                     view.token_stride, view.head_stride);
}

}  // namespace ropecheck
