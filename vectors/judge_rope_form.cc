// judge_rope_form and rope_form_call_text (judge_rope_form.h). The call forms' bugs are in where
// the rows are (a stride ignored, k read with q's head stride, a write past a row into v) and in
// the norm (eps dropped, 1 + w the wrong way): the messages name both the view coordinates and
// the buffer element, and an untouched element by the region it lies in.
#include "vectors/judge_rope_form.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>

#include "core/rope_form.h"
#include "core/tolerance.h"
#include "vectors/rope_form_manifest.h"

namespace ropecheck {
namespace {

// The pair of rotated feature f (< rotary_dim) and the pair's other feature.
std::pair<int, int> form_pair_of(const RopeSpec& spec, int f) {
  if (spec.layout == Layout::interleaved) return {f / 2, f ^ 1};
  const int half = spec.rotary_dim / 2;
  return {f % half, f < half ? f + half : f - half};
}

std::string form_element_text(StorageType storage, std::span<const std::byte> buffer, std::int64_t index) {
  const int bytes = element_bytes(storage);
  std::uint32_t bits = 0;
  std::memcpy(&bits, buffer.data() + index * bytes, static_cast<std::size_t>(bytes));  // little-endian
  return fmt::format("{:.9g} (0x{:0{}x})", load_element(storage, buffer, index), bits, 2 * bytes);
}

bool same_element_bits(StorageType storage, std::span<const std::byte> a, std::span<const std::byte> b,
                       std::int64_t index) {
  const auto bytes = static_cast<std::size_t>(element_bytes(storage));
  return std::memcmp(a.data() + static_cast<std::size_t>(index) * bytes, b.data() + static_cast<std::size_t>(index) * bytes,
                     bytes) == 0;
}

// (token, head, feature) of `index` in rows of `rows` with `width` features, if it lies in one.
struct FormCoordinates {
  std::int64_t token, head, feature;
};
std::optional<FormCoordinates> locate(const HeadView& rows, std::int64_t width, std::int64_t tokens, std::int64_t index) {
  if (rows.heads == 0 || index < rows.offset) return std::nullopt;
  const std::int64_t rel = index - rows.offset;
  const std::int64_t t = rows.token_stride > 0 ? rel / rows.token_stride : 0;
  const std::int64_t in_token = rel - t * rows.token_stride;
  const std::int64_t h = rows.heads > 1 && rows.head_stride > 0 ? in_token / rows.head_stride : 0;
  const std::int64_t f = in_token - h * rows.head_stride;
  if (t >= tokens || h >= rows.heads || f < 0 || f >= width) return std::nullopt;
  return FormCoordinates{t, h, f};
}

// "v (token 0, head 1, feature 3)", or "a gap (in no view and no named region)".
std::string untouched_place(const FormCall& call, std::int64_t tokens, std::int64_t index) {
  for (const FormRegion& region : call.regions) {
    if (const auto at = locate(region.rows, region.width, tokens, index)) {
      return fmt::format("{} (token {}, head {}, feature {})", region.name, at->token, at->head, at->feature);
    }
  }
  return "a gap (in no view and no named region)";
}

// The worst element and the first one over its bound; `where` is formatted only when kept.
class FormVerdict {
 public:
  template <typename Where>
  void record(double ratio, double error, double bound, const Where& where) {
    const bool worst = ratio > result_.worst.ratio || result_.worst.where.empty();
    const bool first = ratio > 1 && result_.first_wrong.empty();
    if (!worst && !first) return;
    const std::string text = where();
    if (worst) result_.worst = {ratio, error, bound, text, "abs"};
    if (first) result_.first_wrong = text;
  }
  RopeFormVerdict result() const { return result_; }

 private:
  RopeFormVerdict result_;
};

double form_ratio(double error, double bound) {
  if (std::isnan(error)) return INFINITY;
  if (bound > 0) return error / bound;
  return error == 0 ? 0.0 : INFINITY;
}

}  // namespace

AnglePrecision form_angles(const ManifestCase& c, AnglePrecision port_angles) {
  return c.form.angles == AngleSource::cos_sin_cache ? AnglePrecision::fp64 : port_angles;
}

double form_element_bound(const ManifestCase& c, AnglePrecision angles, std::int64_t position,
                          std::span<const double> theta, std::span<const double> normalized, int f) {
  const RopeSpec& spec = c.rope_spec;
  if (f >= spec.rotary_dim) return c.form.has_norm ? c.form_norm.tail(normalized[static_cast<std::size_t>(f)]) : 0.0;
  const auto [pair, partner] = form_pair_of(spec, f);
  const double norm = std::hypot(normalized[static_cast<std::size_t>(f)], normalized[static_cast<std::size_t>(partner)]);
  const double units = c.rope_tolerance.bound_units(form_angles(c, angles), position,
                                                    theta[static_cast<std::size_t>(pair)], pair);
  return c.form_norm.rotated(units, c.rope_tolerance.attention_factor, c.rope_tolerance.unit_pair_norm(norm));
}

RopeFormVerdict judge_rope_form(const ManifestCase& c, const RopeFormCaseData& data, std::span<const std::byte> out,
                                AnglePrecision angles) {
  const FormCall& call = c.form;
  const RopeSpec& spec = c.rope_spec;
  const StorageType storage = call.storage;
  const auto tokens = static_cast<std::int64_t>(data.positions.size());
  const std::int64_t d = spec.head_dim;
  FormVerdict verdict;
  std::vector<bool> in_view(static_cast<std::size_t>(call.elements), false);

  for (const bool of_q : {true, false}) {
    const HeadView& view = of_q ? call.q : call.k;
    const char* name = of_q ? "q" : "k";
    const std::vector<double>& expected = of_q ? data.q_expected : data.k_expected;
    const std::vector<double>& normalized = of_q ? data.q_normalized : data.k_normalized;
    for (std::int64_t t = 0; t < tokens && view.heads > 0; ++t) {
      const std::int64_t m = data.positions[static_cast<std::size_t>(t)];
      for (std::int64_t h = 0; h < view.heads; ++h) {
        const auto row = static_cast<std::size_t>((t * view.heads + h) * d);
        const std::span<const double> x_hat(normalized.data() + row, static_cast<std::size_t>(d));
        for (int f = 0; f < d; ++f) {
          const std::int64_t index = row_start(view, t, h) + f;
          in_view[static_cast<std::size_t>(index)] = true;
          const double got = load_element(storage, out, index);
          const double want = expected[row + static_cast<std::size_t>(f)];
          const bool rotated = f < spec.rotary_dim;
          if (!rotated && !call.has_norm) {
            // Past rotary_dim without a norm: the input's bits.
            if (same_element_bits(storage, out, data.buffer, index)) continue;
            verdict.record(INFINITY, INFINITY, 0.0, [&] {
              return fmt::format("{} (token {}, head {}, feature {}: past rotary_dim {}, must pass through bit for "
                                 "bit) at element {}: got {}, input {}",
                                 name, t, h, f, spec.rotary_dim, index, form_element_text(storage, out, index),
                                 form_element_text(storage, data.buffer, index));
            });
            continue;
          }
          const double bound = form_element_bound(c, angles, m, data.theta, x_hat, f);
          const double error = std::abs(got - want);
          verdict.record(form_ratio(error, bound), error, bound, [&] {
            const std::string what =
                rotated ? fmt::format("pair {}, position {}, theta {:.6g}", form_pair_of(spec, f).first, m,
                                      data.theta[static_cast<std::size_t>(form_pair_of(spec, f).first)])
                        : fmt::format("past rotary_dim {}: normalized, not rotated", spec.rotary_dim);
            return fmt::format("{} (token {}, head {}, feature {}: {}) at element {}: got {:.9g}, want {:.17g}, "
                               "bound {:.3g}",
                               name, t, h, f, what, index, got, want, bound);
          });
        }
      }
    }
  }

  // Everything else in the buffer: not the call's to touch.
  for (std::int64_t index = 0; index < call.elements; ++index) {
    if (in_view[static_cast<std::size_t>(index)] || same_element_bits(storage, out, data.buffer, index)) continue;
    verdict.record(INFINITY, INFINITY, 0.0, [&] {
      return fmt::format("{} at element {}, not the call's to touch: got {}, was {}",
                         untouched_place(call, tokens, index), index, form_element_text(storage, out, index),
                         form_element_text(storage, data.buffer, index));
    });
  }
  return verdict.result();
}

std::string rope_form_call_text(const ManifestCase& c, std::span<const std::int64_t> positions) {
  constexpr std::size_t kShown = 8;
  const std::size_t shown = std::min(positions.size(), kShown);
  return fmt::format("{}; {}; tokens {}, positions [{}{}]", form_call_text(c.form), describe(c.rope_spec),
                     positions.size(), fmt::join(positions.first(shown), ", "), positions.size() > shown ? ", ..." : "");
}

}  // namespace ropecheck
