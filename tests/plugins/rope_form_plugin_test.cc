// Plugin ABI 6 (plugin.h, forms->apply_rope_form) through the host (plugins/host/plugin_rope_form.h):
// the example rope_form.so as a RopeFormImpl agrees with oracle_norm_rope on random calls in every
// storage, angle source, norm and view form, and leaves every element outside the views as it was;
// each of its bug builds departs from the oracle where its bug says (so the host hands back what
// the plugin did, not what it was given); a crash, a write past the buffer or into the cos/sin
// cache is a clear PluginFailure naming the call; malformed form capabilities and forms structs
// are refused (exit 2); an ABI 5 plugin has no form side; `list --plugin` shows the form
// capabilities.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "core/errors.h"
#include "core/rope_form.h"
#include "core/tolerance.h"
#include "impls/oracle/oracle_rope_form.h"
#include "plugins/host/plugin_host.h"
#include "plugins/host/plugin_rope_form.h"
#include "plugins/host/plugin_subjects.h"
#include "tests/support/test_process.h"

namespace ropecheck {
namespace plugin_form_test {

using test::built_plugin;

// One form call's operands, owned: the buffer (its fill before the call kept), the views, the
// angles and the norm.
struct FormCase {
  RopeSpec spec;
  StorageType storage = StorageType::fp32;
  std::vector<std::byte> buffer, before;
  std::int64_t tokens = 0;
  HeadView q, k;
  std::vector<std::int64_t> positions;
  AngleSource angles = AngleSource::spec;
  std::vector<float> cache;
  std::int64_t cache_rows = 0;
  bool has_norm = false;
  QkNorm norm;
  std::vector<float> q_weight, k_weight;

  RopeFormCall call() {
    RopeFormCall c;
    c.spec = spec;
    c.storage = storage;
    c.buffer = buffer;
    c.tokens = tokens;
    c.q = q;
    c.k = k;
    c.positions = positions;
    c.angles = angles;
    c.cos_sin_cache = cache;
    c.cache_rows = angles == AngleSource::cos_sin_cache ? cache_rows : 0;
    c.has_norm = has_norm;
    c.norm = norm;
    c.q_weight = q_weight;
    c.k_weight = k_weight;
    return c;
  }
  std::string describe() {
    return ropecheck::describe(call());
  }
};

enum class Views { flat, packed_qkv, mla_rope_part, q_only };

// A call of `views` on `storage`: values of `amplitude`, the gaps filled with random bytes (NaN
// patterns included: an untouched element keeps whatever it held), positions within the cache's
// rows, weights around 1 (plain) or 0 (one_plus).
FormCase make_case(std::mt19937_64& rng, StorageType storage, AngleSource angles, const NormWeight* weight,
                   Views views, float amplitude = 4.0f) {
  FormCase c;
  const int d = std::uniform_int_distribution<int>(0, 1)(rng) == 0 ? 16 : 32;
  c.spec.head_dim = d;
  c.spec.rotary_dim = std::bernoulli_distribution(0.3)(rng) ? d / 2 : d;
  c.spec.layout = std::bernoulli_distribution(0.5)(rng) ? Layout::interleaved : Layout::half_split;
  c.spec.angle_precision = AnglePrecision::fp64;
  c.storage = storage;
  c.tokens = std::uniform_int_distribution<std::int64_t>(1, 6)(rng);
  const std::int64_t qh = std::uniform_int_distribution<std::int64_t>(1, 4)(rng);
  const std::int64_t kh = std::uniform_int_distribution<std::int64_t>(1, 2)(rng);
  std::int64_t elements = 0;
  switch (views) {
    case Views::flat:  // q then k, each [tokens][heads][d]
      c.q = flat_view(qh, d);
      c.k = flat_view(kh, d, c.tokens * qh * d);
      elements = c.tokens * (qh + kh) * d;
      break;
    case Views::packed_qkv: {  // [tokens][q | k | v], q's heads with a gap of 8 between them
      const std::int64_t q_stride = d + 8, stride = qh * q_stride + 2 * kh * d;
      c.q = {qh, 0, stride, q_stride};
      c.k = {kh, qh * q_stride, stride, d};
      elements = c.tokens * stride;
      break;
    }
    case Views::mla_rope_part: {  // q [tokens][heads][nope 24 | rope d], k_pe apart after it
      const std::int64_t head = 24 + d;
      c.q = {qh, 24, qh * head, head};
      c.k = {1, c.tokens * qh * head, d, d};
      elements = c.tokens * (qh * head + d);
      break;
    }
    case Views::q_only:
      c.q = {qh, 5, qh * d + 3, d};
      elements = 5 + c.tokens * (qh * d + 3);
      break;
  }
  const int bytes = element_bytes(storage);
  c.buffer.resize(static_cast<std::size_t>(elements * bytes));
  std::uniform_int_distribution<int> byte(0, 255);
  for (auto& b : c.buffer) b = static_cast<std::byte>(byte(rng));
  std::uniform_real_distribution<float> value(-amplitude, amplitude);
  for (const HeadView* view : {&c.q, &c.k}) {
    for (std::int64_t t = 0; t < c.tokens; ++t) {
      for (std::int64_t h = 0; h < view->heads; ++h) {
        for (int f = 0; f < d; ++f) {
          store_element(storage, c.buffer, row_start(*view, t, h) + f, round_to_storage(value(rng), storage));
        }
      }
    }
  }
  c.before = c.buffer;
  c.angles = angles;
  c.cache_rows = 4096;
  std::uniform_int_distribution<std::int64_t> position(0, c.cache_rows - 1);
  for (std::int64_t t = 0; t < c.tokens; ++t) c.positions.push_back(position(rng));
  if (angles == AngleSource::cos_sin_cache) c.cache = build_cos_sin_cache(c.spec, c.cache_rows);
  if (weight != nullptr) {
    c.has_norm = true;
    c.norm.weight = *weight;
    c.norm.eps = 1e-6;
    const float centre = *weight == NormWeight::plain ? 1.0f : 0.0f;
    std::uniform_real_distribution<float> w(centre - 0.5f, centre + 0.5f);
    for (int f = 0; f < d; ++f) c.q_weight.push_back(w(rng));
    if (c.k.heads > 0) {
      for (int f = 0; f < d; ++f) c.k_weight.push_back(w(rng));
    }
  }
  return c;
}

// The view's rows of `buffer`, widened: [tokens][heads][head_dim], the oracle's input.
std::vector<float> gather(const FormCase& c, const std::vector<std::byte>& buffer, const HeadView& view) {
  std::vector<float> x;
  for (std::int64_t t = 0; t < c.tokens; ++t) {
    for (std::int64_t h = 0; h < view.heads; ++h) {
      for (int f = 0; f < c.spec.head_dim; ++f) x.push_back(load_element(c.storage, buffer, row_start(view, t, h) + f));
    }
  }
  return x;
}

// "" when `after` (the buffer after the call) holds the oracle's result in the views' rows, each
// feature within its bound, and every other element bit for bit as before; else the first
// departure. The bound of a feature: the normalized pair's norm |p| times the norm's relative
// error (qk_norm_relative_error at fp32) and 8 eps32 for the rotation (a cos/sin cache's fp32
// rounding included), then the storage's rounding of the result; a tail feature the same without
// the rotation's share, and without a norm it passes bit for bit.
std::string departure(const FormCase& c, const std::vector<std::byte>& after) {
  const int d = c.spec.head_dim;
  const double norm_error = c.has_norm ? qk_norm_relative_error(d, NormPrecision::fp32, c.storage) : 0.0;
  std::vector<bool> in_view(c.buffer.size() / static_cast<std::size_t>(element_bytes(c.storage)), false);
  for (const bool of_q : {true, false}) {
    const HeadView& view = of_q ? c.q : c.k;
    if (view.heads == 0) continue;
    const std::vector<float> x = gather(c, c.before, view);
    const NormRopeTruth truth = oracle_norm_rope(c.spec, c.has_norm ? &c.norm : nullptr,
                                                 of_q ? c.q_weight : c.k_weight, x, c.tokens, view.heads, c.positions);
    for (std::int64_t t = 0; t < c.tokens; ++t) {
      for (std::int64_t h = 0; h < view.heads; ++h) {
        const auto row = static_cast<std::size_t>((t * view.heads + h) * d);
        for (int f = 0; f < d; ++f) {
          const std::int64_t at = row_start(view, t, h) + f;
          in_view[static_cast<std::size_t>(at)] = true;
          const double got = load_element(c.storage, after, at);
          const double want = truth.rotated[row + static_cast<std::size_t>(f)];
          double bound = 0;
          if (f < c.spec.rotary_dim) {
            const int pairs = c.spec.rotary_dim / 2, i = c.spec.layout == Layout::interleaved ? f / 2 : f % pairs;
            const int a = c.spec.layout == Layout::interleaved ? 2 * i : i;
            const int b = c.spec.layout == Layout::interleaved ? 2 * i + 1 : i + pairs;
            const double pair = std::hypot(truth.normalized[row + static_cast<std::size_t>(a)],
                                           truth.normalized[row + static_cast<std::size_t>(b)]);
            bound = pair * (norm_error + 8 * kEps32);
          } else if (!c.has_norm) {
            if (got != want && !(std::isnan(got) && std::isnan(want))) {
              return fmt::format("{} token {} head {} tail feature {}: {} passed as {}", of_q ? "q" : "k", t, h, f,
                                 want, got);
            }
            continue;
          } else {
            bound = std::abs(want) * norm_error;
          }
          bound += storage_rounding_error(c.storage, std::abs(want) + bound);
          if (!(std::abs(got - want) <= bound)) {
            return fmt::format("{} token {} head {} feature {}: |{} - {}| > {}", of_q ? "q" : "k", t, h, f, got, want,
                               bound);
          }
        }
      }
    }
  }
  const auto bytes = static_cast<std::size_t>(element_bytes(c.storage));
  for (std::size_t e = 0; e < in_view.size(); ++e) {
    if (!in_view[e] && std::memcmp(after.data() + e * bytes, c.before.data() + e * bytes, bytes) != 0) {
      return fmt::format("element {} lies outside the views but changed", e);
    }
  }
  return "";
}

std::shared_ptr<const RopeFormImpl> load_form(const std::string& name) {
  PluginLibrary library = load_plugin_library(built_plugin(name));
  if (library.rope_form == nullptr) throw std::runtime_error(name + " has no form side");
  return std::move(library.rope_form);
}

// The buffer after `library`'s form call on `c`.
std::vector<std::byte> after_call(const RopeFormImpl& impl, FormCase c) {
  impl.apply(c.call());
  return c.buffer;
}

TEST(RopeFormPlugin, LoadsWithItsFormCapabilities) {
  const auto impl = load_form("rope_form");
  EXPECT_EQ(impl->id(), "plugin/rope_form");
  const RopeFormCapabilities caps = impl->capabilities();
  EXPECT_EQ(caps.storages, (std::vector{StorageType::fp32, StorageType::bf16, StorageType::fp16}));
  EXPECT_EQ(caps.angle_sources, (std::vector{AngleSource::spec, AngleSource::cos_sin_cache}));
  EXPECT_TRUE(caps.strided);
  EXPECT_TRUE(caps.k_optional);
  EXPECT_TRUE(caps.plain_calls);
  EXPECT_EQ(caps.norm_weights, (std::vector{NormWeight::plain, NormWeight::one_plus}));
  EXPECT_EQ(caps.norm_precision, NormPrecision::fp32);
  ASSERT_NE(plugin_info(*impl), nullptr);
  EXPECT_EQ(plugin_info(*impl)->abi_version, 6u);
  // The rotation stays within the RoPE side's declaration: fp64 angles, one axis, forward.
  EXPECT_EQ(impl->rope_capabilities().angle_precisions, std::vector{AnglePrecision::fp64});
  EXPECT_EQ(impl->rope_capabilities().axis_modes, std::vector{AxisMode::none});
}

TEST(RopeFormPlugin, TheExampleAgreesWithTheOracleInEveryStorageSourceNormAndView) {
  const auto impl = load_form("rope_form");
  std::mt19937_64 rng(52);
  const NormWeight plain = NormWeight::plain, one_plus = NormWeight::one_plus;
  int calls = 0;
  for (const StorageType storage : {StorageType::fp32, StorageType::bf16, StorageType::fp16}) {
    for (const AngleSource angles : {AngleSource::spec, AngleSource::cos_sin_cache}) {
      for (const NormWeight* weight : {static_cast<const NormWeight*>(nullptr), &plain, &one_plus}) {
        for (const Views views : {Views::flat, Views::packed_qkv, Views::mla_rope_part, Views::q_only}) {
          FormCase c = make_case(rng, storage, angles, weight, views);
          const std::string why = departure(c, after_call(*impl, c));
          ASSERT_EQ(why, "") << c.describe();
          ++calls;
        }
      }
    }
  }
  EXPECT_EQ(calls, 3 * 2 * 3 * 4);
}

// ---- the bug builds: each departs from the oracle where its bug says ---------------------------

// The call that reaches each bug class: a norm where the bug is the norm's, a cache where it is
// the cache's, views whose strides differ where it is the views'.
FormCase scenario(const std::string& bug_class) {
  std::mt19937_64 rng(7);
  const NormWeight plain = NormWeight::plain, one_plus = NormWeight::one_plus;
  if (bug_class == "k_with_q_head_stride") {  // q's heads 8 apart, k's adjacent: k's second head misread
    FormCase c;
    do {
      c = make_case(rng, StorageType::fp32, AngleSource::spec, nullptr, Views::packed_qkv);
    } while (c.k.heads < 2);
    return c;
  }
  if (bug_class == "strides_ignored") return make_case(rng, StorageType::fp32, AngleSource::spec, nullptr, Views::mla_rope_part);
  if (bug_class == "rotary_dim_ignored_in_norm") {
    FormCase c;
    do {
      c = make_case(rng, StorageType::fp32, AngleSource::cos_sin_cache, &plain, Views::flat);
    } while (c.spec.rotary_dim == c.spec.head_dim);
    return c;
  }
  if (bug_class == "cos_for_sin") return make_case(rng, StorageType::fp32, AngleSource::cos_sin_cache, nullptr, Views::flat);
  if (bug_class == "eps_dropped") {  // heads of 1e-4: mean(x^2) is 1e-8 beside eps 1e-6
    return make_case(rng, StorageType::fp32, AngleSource::spec, &plain, Views::flat, 1e-4f);
  }
  if (bug_class == "one_plus_flipped") return make_case(rng, StorageType::fp32, AngleSource::spec, &one_plus, Views::flat);
  if (bug_class == "norm_rounded_to_storage") return make_case(rng, StorageType::bf16, AngleSource::spec, &plain, Views::flat);
  throw std::runtime_error("no scenario for bug class " + bug_class + ": add one here");
}

std::vector<std::pair<std::string, std::string>> rope_form_bugs() {
  std::vector<std::pair<std::string, std::string>> bugs;
  std::stringstream list(ROPECHECK_ROPE_FORM_BUGS);
  for (std::string entry; std::getline(list, entry, ',');) {
    const auto colon = entry.find(':');
    bugs.emplace_back(entry.substr(0, colon), entry.substr(colon + 1));
  }
  return bugs;
}

TEST(RopeFormPlugin, EachBugBuildDepartsFromTheOracleWhereItsBugSays) {
  const auto bugs = rope_form_bugs();
  ASSERT_EQ(bugs.size(), 7u) << "issue 52's seven bug classes: " << ROPECHECK_ROPE_FORM_BUGS;
  const auto correct = load_form("rope_form");
  for (const auto& [library, bug_class] : bugs) {
    const FormCase c = scenario(bug_class);
    // The correct example passes the same call: the scenario can fail only by the bug.
    EXPECT_EQ(departure(c, after_call(*correct, c)), "") << bug_class;
    EXPECT_NE(departure(c, after_call(*load_form(library), c)), "") << library << " (" << bug_class << ")";
  }
}

// ---- misbehaviour, bad input, older ABIs, list -------------------------------------------------

std::string failure_of(const std::string& library) {
  std::mt19937_64 rng(3);
  const NormWeight plain = NormWeight::plain;
  FormCase c = make_case(rng, StorageType::bf16, AngleSource::cos_sin_cache, &plain, Views::packed_qkv);
  const auto impl = load_form(library);
  try {
    impl->apply(c.call());
  } catch (const PluginFailure& e) {
    return e.what();
  }
  return "";
}

TEST(RopeFormPlugin, ACrashAWritePastTheBufferOrIntoTheCacheIsAClearFailureNamingTheCall) {
  const std::string crash = failure_of("rope_form_crash");
  EXPECT_TRUE(test::contains(crash, "SIGSEGV")) << crash;
  EXPECT_TRUE(test::contains(crash, "apply_rope_form")) << crash;
  EXPECT_TRUE(test::contains(crash, "angles from the cos_sin_cache of 4096 rows")) << crash;  // the call
  EXPECT_TRUE(test::contains(crash, "qk_norm eps=1e-06 weight=plain")) << crash;
  const std::string overflow = failure_of("rope_form_overflow");
  EXPECT_TRUE(test::contains(overflow, "past the end of the buffer")) << overflow;
  const std::string cache = failure_of("rope_form_writes_cache");
  EXPECT_TRUE(test::contains(cache, "modified the cos/sin cache (read-only)")) << cache;
  EXPECT_EQ(failure_of("rope_form"), "");  // the same call, done right
}

TEST(RopeFormPlugin, TheWorkerIsRestartedAfterACrash) {
  const auto impl = load_form("rope_form_crash");
  std::mt19937_64 rng(4);
  for (int n = 0; n < 2; ++n) {
    FormCase c = make_case(rng, StorageType::fp32, AngleSource::spec, nullptr, Views::flat);
    EXPECT_THROW(impl->apply(c.call()), PluginFailure) << n;
  }
}

TEST(RopeFormPlugin, AnInvalidCallIsRefusedBeforeThePluginRuns) {
  const auto impl = load_form("rope_form");
  std::mt19937_64 rng(5);
  FormCase c = make_case(rng, StorageType::fp32, AngleSource::spec, nullptr, Views::flat);
  c.k.offset = c.q.offset;  // k over q
  try {
    impl->apply(c.call());
    FAIL() << "an overlapping call was run";
  } catch (const InvalidInput& e) {
    EXPECT_TRUE(test::contains(e.what(), "q and k overlap")) << e.what();
  }
  EXPECT_EQ(c.buffer, c.before);
}

TEST(RopeFormPlugin, MalformedFormsAreRefusedWithExitCode2) {
  const test::Exited caps = test::spawn({ROPECHECK_CLI_PATH, "list", "--plugin", built_plugin("rope_form_bad_capabilities")});
  EXPECT_EQ(caps.code, 2) << caps.out << caps.err;
  EXPECT_TRUE(test::contains(caps.err, "form capabilities: angle_sources mask 0x23")) << caps.err;
  const test::Exited no_apply = test::spawn({ROPECHECK_CLI_PATH, "list", "--plugin", built_plugin("rope_form_no_apply")});
  EXPECT_EQ(no_apply.code, 2) << no_apply.out << no_apply.err;
  EXPECT_TRUE(test::contains(no_apply.err, "(ABI 6) forms has a struct_size short of its functions or one of them NULL"))
      << no_apply.err;
}

TEST(RopeFormPlugin, AnAbi5PluginLoadsWithoutAFormSide) {
  const PluginLibrary library = load_plugin_library(built_plugin("fused_cache_rope"));
  EXPECT_NE(library.rope_cache, nullptr);
  EXPECT_EQ(library.rope_form, nullptr);
  EXPECT_FALSE(plugin_info(*library.rope)->rope_form.has_value());
  const LoadedPlugins loaded = load_plugins({built_plugin("fused_cache_rope"), built_plugin("rope_form")}, {});
  ASSERT_EQ(loaded.rope_form.size(), 1u);  // the ABI 6 plugin's only
  EXPECT_EQ(loaded.rope_form[0]->id(), "plugin/rope_form");
  EXPECT_EQ(loaded.rope.size(), 2u);
}

TEST(RopeFormPlugin, ListShowsTheFormCapabilities) {
  const test::Exited json = test::spawn({ROPECHECK_CLI_PATH, "list", "--json", "--plugin", built_plugin("rope_form")});
  ASSERT_EQ(json.code, 0) << json.err;
  const auto list = nlohmann::json::parse(json.out);
  const auto& info = list["plugins"][0]["plugin"];
  EXPECT_EQ(info["abi_version"], 6);
  const auto& forms = info["rope_form"];
  EXPECT_EQ(forms["storages"], nlohmann::json({"fp32", "bf16", "fp16"}));
  EXPECT_EQ(forms["angle_sources"], nlohmann::json({"spec", "cos_sin_cache"}));
  EXPECT_EQ(forms["strided"], true);
  EXPECT_EQ(forms["k_optional"], true);
  EXPECT_EQ(forms["plain_calls"], true);
  EXPECT_EQ(forms["norm_weights"], nlohmann::json({"plain", "one_plus"}));
  EXPECT_EQ(forms["norm_precision"], "fp32");
  // Among the form implementations too, beside the registry's.
  std::vector<std::string> ids;
  for (const auto& impl : list["rope_form_implementations"]) ids.push_back(impl["id"].get<std::string>());
  EXPECT_NE(std::find(ids.begin(), ids.end(), "plugin/rope_form"), ids.end()) << list["rope_form_implementations"];
  const test::Exited text = test::spawn({ROPECHECK_CLI_PATH, "list", "--plugin", built_plugin("rope_form")});
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_EQ(test::lines_containing(text.out, "    forms: storages fp32,bf16,fp16; angles from spec,cos_sin_cache; "
                                             "strided views; k optional; plain calls; qk_norm weights "
                                             "plain,one_plus in fp32")
                .size(),
            1u)
      << text.out;
}

}  // namespace plugin_form_test
}  // namespace ropecheck
