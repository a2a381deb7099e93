// RopeFormImpl::apply (rope_form_impl.h): every check before a call in an engine's form runs.
#include "impls/fused/rope_form_impl.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>

#include "core/errors.h"

namespace ropecheck {
namespace {

bool is_flat(const HeadView& view, std::int64_t head_dim) {
  return view.heads == 0 || (view.head_stride == head_dim && view.token_stride == view.heads * head_dim);
}

void validate_weight(std::span<const float> weight, std::int64_t head_dim, const char* name) {
  if (static_cast<std::int64_t>(weight.size()) != head_dim) {
    throw InvalidInput(fmt::format("qk_norm: {} has {} entries, head_dim is {}", name, weight.size(), head_dim));
  }
  for (std::size_t f = 0; f < weight.size(); ++f) {
    if (!std::isfinite(weight[f])) throw InvalidInput(fmt::format("qk_norm: {}[{}] is {}", name, f, weight[f]));
  }
}

}  // namespace

std::int64_t RopeFormCall::elements() const {
  return static_cast<std::int64_t>(buffer.size()) / element_bytes(storage);
}

std::string describe(const RopeFormCall& call) {
  constexpr std::size_t kShown = 8;
  const std::size_t shown = std::min(call.positions.size(), kShown);
  std::string angles(to_string(call.angles));
  if (call.angles == AngleSource::cos_sin_cache) angles += fmt::format(" of {} rows", call.cache_rows);
  return fmt::format("{}; {} storage, angles from the {}, {}; q {}; k {}; tokens {}, positions [{}{}], threads {}",
                     describe(call.spec), to_string(call.storage), angles,
                     call.has_norm ? describe(call.norm) : "no qk_norm", describe(call.q), describe(call.k),
                     call.tokens, fmt::join(call.positions.first(shown), ", "),
                     call.positions.size() > shown ? ", ..." : "", call.threads);
}

std::string RopeFormCapabilities::why_unsupported(const RopeFormCall& call) const {
  if (std::ranges::find(storages, call.storage) == storages.end()) return fmt::format("no {} storage", to_string(call.storage));
  if (std::ranges::find(angle_sources, call.angles) == angle_sources.end()) return fmt::format("no angles from the {}", to_string(call.angles));
  if (!strided && !(is_flat(call.q, call.spec.head_dim) && is_flat(call.k, call.spec.head_dim))) {
    return "flat q and k only, no strided views";
  }
  if (!k_optional && call.k.heads == 0) return "k is required";
  if (call.has_norm) {
    if (std::ranges::find(norm_weights, call.norm.weight) == norm_weights.end()) {
      return normalizes() ? fmt::format("no {} norm weight", to_string(call.norm.weight)) : "no qk_norm";
    }
    if (call.norm.precision != norm_precision) {
      return fmt::format("its norm is {}, not {}", to_string(norm_precision), to_string(call.norm.precision));
    }
  } else if (!plain_calls) {
    return "calls with qk_norm only";
  }
  return "";
}

RopeCapabilities RopeFormImpl::rope_capabilities() const {
  RopeCapabilities caps;
  caps.layouts = {Layout::interleaved, Layout::half_split};
  caps.angle_precisions = {AnglePrecision::fp32};
  return caps;
}

// Every check of apply() but the capabilities.
static void validate_form_call(const RopeFormCall& call) {
  validate(call.spec);
  const std::int64_t d = call.spec.head_dim;
  if (call.tokens < 0) throw InvalidInput(fmt::format("rope form call: {} tokens", call.tokens));
  if (call.q.heads <= 0) throw InvalidInput(fmt::format("rope form call: q has {} heads", call.q.heads));
  if (call.buffer.size() % static_cast<std::size_t>(element_bytes(call.storage)) != 0) {
    throw InvalidInput(fmt::format("rope form call: the buffer's {} bytes are not whole {} elements",
                                   call.buffer.size(), to_string(call.storage)));
  }
  validate_view(call.q, call.tokens, d, call.elements(), "q");
  validate_view(call.k, call.tokens, d, call.elements(), "k");
  validate_disjoint(call.q, call.k, call.tokens, d);
  if (axis_count(call.spec) != 1) throw InvalidInput("rope form call: one position axis only");
  if (static_cast<std::int64_t>(call.positions.size()) != call.tokens) {
    throw InvalidInput(fmt::format("rope form call: {} positions for {} tokens", call.positions.size(), call.tokens));
  }
  if (call.angles == AngleSource::cos_sin_cache) {
    if (call.cache_rows < 1 || static_cast<std::int64_t>(call.cos_sin_cache.size()) !=
                                   call.cache_rows * call.spec.rotary_dim) {
      throw InvalidInput(fmt::format("rope form call: a cos/sin cache of {} values for {} rows of rotary_dim {}",
                                     call.cos_sin_cache.size(), call.cache_rows, call.spec.rotary_dim));
    }
    if (call.spec.pass != Pass::forward) throw InvalidInput("rope form call: a cos/sin cache rotates forward only");
  } else if (!call.cos_sin_cache.empty()) {
    throw InvalidInput("rope form call: a cos/sin cache given with angles from the spec");
  }
  for (std::size_t t = 0; t < call.positions.size(); ++t) {
    const std::int64_t m = call.positions[t];
    const bool in_cache = m >= 0 && m < call.cache_rows;
    if (call.angles == AngleSource::cos_sin_cache ? !in_cache : (m > kMaxAbsPosition || m < -kMaxAbsPosition)) {
      throw InvalidInput(call.angles == AngleSource::cos_sin_cache
                             ? fmt::format("rope form call: token {}'s position {} is past the cos/sin cache's "
                                           "rows [0, {})",
                                           t, m, call.cache_rows)
                             : fmt::format("rope form call: token {}'s position {} is past +-2^24", t, m));
    }
  }
  if (call.has_norm) {
    validate(call.norm);
    validate_weight(call.q_weight, d, "q_weight");
    if (call.k.heads > 0) validate_weight(call.k_weight, d, "k_weight");
  }
}

const RopeFormCapabilities& RopeFormImpl::checked_capabilities() const {
  std::call_once(capabilities_once_, [this] { capabilities_ = capabilities(); });
  return capabilities_;
}

void RopeFormImpl::apply(const RopeFormCall& call) const {
  validate_form_call(call);
  const RopeCapabilities rope = rope_capabilities();
  if (const std::string why = rope.why_unsupported(call.spec); !why.empty()) {
    throw InvalidInput(fmt::format("{}: {}", id(), why));
  }
  if (call.threads < 1 || call.threads > rope.max_threads) {
    throw InvalidInput(fmt::format("{}: {} threads asked, it takes 1 to {}", id(), call.threads, rope.max_threads));
  }
  if (const std::string why = checked_capabilities().why_unsupported(call); !why.empty()) {
    throw InvalidInput(fmt::format("{} does not run this call: {}", id(), why));
  }
  if (call.tokens == 0) return;
  run(call);
}

}  // namespace ropecheck
