// The fused cache call's properties (issue 56): the call that rotates q and k and writes the
// rotated k and v into the paged KV cache, as vLLM, FlashInfer, TensorRT-LLM and llama.cpp ship
// it. The bugs live in the fusion, not in the rotation: where a slot's row goes, what padding
// does, how FP8 scales and saturates. Each case is one call drawn as engines make them
// (properties/harness/rope_cache_cases.h); the float64 truth is oracle_rope_and_cache.
#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "properties/catalogue.h"
#include "properties/harness/rapidcheck_bridge.h"
#include "properties/harness/rope_cache_cases.h"

namespace ropecheck {
namespace {

bool writes_fp8(const RopeCacheImpl& impl) {
  const auto storages = impl.capabilities().storages;
  return std::any_of(storages.begin(), storages.end(), [](CacheStorage s) { return is_fp8(s); });
}

// One case per call of `body`, through check_property (RapidCheck: seed, shrinking, replay).
PropertyResult check_cache_property(const Subject& subject, const RunConfig& config, std::string_view units,
                                    const std::function<void(ErrorTracker&)>& body) {
  ErrorTracker tracker;
  return check_property(subject, config, units, tracker, [&] { body(tracker); });
}

void fail_on(const WorstElement& found, ErrorTracker& tracker) {
  tracker.observe(found.error, found.bound);
  if (found.ratio > 0 && found.bound == 0) RC_FAIL(found.where);
}

// The fused call equals rotate-then-write, each half judged against the oracle: q within the
// tolerance model's bound, every addressed cache element within what the rotation, the scaling
// and the narrowing to the storage allow.
PropertyResult cache_oracle_agreement(const Subject& subject, const RunConfig& config) {
  const RopeCacheImpl& impl = *subject.rope_cache;
  return check_cache_property(subject, config, "error/bound", [&](ErrorTracker& tracker) {
    const RopeCacheCase c = pick_rope_cache_case(impl, CacheCaseAim::any);
    const RopeCacheOutput out = run_rope_cache_case(impl, c);
    const FusedCacheTruth truth = truth_of(c);
    const WorstElement q = worst_q_error(c, truth, out.q);
    tracker.observe(q.ratio, 1.0);
    if (q.ratio > 1) RC_FAIL(fmt::format("q: {:.4g} times its bound at {}; {}", q.ratio, q.where, describe_call(c)));
    const WorstElement cache = worst_cache_error(c, truth, out, false);
    tracker.observe(cache.ratio, 1.0);
    if (cache.ratio > 1) RC_FAIL(fmt::format("cache: {:.4g} times its bound at {}", cache.ratio, cache.where));
  });
}

// Every cache element no valid slot addresses keeps its bits: the whole of both caches compared,
// as vLLM's test_cache does, over a random pattern (NaNs included) rather than zeros.
PropertyResult cache_untouched_elsewhere(const Subject& subject, const RunConfig& config) {
  const RopeCacheImpl& impl = *subject.rope_cache;
  return check_cache_property(subject, config, "changed bits", [&](ErrorTracker& tracker) {
    const RopeCacheCase c = pick_rope_cache_case(impl, CacheCaseAim::any);
    const RopeCacheOutput out = run_rope_cache_case(impl, c);
    const WorstElement changed = first_unaddressed_change(c, truth_of(c), out);
    tracker.observe(changed.error, 0.0);
    if (changed.error > 0) RC_FAIL(changed.where);
  });
}

// A padding token (slot below 0: -1 as the engines send it, and any other) changes nothing it
// must not: its q as its rule says (kept bit for bit under skip_token; rotated under
// rotate_q_only), and the call leaves the caches, and every valid token's q, bit for bit as the
// same call without its padding tokens does.
PropertyResult padding_inert(const Subject& subject, const RunConfig& config) {
  const RopeCacheImpl& impl = *subject.rope_cache;
  return check_cache_property(subject, config, "changed bits", [&](ErrorTracker& tracker) {
    const RopeCacheCase c = pick_rope_cache_case(impl, CacheCaseAim::padding);
    const RopeCacheOutput out = run_rope_cache_case(impl, c);
    const RopeCacheCase valid = without_padding(c);
    // Every token padding: the call without them writes nothing.
    const RopeCacheOutput alone =
        valid.rope.tokens > 0 ? run_rope_cache_case(impl, valid) : RopeCacheOutput{{}, c.k_cache, c.v_cache};
    const auto row = static_cast<std::size_t>(c.rope.q_heads * c.rope.spec.head_dim);
    std::size_t valid_row = 0;
    for (std::int64_t t = 0; t < c.rope.tokens; ++t) {
      const auto at = static_cast<std::size_t>(t) * row;
      const bool padding = c.slots[static_cast<std::size_t>(t)] < 0;
      const float* expected = nullptr;
      const char* why = "";
      if (!padding) {
        expected = alone.q.data() + valid_row++ * row;
        why = "differs from the same call without the padding tokens";
      } else if (c.cache.padding == PaddingRule::skip_token) {
        expected = c.rope.q.data() + at;
        why = "changed, though the padding rule is skip_token";
      }
      const bool same = expected == nullptr || std::memcmp(out.q.data() + at, expected, row * sizeof(float)) == 0;
      tracker.observe(same ? 0.0 : 1.0, 0.0);
      if (!same) RC_FAIL(fmt::format("q of {} {}; {}", describe_token(c, t), why, describe_call(c)));
    }
    if (c.cache.padding == PaddingRule::rotate_q_only) {  // the padding tokens' q rotated too
      const WorstElement q = worst_q_error(c, truth_of(c), out.q);
      if (q.ratio > 1) RC_FAIL(fmt::format("q: {:.4g} times its bound at {} (padding rotate_q_only); {}", q.ratio,
                                           q.where, describe_call(c)));
    }
    for (const auto& [with, without, name] : {std::tuple{&out.k_cache, &alone.k_cache, "k cache"},
                                              std::tuple{&out.v_cache, &alone.v_cache, "v cache"}}) {
      const auto differ = std::mismatch(with->begin(), with->end(), without->begin());
      tracker.observe(differ.first == with->end() ? 0.0 : 1.0, 0.0);
      if (differ.first != with->end()) {
        const auto byte = static_cast<std::size_t>(differ.first - with->begin());
        RC_FAIL(fmt::format("the {}'s element {} differs from the same call without the padding tokens; {}", name,
                            byte / static_cast<std::size_t>(element_bytes(c.cache.storage)), describe_call(c)));
      }
    }
  });
}

// FP8 saturates: a value past the format's largest is stored as the largest (448 for e4m3, 57344
// for e5m2), with its sign, and no write is ever NaN or Inf. The trap eager
// torch.to(float8_e4m3fn) fell into (pytorch/ao #1912) and every non-saturating cast falls into.
PropertyResult fp8_saturates(const Subject& subject, const RunConfig& config) {
  const RopeCacheImpl& impl = *subject.rope_cache;
  if (!writes_fp8(impl)) return skipped_result(subject, config, "writes no FP8 cache");
  return check_cache_property(subject, config, "unsaturated elements", [&](ErrorTracker& tracker) {
    const RopeCacheCase c = pick_rope_cache_case(impl, CacheCaseAim::saturating);
    const RopeCacheOutput out = run_rope_cache_case(impl, c);
    fail_on(first_unsaturated(c, truth_of(c), out), tracker);
  });
}

// Dequantized FP8 entries, what attention reads back (stored / scale or stored * scale), are
// within the bound of the true rotated k and v: per-head scales from each head's largest value,
// as engines compute them, in the declared direction.
PropertyResult cache_dequantized_bound(const Subject& subject, const RunConfig& config) {
  const RopeCacheImpl& impl = *subject.rope_cache;
  if (!writes_fp8(impl)) return skipped_result(subject, config, "writes no FP8 cache");
  return check_cache_property(subject, config, "error/bound", [&](ErrorTracker& tracker) {
    const RopeCacheCase c = pick_rope_cache_case(impl, CacheCaseAim::fp8);
    const RopeCacheOutput out = run_rope_cache_case(impl, c);
    const WorstElement worst = worst_cache_error(c, truth_of(c), out, true);
    tracker.observe(worst.ratio, 1.0);
    if (worst.ratio > 1) RC_FAIL(fmt::format("{:.4g} times its bound at {}", worst.ratio, worst.where));
  });
}

}  // namespace

std::span<const Property> rope_cache_properties() {
  static const Property kAll[] = {
      {"cache_oracle_agreement",
       "the fused call equals rotate-then-write: q and every addressed cache element within the bound of the "
       "float64 oracle (tolerance model, the storage's and FP8's step included)",
       SubjectKind::rope_cache, cache_oracle_agreement},
      {"cache_untouched_elsewhere",
       "every cache element no valid slot addresses keeps its bits, both caches compared whole",
       SubjectKind::rope_cache, cache_untouched_elsewhere},
      {"padding_inert",
       "a padding token (slot < 0) changes nothing it must not: its q as its rule says, the caches and the "
       "other tokens' q as without it",
       SubjectKind::rope_cache, padding_inert},
      {"fp8_saturates", "FP8 writes saturate at the format's largest (e4m3 448, e5m2 57344), never NaN or Inf",
       SubjectKind::rope_cache, fp8_saturates},
      {"cache_dequantized_bound",
       "dequantized FP8 entries (per-head scales, either direction) within the bound of the true rotated k and v",
       SubjectKind::rope_cache, cache_dequantized_bound},
  };
  return kAll;
}

}  // namespace ropecheck
