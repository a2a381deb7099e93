// The call-form cases and their judges (rope_form_cases.h).
#include "properties/harness/rope_form_cases.h"

#include <fmt/format.h>
#include <rapidcheck.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <ostream>
#include <random>

#include "core/frequency.h"
#include "core/tolerance.h"
#include "properties/harness/generators.h"
#include "properties/harness/guarded_apply.h"

namespace ropecheck {
namespace {

// The size budget of a case: 2^17 elements of q and k rows, as the RoPE properties' switching
// cases (rope_cases.h), so that a property's cases stay within a second on the reference.
constexpr std::int64_t kFormCaseElements = std::int64_t{1} << 17;

template <typename T>
bool offers(const std::vector<T>& values, T value) {
  return std::find(values.begin(), values.end(), value) != values.end();
}

// Elements of the buffer, each marked with what it belongs to, built region by region.
class PartsBuilder {
 public:
  std::int64_t append(std::int64_t count, BufferPart part) {
    const auto start = static_cast<std::int64_t>(parts_.size());
    parts_.insert(parts_.end(), static_cast<std::size_t>(count), part);
    return start;
  }
  void mark_rows(const HeadView& view, std::int64_t tokens, std::int64_t head_dim, BufferPart part) {
    for (std::int64_t t = 0; t < tokens; ++t) {
      for (std::int64_t h = 0; h < view.heads; ++h) {
        const std::int64_t start = row_start(view, t, h);
        std::fill_n(parts_.begin() + start, head_dim, part);
      }
    }
  }
  std::vector<BufferPart> take() { return std::move(parts_); }

 private:
  std::vector<BufferPart> parts_;
};

// The views and parts of a layout. `heads_in_k`: the kv heads the layout holds (k's place stays
// when k is absent).
void lay_out(RopeFormCase& c, std::int64_t heads_in_k, std::mt19937_64& rng) {
  const std::int64_t d = c.spec.head_dim, T = c.tokens;
  const bool has_k = c.k_heads > 0;
  PartsBuilder b;
  switch (c.layout) {
    case BufferLayout::separate: {
      b.append(static_cast<std::int64_t>(rng() % 4), BufferPart::gap);
      c.q = flat_view(c.q_heads, d, b.append(T * c.q_heads * d, BufferPart::q_row));
      b.append(static_cast<std::int64_t>(rng() % 6), BufferPart::gap);
      if (has_k) c.k = flat_view(c.k_heads, d, b.append(T * c.k_heads * d, BufferPart::k_row));
      break;
    }
    case BufferLayout::packed_qkv: {
      const std::int64_t pad = rng() % 2 == 0 ? 0 : 8;
      const std::int64_t stride = (c.q_heads + 2 * heads_in_k) * d + pad;
      const std::int64_t start = b.append(T * stride, BufferPart::v);
      c.q = {c.q_heads, start, stride, d};
      const HeadView k_slice{heads_in_k, start + c.q_heads * d, stride, d};
      if (has_k) c.k = k_slice;
      b.mark_rows(k_slice, T, d, BufferPart::k_place);
      if (pad > 0) b.mark_rows({1, start + stride - pad, stride, pad}, T, pad, BufferPart::gap);
      break;
    }
    case BufferLayout::padded_heads: {
      // Never the same for q and k (SGLang #20559 read k with q's head stride); k's may be 0.
      const std::int64_t q_pads[] = {2, 8, d}, k_pads[] = {0, 4, 2 * d};
      const std::int64_t q_pad = q_pads[rng() % 3], k_pad = k_pads[rng() % 3];
      const std::int64_t q_stride = c.q_heads * (d + q_pad);
      c.q = {c.q_heads, b.append(T * q_stride, BufferPart::gap), q_stride, d + q_pad};
      if (has_k) {
        const std::int64_t k_stride = c.k_heads * (d + k_pad);
        c.k = {c.k_heads, b.append(T * k_stride, BufferPart::gap), k_stride, d + k_pad};
      }
      break;
    }
    case BufferLayout::mla: {
      const std::int64_t nope = rng() % 2 == 0 ? 16 : 128, latent = rng() % 2 == 0 ? 32 : 512;
      const std::int64_t q_head = nope + d;
      const std::int64_t q_start = b.append(T * c.q_heads * q_head, BufferPart::nope);
      c.q = {c.q_heads, q_start + nope, c.q_heads * q_head, q_head};
      const std::int64_t k_start = b.append(T * (latent + d), BufferPart::latent);
      const HeadView k_pe{1, k_start + latent, latent + d, latent + d};
      if (has_k) c.k = k_pe;
      b.mark_rows(k_pe, T, d, BufferPart::k_place);
      break;
    }
  }
  // What lies past the last view: a reader with a wrong stride stays inside the buffer.
  b.append(static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(2 * d + 17)), BufferPart::gap);
  b.mark_rows(c.q, T, d, BufferPart::q_row);
  if (has_k) b.mark_rows(c.k, T, d, BufferPart::k_row);
  c.parts = b.take();
}

// A head's magnitude: activations, and heads small enough that eps decides their norm.
constexpr float kHeadScales[] = {1.0f, 1.0f, 0x1p-10f, 0x1p8f, 0x1p-20f};

void fill_values(RopeFormCase& c, std::mt19937_64& rng, bool zero_head) {
  const int bytes = element_bytes(c.storage);
  c.buffer.resize(static_cast<std::size_t>(c.elements() * bytes));
  std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
  for (std::int64_t e = 0; e < c.elements(); ++e) {
    if (c.parts[static_cast<std::size_t>(e)] == BufferPart::gap) {  // any bits, NaNs included: kept as they were
      for (int i = 0; i < bytes; ++i) c.buffer[static_cast<std::size_t>(e * bytes + i)] = static_cast<std::byte>(rng());
    } else {
      store_element(c.storage, c.buffer, e, unit(rng));
    }
  }
  // Each head of q and k at a magnitude of its own (powers of two: exact but in fp16's subnormals).
  const std::int64_t d = c.spec.head_dim;
  for (const HeadView* view : {&c.q, &c.k}) {
    for (std::int64_t t = 0; t < c.tokens; ++t) {
      for (std::int64_t h = 0; h < view->heads; ++h) {
        const float scale = kHeadScales[rng() % std::size(kHeadScales)];
        for (std::int64_t f = row_start(*view, t, h), end = f + d; f < end; ++f) {
          store_element(c.storage, c.buffer, f, load_element(c.storage, c.buffer, f) * scale);
        }
      }
    }
  }
  if (zero_head) {  // one head of q (and one of k) all zeros
    for (const HeadView* view : {&c.q, &c.k}) {
      if (view->heads == 0) continue;
      const std::int64_t start = row_start(*view, static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(c.tokens)),
                                           static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(view->heads)));
      for (std::int64_t f = 0; f < d; ++f) store_element(c.storage, c.buffer, start + f, 0.0f);
    }
  }
}

// Weights as the models' checkpoints hold them, values of the storage type: around 1 for a plain
// weight (Qwen3), around 0 for Gemma's 1 + w.
std::vector<float> draw_weight(NormWeight convention, StorageType storage, std::int64_t d, std::mt19937_64& rng) {
  std::uniform_real_distribution<float> plain(0.25f, 2.5f), offset(-0.75f, 1.5f);
  std::vector<float> w(static_cast<std::size_t>(d));
  for (auto& v : w) {
    v = convention == NormWeight::plain ? plain(rng) * (rng() % 8 == 0 ? -1.0f : 1.0f) : offset(rng);
    v = round_to_storage(v, storage);
  }
  return w;
}

void draw_positions(RopeFormCase& c, std::int64_t max_position, bool edges, std::mt19937_64& rng) {
  c.positions.resize(static_cast<std::size_t>(c.tokens));
  if (c.angles == AngleSource::cos_sin_cache) {
    c.cache_rows = *rc::gen::element<std::int64_t>(8, 64, 1000, 4096).as("cos/sin cache rows");
    for (auto& m : c.positions) m = static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(c.cache_rows));
    // The cache's last row (where a row read one past lands outside it), and its first.
    if (edges) c.positions.front() = 0;
    if (edges || rng() % 2 == 0) {
      const std::size_t at = edges && c.tokens > 1 ? 1 + rng() % (c.positions.size() - 1) : rng() % c.positions.size();
      c.positions[at] = c.cache_rows - 1;
    }
    c.cos_sin_cache = build_cos_sin_cache(c.spec, c.cache_rows);
    return;
  }
  const int kind = *rc::gen::inRange(0, 3).as("positions: 0 decode run, 1 anywhere to 2^20, 2 around 0");
  const std::int64_t limit = std::min(max_position, kMaxGeneratedPosition);
  const std::int64_t base = static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(limit));
  for (std::int64_t t = 0; t < c.tokens; ++t) {
    std::int64_t m = kind == 0 ? base + t
                   : kind == 1 ? static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(limit))
                               : static_cast<std::int64_t>(rng() % 8193) - 4096;
    c.positions[static_cast<std::size_t>(t)] = std::clamp(m, -limit, limit);
  }
}

// The rotary pair feature f belongs to.
int form_pair_of(const RopeSpec& spec, int f) {
  return spec.layout == Layout::interleaved ? f / 2 : f % (spec.rotary_dim / 2);
}

}  // namespace

void showValue(BufferLayout layout, std::ostream& os) { os << to_string(layout); }
void showValue(AngleSource source, std::ostream& os) { os << to_string(source); }
void showValue(NormWeight weight, std::ostream& os) { os << to_string(weight); }
void showValue(StorageType storage, std::ostream& os) { os << to_string(storage); }

std::string_view to_string(BufferLayout layout) {
  switch (layout) {
    case BufferLayout::separate: return "separate";
    case BufferLayout::packed_qkv: return "packed_qkv";
    case BufferLayout::padded_heads: return "padded_heads";
    case BufferLayout::mla: return "mla";
  }
  return "?";
}

std::string_view to_string(BufferPart part) {
  switch (part) {
    case BufferPart::q_row: return "a q row";
    case BufferPart::k_row: return "a k row";
    case BufferPart::v: return "v";
    case BufferPart::nope: return "a nope part of q";
    case BufferPart::latent: return "the latent kv_c";
    case BufferPart::gap: return "a gap between the views";
    case BufferPart::k_place: return "k's place (k is absent from the call)";
  }
  return "?";
}

RopeFormCall RopeFormCase::call(std::span<std::byte> on) const {
  RopeFormCall call;
  call.spec = spec;
  call.storage = storage;
  call.buffer = on;
  call.tokens = tokens;
  call.q = q;
  call.k = k;
  call.positions = positions;
  call.angles = angles;
  call.cos_sin_cache = cos_sin_cache;
  call.cache_rows = cache_rows;
  call.has_norm = has_norm;
  call.norm = norm;
  call.q_weight = q_weight;
  call.k_weight = k_weight;
  call.threads = threads;
  return call;
}

RopeFormCase pick_rope_form_case(const RopeFormImpl& impl, FormCaseAim aim) {
  const RopeFormCapabilities caps = impl.capabilities();
  RopeCapabilities rope_caps = impl.rope_capabilities();
  const bool needs_norm = aim == FormCaseAim::norm || aim == FormCaseAim::zero_head || aim == FormCaseAim::partial;
  if (needs_norm && !caps.normalizes()) RC_DISCARD("no QK-norm");
  if (!caps.normalizes() && !caps.plain_calls) RC_DISCARD("neither plain calls nor a QK-norm");
  if (aim == FormCaseAim::partial && !rope_caps.partial_rotary) RC_DISCARD("no partial rotary");
  if (aim == FormCaseAim::cache_edge && !offers(caps.angle_sources, AngleSource::cos_sin_cache)) {
    RC_DISCARD("no cos/sin cache");
  }
  RopeFormCase c;
  c.storage = *rc::gen::elementOf(caps.storages).as("storage");
  c.angles = aim == FormCaseAim::cache_edge ? AngleSource::cos_sin_cache
                                            : *rc::gen::elementOf(caps.angle_sources).as("angles from");
  c.has_norm = needs_norm || (caps.normalizes() && (!caps.plain_calls || *rc::gen::inRange(0, 4).as("qk_norm: 0 none") != 0));
  rope_caps.axis_modes = {AxisMode::none};
  rope_caps.passes = {Pass::forward};
  rope_caps.storage = c.storage;
  c.spec = *rope_spec(rope_caps, aim == FormCaseAim::partial ? Rotary::partial : Rotary::any).as("spec");

  // The shape: small, or one case in four at the sizes where kernels switch paths.
  const bool big = *rc::gen::inRange(0, 4).as("at switching sizes: 0") == 0;
  const bool k_absent = caps.k_optional && *rc::gen::inRange(0, 5).as("k absent: 0") == 0;
  c.layout = caps.strided ? *rc::gen::element(BufferLayout::separate, BufferLayout::packed_qkv, BufferLayout::padded_heads,
                                              BufferLayout::mla).as("layout")
                          : BufferLayout::separate;
  const bool mla = c.layout == BufferLayout::mla;
  // Padded heads: at least two of k, so that a k read with q's head stride shows.
  const std::int64_t kv_heads = mla ? 1
                                : *rc::gen::inRange<std::int64_t>(c.layout == BufferLayout::padded_heads ? 2 : 1, big ? 9 : 4)
                                       .as("kv heads");
  c.k_heads = k_absent ? 0 : kv_heads;
  c.q_heads = kv_heads * *rc::gen::inRange<std::int64_t>(1, big ? 9 : 4).as("q heads per kv head");
  // The big ones at 2^k - 1, 2^k, 2^k + 1 whatever RapidCheck's size: the paths they reach are
  // what the small ones cannot.
  c.tokens = big ? *rc::gen::element<std::int64_t>(15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 129, 255, 256, 257)
                        .as("tokens")
                 : *rc::gen::inRange<std::int64_t>(1, 9).as("tokens");
  const std::int64_t per_token = (c.q_heads + c.k_heads) * c.spec.head_dim;
  c.tokens = std::max<std::int64_t>(1, std::min(c.tokens, kFormCaseElements / per_token));

  std::mt19937_64 rng(*rc::gen::arbitrary<std::uint64_t>().as("seed of the layout's gaps and the values"));
  lay_out(c, kv_heads, rng);
  fill_values(c, rng, aim == FormCaseAim::zero_head || (c.has_norm && rng() % 16 == 0));
  draw_positions(c, rope_caps.max_position, aim == FormCaseAim::cache_edge, rng);
  if (c.has_norm) {
    c.norm.eps = *rc::gen::elementOf(std::vector<double>(std::begin(kModelNormEps), std::end(kModelNormEps))).as("eps");
    c.norm.weight = *rc::gen::elementOf(caps.norm_weights).as("norm weight");
    c.norm.precision = caps.norm_precision;
    c.q_weight = draw_weight(c.norm.weight, c.storage, c.spec.head_dim, rng);
    if (c.k_heads > 0) c.k_weight = draw_weight(c.norm.weight, c.storage, c.spec.head_dim, rng);
  }
  c.threads = pick_call_threads().count;
  return c;
}

std::vector<std::byte> run_rope_form_case(const RopeFormImpl& impl, const RopeFormCase& c) {
  std::vector<std::byte> out = c.buffer;
  impl.apply(c.call(out));
  return out;
}

std::vector<float> gather_rows(const RopeFormCase& c, std::span<const std::byte> buffer, const HeadView& view) {
  const std::int64_t d = c.spec.head_dim;
  std::vector<float> rows;
  rows.reserve(static_cast<std::size_t>(c.tokens * view.heads * d));
  for (std::int64_t t = 0; t < c.tokens; ++t) {
    for (std::int64_t h = 0; h < view.heads; ++h) {
      const std::int64_t start = row_start(view, t, h);
      for (std::int64_t f = 0; f < d; ++f) rows.push_back(load_element(c.storage, buffer, start + f));
    }
  }
  return rows;
}

NormRopeTruth truth_of(const RopeFormCase& c, bool of_q) {
  const HeadView& view = of_q ? c.q : c.k;
  if (view.heads == 0) return {};
  const std::vector<float> x = gather_rows(c, c.buffer, view);
  return oracle_norm_rope(c.spec, c.has_norm ? &c.norm : nullptr, of_q ? c.q_weight : c.k_weight, x, c.tokens,
                          view.heads, c.positions);
}

double norm_error(const RopeFormCase& c) {
  return c.has_norm ? qk_norm_relative_error(c.spec.head_dim, c.norm.precision, c.storage) : 0.0;
}

RowJudgement judge_rows(const RopeFormCase& c, bool of_q) {
  const RopeSpec& spec = c.spec;
  const HeadView& view = of_q ? c.q : c.k;
  // A cache's rows are the exact cos/sin rounded once: fp64 angles' model (tolerance.h).
  RopeSpec modelled = spec;
  if (c.angles == AngleSource::cos_sin_cache) modelled.angle_precision = AnglePrecision::fp64;
  const ErrorModel model = error_model(modelled, c.storage);
  const double a = model.attention_factor, delta = norm_error(c);
  const std::vector<double> theta = inverse_frequencies(spec);
  const int pairs = spec.rotary_dim / 2, d = spec.head_dim;
  const NormRopeTruth truth = truth_of(c, of_q);
  RowJudgement judged{truth.rotated, std::vector<double>(truth.rotated.size(), 0.0)};
  for (std::int64_t t = 0; t < c.tokens; ++t) {
    const std::int64_t m = c.positions[static_cast<std::size_t>(t)];
    for (std::int64_t h = 0; h < view.heads; ++h) {
      const auto row = static_cast<std::size_t>((t * view.heads + h) * d);
      for (int i = 0; i < pairs; ++i) {
        const auto [fa, fb] = pair_features(spec, i);
        const double unit = unit_pair_norm(c.storage, a, pair_magnitude(truth.normalized[row + fa], truth.normalized[row + fb]));
        const double units = a * delta / kEps32 + rotation_bound_units(model, m, theta[static_cast<std::size_t>(i)], i) * (1 + delta);
        judged.bound[row + fa] = judged.bound[row + fb] = units * kEps32 * unit;
      }
      if (!c.has_norm) continue;  // the tail passes through: exact
      for (int f = spec.rotary_dim; f < d; ++f) {
        const std::size_t at = row + static_cast<std::size_t>(f);
        const double value = std::abs(truth.rotated[at]);
        const double unit = value == 0 ? 0.0 : std::max(value, storage_min_normal(c.storage));
        judged.bound[at] = (delta / kEps32 + storage_rounding_units(c.storage) * (1 + delta)) * kEps32 * unit;
      }
    }
  }
  return judged;
}

WorstElement worst_form_error(const RopeFormCase& c, std::span<const std::byte> out, bool only_tail) {
  WorstElement worst;
  const RopeSpec& spec = c.spec;
  const int d = spec.head_dim;
  for (const bool of_q : {true, false}) {
    const HeadView& view = of_q ? c.q : c.k;
    if (view.heads == 0) continue;
    const RowJudgement judged = judge_rows(c, of_q);
    const std::vector<float> x = gather_rows(c, c.buffer, view), y = gather_rows(c, out, view);
    for (std::size_t at = 0; at < y.size(); ++at) {
      const auto f = static_cast<int>(at % static_cast<std::size_t>(d));
      const bool tail = f >= spec.rotary_dim;
      if (only_tail && !tail) continue;
      const double error = std::abs(y[at] - judged.truth[at]), bound = judged.bound[at];
      double ratio;
      if (tail && !c.has_norm) {  // passed through: the same bits
        ratio = std::memcmp(&y[at], &x[at], sizeof(float)) == 0 ? 0 : std::numeric_limits<double>::infinity();
      } else if (bound == 0) {
        ratio = error == 0 ? 0 : std::numeric_limits<double>::infinity();
      } else {
        ratio = error / bound;
      }
      if (std::isnan(ratio)) ratio = std::numeric_limits<double>::infinity();
      if (ratio > worst.ratio || worst.where.empty()) {
        const auto row = static_cast<std::int64_t>(at) / d;
        const std::int64_t t = row / view.heads, h = row % view.heads;
        std::string what = tail ? (c.has_norm ? "tail, normalized" : "tail, passed through")
                                : fmt::format("pair {}", form_pair_of(spec, f));
        worst = {ratio, bound == 0 ? error : error / bound, 1.0,
                 fmt::format("{} token {} head {} feature {} ({}, position {}): got {}, expected {:.9g}, bound {:.3g}",
                             of_q ? "q" : "k", t, h, f, what, c.positions[static_cast<std::size_t>(t)], y[at],
                             judged.truth[at], bound)};
      }
    }
  }
  return worst;
}

WorstElement first_outside_change(const RopeFormCase& c, std::span<const std::byte> out) {
  const int bytes = element_bytes(c.storage);
  for (std::int64_t e = 0; e < c.elements(); ++e) {
    const BufferPart part = c.parts[static_cast<std::size_t>(e)];
    if (part == BufferPart::q_row || part == BufferPart::k_row) continue;
    const auto at = static_cast<std::size_t>(e * bytes);
    if (std::memcmp(out.data() + at, c.buffer.data() + at, static_cast<std::size_t>(bytes)) != 0) {
      return {1, 1, 0,
              fmt::format("element {} of the buffer ({}) changed from {} to {}; {}", e, to_string(part),
                          load_element(c.storage, c.buffer, e), load_element(c.storage, out, e), describe_case(c))};
    }
  }
  return {};
}

std::string describe_case(const RopeFormCase& c) {
  std::vector<std::byte> none;
  return fmt::format("{} layout: {}", to_string(c.layout), describe(c.call(none)));
}

}  // namespace ropecheck
