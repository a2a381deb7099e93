// Input validation shared by every RoPE implementation (the non-virtual apply()).
#include "impls/rope_impl.h"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "core/errors.h"
#include "core/storage_convert.h"
#include "core/thread_team.h"

namespace ropecheck {

bool RopeCapabilities::supports(const RopeSpec& spec) const { return why_unsupported(spec).empty(); }

bool RopeCapabilities::implements(ScalingKind kind) const {
  return std::find(scaling_kinds.begin(), scaling_kinds.end(), kind) != scaling_kinds.end();
}

bool RopeCapabilities::implements(AxisMode mode) const {
  return std::find(axis_modes.begin(), axis_modes.end(), mode) != axis_modes.end();
}

bool RopeCapabilities::implements(Pass pass) const {
  return std::find(passes.begin(), passes.end(), pass) != passes.end();
}

std::string RopeCapabilities::why_unsupported(const RopeSpec& spec) const {
  if (!available) return fmt::format("not available on this CPU: {}", unavailable_reason);
  if (std::find(layouts.begin(), layouts.end(), spec.layout) == layouts.end()) {
    return fmt::format("layout {} not supported", to_string(spec.layout));
  }
  if (std::find(angle_precisions.begin(), angle_precisions.end(), spec.angle_precision) ==
      angle_precisions.end()) {
    return fmt::format("{} angles not supported", to_string(spec.angle_precision));
  }
  if (!implements(spec.scaling.kind)) {
    return fmt::format("frequency scaling ({}) not supported", describe(spec.scaling));
  }
  if (!implements(spec.axes.mode)) {
    return fmt::format("{} position axes not supported", to_string(spec.axes.mode));
  }
  if (!implements(spec.pass)) return fmt::format("the {} pass not implemented", to_string(spec.pass));
  if (spec.head_dim > max_head_dim) {
    return fmt::format("head_dim {} above its maximum {}", spec.head_dim, max_head_dim);
  }
  if (!partial_rotary && spec.rotary_dim != spec.head_dim) {
    return "partial rotary (rotary_dim < head_dim) not supported";
  }
  return {};
}

namespace {

template <typename Element>
void validate_shape(const RopeSpec& spec, const HeadTensorOf<Element>& x, PositionIds positions,
                    std::string_view name) {
  if (x.tokens <= 0 || x.heads <= 0) {
    throw InvalidInput(fmt::format("{}: empty tensor ({} tokens x {} heads)", name, x.tokens,
                                   x.heads));
  }
  if (x.head_dim != spec.head_dim) {
    throw InvalidInput(fmt::format("{}: head_dim {} does not match the spec's {}", name,
                                   x.head_dim, spec.head_dim));
  }
  // Checked in unsigned 128-bit-safe steps: tokens*heads*head_dim must equal data.size().
  const auto tokens = static_cast<unsigned long long>(x.tokens);
  const auto heads = static_cast<unsigned long long>(x.heads);
  const auto dim = static_cast<unsigned long long>(x.head_dim);
  unsigned long long elements = 0;
  if (__builtin_mul_overflow(tokens, heads, &elements) ||
      __builtin_mul_overflow(elements, dim, &elements) || elements != x.data.size()) {
    throw InvalidInput(fmt::format("{}: buffer holds {} elements, shape {}x{}x{} needs {}", name,
                                   x.data.size(), x.tokens, x.heads, x.head_dim,
                                   static_cast<double>(tokens) * heads * dim));
  }
  const auto axes = static_cast<unsigned long long>(axis_count(spec));
  if (positions.size() != tokens * axes) {
    if (axes == 1) {
      throw InvalidInput(fmt::format("{}: {} positions for {} tokens (one position per token)",
                                     name, positions.size(), x.tokens));
    }
    throw InvalidInput(fmt::format("{}: {} positions for {} tokens ({} axes: {} positions per "
                                   "token, token-major)",
                                   name, positions.size(), x.tokens, to_string(spec.axes.mode),
                                   axes));
  }
  for (std::size_t at = 0; at < positions.size(); ++at) {
    if (positions[at] > kMaxAbsPosition || positions[at] < -kMaxAbsPosition) {
      if (axes == 1) {
        throw InvalidInput(fmt::format("position {} of token {} is outside [-2^24, 2^24]",
                                       positions[at], at));
      }
      throw InvalidInput(fmt::format("position {} of token {} on axis {} is outside [-2^24, 2^24]",
                                     positions[at], at / axes, at % axes));
    }
  }
}

}  // namespace

void validate_tensor(const RopeSpec& spec, const HeadTensor& x, PositionIds positions,
                     std::string_view name) {
  validate_shape(spec, x, positions, name);
}

void validate_tensor(const RopeSpec& spec, const Bf16HeadTensor& x, PositionIds positions,
                     std::string_view name) {
  validate_shape(spec, x, positions, name);
}

void validate_tensor(const RopeSpec& spec, const Fp16HeadTensor& x, PositionIds positions,
                     std::string_view name) {
  validate_shape(spec, x, positions, name);
}

void RopeImpl::apply(const RopeSpec& spec, HeadTensor q, HeadTensor k,
                     PositionIds positions) const {
  apply(spec, q, k, positions, 1);
}

void RopeImpl::apply(const RopeSpec& spec, HeadTensor q, HeadTensor k, PositionIds positions,
                     int threads) const {
  validate(spec);
  validate_tensor(spec, q, positions, "q");
  validate_tensor(spec, k, positions, "k");
  const RopeCapabilities& caps = checked_capabilities();
  if (auto why = caps.why_unsupported(spec); !why.empty()) {
    throw InvalidInput(fmt::format("{}: {}", id(), why));
  }
  if (threads < 1 || threads > caps.max_threads) {
    throw InvalidInput(fmt::format("{}: {} threads asked, it takes 1 to {}", id(), threads,
                                   caps.max_threads));
  }
  if (threads == 1) return rotate_qk(spec, q, k, positions);
  rotate_qk_threads(spec, q, k, positions, threads);
}

TokenChunk token_chunk(std::int64_t tokens, int threads, int j) {
  const std::int64_t share = (tokens + threads - 1) / threads;
  const std::int64_t begin = std::min(tokens, share * j);
  return {begin, std::min(tokens, begin + share)};
}

void RopeImpl::rotate_qk_threads(const RopeSpec& spec, HeadTensor q, HeadTensor k,
                                 PositionIds positions, int threads) const {
  const auto part = [&](const HeadTensor& x, TokenChunk c) {
    const auto row = static_cast<std::size_t>(x.heads * x.head_dim);
    return HeadTensor{x.data.subspan(static_cast<std::size_t>(c.begin) * row,
                                     static_cast<std::size_t>(c.end - c.begin) * row),
                      c.end - c.begin, x.heads, x.head_dim};
  };
  const auto rotate_chunk = [&](int j) {
    const TokenChunk c = token_chunk(q.tokens, threads, j);
    if (c.begin == c.end) return;
    const auto axes = static_cast<std::size_t>(axis_count(spec));
    rotate_qk(spec, part(q, c), part(k, c),
              positions.subspan(static_cast<std::size_t>(c.begin) * axes,
                                static_cast<std::size_t>(c.end - c.begin) * axes));
  };
  run_team(threads, rotate_chunk);
}

const RopeCapabilities& RopeImpl::checked_capabilities() const {
  std::call_once(capabilities_once_, [this] { capabilities_ = capabilities(); });
  return capabilities_;
}

template <typename Element>
void RopeImpl::check_stored(StorageType storage, const RopeSpec& spec,
                            const HeadTensorOf<Element>& q, const HeadTensorOf<Element>& k,
                            PositionIds positions) const {
  validate(spec);
  validate_tensor(spec, q, positions, "q");
  validate_tensor(spec, k, positions, "k");
  const RopeCapabilities& caps = checked_capabilities();
  if (caps.storage != storage) {
    throw InvalidInput(fmt::format("{}: stores {}, not {}", id(), to_string(caps.storage),
                                   to_string(storage)));
  }
  if (auto why = caps.why_unsupported(spec); !why.empty()) {
    throw InvalidInput(fmt::format("{}: {}", id(), why));
  }
}

void RopeImpl::apply_bf16(const RopeSpec& spec, Bf16HeadTensor q, Bf16HeadTensor k,
                          PositionIds positions) const {
  check_stored(StorageType::bf16, spec, q, k, positions);
  rotate_qk_bf16(spec, q, k, positions);
}

void RopeImpl::apply_fp16(const RopeSpec& spec, Fp16HeadTensor q, Fp16HeadTensor k,
                          PositionIds positions) const {
  check_stored(StorageType::fp16, spec, q, k, positions);
  rotate_qk_fp16(spec, q, k, positions);
}

void RopeImpl::rotate_qk_bf16(const RopeSpec&, Bf16HeadTensor, Bf16HeadTensor, PositionIds) const {
  throw InvalidInput(fmt::format("{}: no bf16 storage", id()));
}

void RopeImpl::rotate_qk_fp16(const RopeSpec&, Fp16HeadTensor, Fp16HeadTensor, PositionIds) const {
  throw InvalidInput(fmt::format("{}: no fp16 storage", id()));
}

namespace {

// Narrows q and k to their storage, rotates, widens back (storage_convert.h: whole tensors).
template <typename Element, typename Rotate>
void rotate_stored(HeadTensor q, HeadTensor k, void (*narrow)(std::span<const float>, std::span<Element>),
                   void (*widen)(std::span<const Element>, std::span<float>), Rotate rotate) {
  std::vector<Element> q16(q.data.size()), k16(k.data.size());
  narrow(q.data, q16);
  narrow(k.data, k16);
  rotate(HeadTensorOf<Element>{q16, q.tokens, q.heads, q.head_dim},
         HeadTensorOf<Element>{k16, k.tokens, k.heads, k.head_dim});
  widen(q16, q.data);
  widen(k16, k.data);
}

}  // namespace

void RopeImpl::rotate_qk_through_storage(StorageType storage, const RopeSpec& spec, HeadTensor q,
                                         HeadTensor k, PositionIds positions) const {
  switch (storage) {
    case StorageType::bf16:
      return rotate_stored(q, k, narrow_to_bf16, widen_from_bf16,
                           [&](Bf16HeadTensor q16, Bf16HeadTensor k16) {
                             rotate_qk_bf16(spec, q16, k16, positions);
                           });
    case StorageType::fp16:
      return rotate_stored(q, k, narrow_to_fp16, widen_from_fp16,
                           [&](Fp16HeadTensor q16, Fp16HeadTensor k16) {
                             rotate_qk_fp16(spec, q16, k16, positions);
                           });
    case StorageType::fp32: break;
  }
  throw InvalidInput(fmt::format("{}: fp32 storage has no 16-bit path", id()));
}

void RopeImpl::apply(const RopeSpec& spec, HeadTensor x, PositionIds positions) const {
  validate(spec);
  validate_tensor(spec, x, positions, "x");
  if (auto why = checked_capabilities().why_unsupported(spec); !why.empty()) {
    throw InvalidInput(fmt::format("{}: {}", id(), why));
  }
  rotate_qk(spec, x, HeadTensor{{}, x.tokens, 0, x.head_dim}, positions);
}

}  // namespace ropecheck
