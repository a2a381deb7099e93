// The call forms' properties (issue 52): RoPE as the engines call it (a cos/sin cache indexed by
// position, q and k as strided views of a packed qkv or of MLA's heads, k optional) and QK-norm
// fused before it (Qwen3, Gemma 3, GLM-4; vLLM's fused_qk_norm_rope, FlashInfer's
// fused_qk_rmsnorm_rope). The bugs found in the field live in the form, not in the rotation: k
// read with q's stride, strides ignored, rotary_dim ignored by the norm's kernel, cos and sin read
// at one index, eps dropped, Gemma's 1 + w. Each case is one call drawn as engines make them
// (properties/harness/rope_form_cases.h); the truth is oracle_norm_rope.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/tolerance.h"
#include "properties/catalogue.h"
#include "properties/harness/guarded_apply.h"
#include "properties/harness/rapidcheck_bridge.h"
#include "properties/harness/rope_form_cases.h"

namespace ropecheck {
namespace {

// One case per call of `body`, through check_property, with the call's threads drawn up to the
// run's --threads.
PropertyResult check_form_property(const Subject& subject, const RunConfig& config, std::string_view units,
                                   const std::function<void(const RopeFormImpl&, ErrorTracker&)>& body) {
  const RopeFormImpl& impl = *subject.rope_form;
  CallThreadsInForce threads(std::min(config.threads, impl.rope_capabilities().max_threads));
  ErrorTracker tracker;
  return check_property(subject, config, units, tracker, [&] { body(impl, tracker); });
}

void fail_if_over_bound(const WorstElement& worst, ErrorTracker& tracker, const RopeFormCase& c) {
  tracker.observe(worst.ratio, 1.0);
  if (!(worst.ratio <= 1)) {
    RC_FAIL(fmt::format("{:.4g} times its bound at {}; {}", worst.ratio, worst.where, describe_case(c)));
  }
}

// Every element of q's and k's rows within the bound of the float64 truth: the rotation's
// (tolerance model) plus the norm's, with the cos/sin cache, the strides and the norm as drawn.
PropertyResult form_oracle_agreement(const Subject& subject, const RunConfig& config) {
  return check_form_property(subject, config, "error/bound", [](const RopeFormImpl& impl, ErrorTracker& tracker) {
    const RopeFormCase c = pick_rope_form_case(impl, FormCaseAim::any);
    fail_if_over_bound(worst_form_error(c, run_rope_form_case(impl, c)), tracker, c);
  });
}

// Positions at the cos/sin cache's first and last rows: the row read is the position's, never one
// past the cache's end.
PropertyResult form_cache_last_row(const Subject& subject, const RunConfig& config) {
  if (const auto sources = subject.rope_form->capabilities().angle_sources;
      std::find(sources.begin(), sources.end(), AngleSource::cos_sin_cache) == sources.end()) {
    return skipped_result(subject, config, "takes no cos/sin cache");
  }
  return check_form_property(subject, config, "error/bound", [](const RopeFormImpl& impl, ErrorTracker& tracker) {
    const RopeFormCase c = pick_rope_form_case(impl, FormCaseAim::cache_edge);
    fail_if_over_bound(worst_form_error(c, run_rope_form_case(impl, c)), tracker, c);
  });
}

// Everything in the buffer outside q's and k's rows keeps its bits: v, MLA's nope parts and
// latent, the gaps between padded heads, k's place when k is absent.
PropertyResult form_untouched_outside(const Subject& subject, const RunConfig& config) {
  return check_form_property(subject, config, "changed elements", [](const RopeFormImpl& impl, ErrorTracker& tracker) {
    const RopeFormCase c = pick_rope_form_case(impl, FormCaseAim::any);
    const WorstElement changed = first_outside_change(c, run_rope_form_case(impl, c));
    tracker.observe(changed.error, 0.0);
    if (changed.error > 0) RC_FAIL(changed.where);
  });
}

bool normalizes(const Subject& subject) { return subject.rope_form->capabilities().normalizes(); }

// Two calls' results a and b, of cases whose truths are ta and tb: |a - b| <= |ta - tb| plus both
// bounds, element by element of both views (the first over it fails the case).
void expect_apart_at_most(const RopeFormCase& ca, std::span<const std::byte> a, const RopeFormCase& cb,
                          std::span<const std::byte> b, std::string_view what, ErrorTracker& tracker) {
  for (const bool of_q : {true, false}) {
    const HeadView& view = of_q ? ca.q : ca.k;
    if (view.heads == 0) continue;
    const RowJudgement ja = judge_rows(ca, of_q), jb = judge_rows(cb, of_q);
    const std::vector<float> ya = gather_rows(ca, a, view), yb = gather_rows(cb, b, view);
    for (std::size_t j = 0; j < ya.size(); ++j) {
      const double apart = std::abs(static_cast<double>(ya[j]) - yb[j]);
      const double truths = std::abs(ja.truth[j] - jb.truth[j]);
      const double allowed = ja.bound[j] + jb.bound[j];
      // The excess over the truths' own difference, over what both calls' errors allow.
      const double excess = apart - truths;
      const double ratio = excess <= 0 ? 0 : allowed == 0 ? INFINITY : excess / allowed;
      tracker.observe(std::isnan(ratio) ? INFINITY : ratio, 1.0);
      if (!(ratio <= 1)) {
        const auto d = static_cast<std::size_t>(ca.spec.head_dim);
        RC_FAIL(fmt::format("{} row {} feature {}: {} {} against {} (truths {:.9g} and {:.9g}, both calls' bounds "
                            "{:.3g}); {}",
                            of_q ? "q" : "k", j / d, j % d, what, ya[j], yb[j], ja.truth[j], jb.truth[j], allowed,
                            describe_case(ca)));
      }
    }
  }
}

// The fused call against norm-then-rotate: the truth's normalized rows, rounded to the storage,
// rotated by the same implementation's plain call. The results differ by at most the truths'
// difference (the one rounding of the normalized input) plus both calls' bounds: a fused path
// that rotates other than the plain one does (another row, another index) shows here by name.
PropertyResult qk_norm_matches_two_passes(const Subject& subject, const RunConfig& config) {
  if (!normalizes(subject)) return skipped_result(subject, config, "no QK-norm");
  if (!subject.rope_form->capabilities().plain_calls) return skipped_result(subject, config, "takes no plain calls");
  return check_form_property(subject, config, "error/bound", [](const RopeFormImpl& impl, ErrorTracker& tracker) {
    const RopeFormCase c = pick_rope_form_case(impl, FormCaseAim::norm);
    RopeFormCase plain = c;  // the normalized rows as the input of a call without a norm
    plain.has_norm = false;
    plain.q_weight.clear();
    plain.k_weight.clear();
    for (const bool of_q : {true, false}) {
      const HeadView& view = of_q ? c.q : c.k;
      if (view.heads == 0) continue;
      const std::vector<double> normalized = truth_of(c, of_q).normalized;
      std::size_t next = 0;
      for (std::int64_t t = 0; t < c.tokens; ++t) {
        for (std::int64_t h = 0; h < view.heads; ++h) {
          for (std::int64_t f = 0, start = row_start(view, t, h); f < c.spec.head_dim; ++f) {
            store_element(c.storage, plain.buffer, start + f, static_cast<float>(normalized[next++]));
          }
        }
      }
    }
    expect_apart_at_most(c, run_rope_form_case(impl, c), plain, run_rope_form_case(impl, plain),
                         "fused against norm-then-rotate:", tracker);
  });
}

// RMSNorm is scale-invariant: x -> 2^k x (exact in every storage) changes the result only as eps
// changes the truth; the two calls differ by at most that plus both bounds.
PropertyResult qk_norm_scale_invariant(const Subject& subject, const RunConfig& config) {
  if (!normalizes(subject)) return skipped_result(subject, config, "no QK-norm");
  return check_form_property(subject, config, "error/bound", [](const RopeFormImpl& impl, ErrorTracker& tracker) {
    const RopeFormCase c = pick_rope_form_case(impl, FormCaseAim::norm);
    const int exponent = *rc::gen::element(-3, -1, 1, 3).as("scale 2^k");
    RopeFormCase scaled = c;
    for (std::int64_t e = 0; e < c.elements(); ++e) {
      const BufferPart part = c.parts[static_cast<std::size_t>(e)];
      if (part != BufferPart::q_row && part != BufferPart::k_row) continue;
      store_element(c.storage, scaled.buffer, e, std::ldexp(load_element(c.storage, c.buffer, e), exponent));
    }
    expect_apart_at_most(c, run_rope_form_case(impl, c), scaled, run_rope_form_case(impl, scaled),
                         fmt::format("x and 2^{} x:", exponent), tracker);
  });
}

// A head of zeros stays finite: eps inside the root keeps 0 / sqrt(0 + eps) = 0; without it,
// 0 / 0 is NaN (and the zero head of a padding token poisons attention).
PropertyResult qk_norm_zero_head_finite(const Subject& subject, const RunConfig& config) {
  if (!normalizes(subject)) return skipped_result(subject, config, "no QK-norm");
  return check_form_property(subject, config, "non-finite elements", [](const RopeFormImpl& impl, ErrorTracker& tracker) {
    const RopeFormCase c = pick_rope_form_case(impl, FormCaseAim::zero_head);
    const std::vector<std::byte> out = run_rope_form_case(impl, c);
    for (const bool of_q : {true, false}) {
      const HeadView& view = of_q ? c.q : c.k;
      const std::vector<float> x = gather_rows(c, c.buffer, view), y = gather_rows(c, out, view);
      const auto d = static_cast<std::size_t>(c.spec.head_dim);
      for (std::size_t row = 0; row < x.size(); row += d) {
        const bool zero = std::all_of(x.begin() + static_cast<std::ptrdiff_t>(row),
                                      x.begin() + static_cast<std::ptrdiff_t>(row + d), [](float v) { return v == 0; });
        for (std::size_t f = 0; f < d; ++f) {
          const float v = y[row + f];
          const bool bad = !std::isfinite(v) || (zero && v != 0);
          tracker.observe(bad ? 1.0 : 0.0, 0.0);
          if (bad) {
            RC_FAIL(fmt::format("{} row {} feature {} is {}{}; {}", of_q ? "q" : "k", row / d, f, v,
                                zero ? " from a head of zeros" : "", describe_case(c)));
          }
        }
      }
    }
  });
}

// With rotary_dim < head_dim the features past it are normalized (their share of the RMS
// included) but not rotated: a kernel that ignores rotary_dim rotates them (vLLM PR #43676:
// GLM-4.7 scored 0 on gsm8k).
PropertyResult qk_norm_tail_not_rotated(const Subject& subject, const RunConfig& config) {
  if (!normalizes(subject)) return skipped_result(subject, config, "no QK-norm");
  if (!subject.rope_form->rope_capabilities().partial_rotary) return skipped_result(subject, config, "no partial rotary");
  return check_form_property(subject, config, "error/bound", [](const RopeFormImpl& impl, ErrorTracker& tracker) {
    const RopeFormCase c = pick_rope_form_case(impl, FormCaseAim::partial);
    fail_if_over_bound(worst_form_error(c, run_rope_form_case(impl, c), true), tracker, c);
  });
}

}  // namespace

std::span<const Property> rope_form_properties() {
  static const Property kAll[] = {
      {"form_oracle_agreement",
       "RoPE in the engines' call forms (cos/sin cache, strided q and k, k absent, MLA's rope part), QK-norm "
       "included: every row element within the bound of the float64 oracle (tolerance model plus the norm's)",
       SubjectKind::rope_form, form_oracle_agreement},
      {"form_cache_last_row", "positions at the cos/sin cache's first and last rows read those rows",
       SubjectKind::rope_form, form_cache_last_row},
      {"form_untouched_outside",
       "everything outside q's and k's rows keeps its bits: v, MLA's nope parts and latent, gaps, k's place",
       SubjectKind::rope_form, form_untouched_outside},
      {"qk_norm_matches_two_passes",
       "the fused QK-norm call equals the truth's norm then the same implementation's plain call, within both bounds",
       SubjectKind::rope_form, qk_norm_matches_two_passes},
      {"qk_norm_scale_invariant", "x -> 2^k x changes the result only as eps changes the truth",
       SubjectKind::rope_form, qk_norm_scale_invariant},
      {"qk_norm_zero_head_finite", "a head of zeros comes out zeros, and nothing comes out NaN or Inf",
       SubjectKind::rope_form, qk_norm_zero_head_finite},
      {"qk_norm_tail_not_rotated",
       "with rotary_dim < head_dim the features past it are normalized, not rotated",
       SubjectKind::rope_form, qk_norm_tail_not_rotated},
  };
  return kAll;
}

}  // namespace ropecheck
