// The Python call forms (docs/porting.md, "Python: the call forms"): a callable that declares
// "rope_form" loads as a RopeFormImpl, and its calls are judged here against oracle_norm_rope,
// call by call, without the properties: q and k as strided views into one buffer (flat, a packed
// qkv, MLA's q_pe parts, views with gaps, k absent), angles from the spec or the cos/sin cache,
// QK-norm either way. The torch examples (vLLM's forward_native, HF's Qwen3 and Gemma 3) and the
// numpy one equal the truth within the derived bounds and leave every other element of the buffer
// as it was; each bug of tests/plugins/python/rope_form_bugs.py differs where its bug says and
// nowhere else; a raise, a wrong result, a write into a read-only input or past the buffer and a
// malformed declaration are failures or refusals that say what.   ctest -R PythonRopeForm
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "core/errors.h"
#include "core/frequency.h"
#include "core/rope_form.h"
#include "core/tolerance.h"
#include "impls/oracle/oracle_rope_form.h"
#include "plugins/host/plugin_subjects.h"
#include "plugins/host/python_host.h"
#include "tests/support/form_call.h"
#include "tests/support/python_cli.h"

namespace ropecheck {
namespace python_form_test {

using test::contains;
using test::form_case;
using test::FormCase;
using test::FormShape;
using test::kAllViews;
using test::py_example;
using test::run_form;
using test::Views;
using test::py_fixture;
using test::py_options;

// How far a call's buffer is from the truth: the worst feature of q's and k's rows against its
// bound (a ratio, <= 1 within), and the elements outside the rows whose bytes changed.
struct FormComparison {
  double ratio = 0;
  std::string where;
  std::int64_t untouched_changed = 0;
  std::string first_changed;
};

// The bound of a feature (core/tolerance.h): a rotated pair's rounding (rotation_bound_units of
// the normalized pair, (1 + delta) times as long) plus the norm's delta of the pair as the
// rotation (times the attention factor) carries it; a feature past rotary_dim, delta of itself
// and its rounding into the storage. delta: qk_norm_relative_error, 0 without a norm.
FormComparison compare_form(const FormCase& c, const std::vector<std::byte>& after) {
  FormComparison result;
  const RopeSpec& spec = c.spec;
  const StorageType storage = c.shape.storage;
  const std::int64_t d = spec.head_dim, elements = static_cast<std::int64_t>(c.buffer.size()) / element_bytes(storage);
  const ErrorModel model = error_model(spec, storage);
  const std::vector<double> theta = inverse_frequencies(spec);
  const double a = attention_factor(spec);
  const double delta = c.shape.norm ? qk_norm_relative_error(spec.head_dim, c.norm.precision, storage) : 0.0;
  std::vector<bool> in_rows(static_cast<std::size_t>(elements), false);
  for (const bool of_q : {true, false}) {
    const HeadView& view = of_q ? c.q : c.k;
    if (view.heads == 0) continue;
    std::vector<float> x;
    for (std::int64_t t = 0; t < c.tokens; ++t) {
      for (std::int64_t h = 0; h < view.heads; ++h) {
        for (std::int64_t f = 0; f < d; ++f) x.push_back(load_element(storage, c.buffer, row_start(view, t, h) + f));
      }
    }
    const NormRopeTruth truth = oracle_norm_rope(spec, c.shape.norm ? &c.norm : nullptr,
                                                 of_q ? c.q_weight : c.k_weight, x, c.tokens, view.heads, c.positions);
    const int pairs = spec.rotary_dim / 2;
    for (std::int64_t t = 0; t < c.tokens; ++t) {
      const std::int64_t m = c.positions[static_cast<std::size_t>(t)];
      for (std::int64_t h = 0; h < view.heads; ++h) {
        const std::size_t row = static_cast<std::size_t>((t * view.heads + h) * d);
        std::vector<double> bound(static_cast<std::size_t>(d));
        for (int i = 0; i < pairs; ++i) {
          const auto fa = static_cast<std::size_t>(spec.layout == Layout::interleaved ? 2 * i : i);
          const auto fb = static_cast<std::size_t>(spec.layout == Layout::interleaved ? 2 * i + 1 : i + pairs);
          const double p = std::hypot(truth.normalized[row + fa], truth.normalized[row + fb]);
          bound[fa] = bound[fb] = rotation_bound_units(model, m, theta[static_cast<std::size_t>(i)], i) * kEps32 *
                                      unit_pair_norm(storage, a, p) * (1 + delta) +
                                  delta * a * p;
        }
        for (std::int64_t f = spec.rotary_dim; f < d; ++f) {
          const double y = std::abs(truth.normalized[row + static_cast<std::size_t>(f)]);
          bound[static_cast<std::size_t>(f)] = delta * y + storage_rounding_error(storage, y * (1 + delta));
        }
        for (std::int64_t f = 0; f < d; ++f) {
          const std::int64_t e = row_start(view, t, h) + f;
          in_rows[static_cast<std::size_t>(e)] = true;
          const double got = load_element(storage, after, e), want = truth.rotated[row + static_cast<std::size_t>(f)];
          const double diff = std::abs(got - want), b = bound[static_cast<std::size_t>(f)];
          double ratio = b > 0 ? diff / b : (diff == 0 ? 0.0 : INFINITY);
          if (std::isnan(ratio)) ratio = INFINITY;
          if (ratio > result.ratio) {
            result.ratio = ratio;
            result.where = fmt::format("{} token {} head {} feature {} (position {}): got {:.9g}, want {:.17g}, bound {:.3g}",
                                       of_q ? "q" : "k", t, h, f, m, got, want, b);
          }
        }
      }
    }
  }
  const auto bytes = static_cast<std::size_t>(element_bytes(storage));
  for (std::int64_t e = 0; e < elements; ++e) {
    if (in_rows[static_cast<std::size_t>(e)]) continue;
    if (std::memcmp(&c.buffer[static_cast<std::size_t>(e) * bytes], &after[static_cast<std::size_t>(e) * bytes], bytes) != 0) {
      if (result.untouched_changed++ == 0) result.first_changed = fmt::format("element {}", e);
    }
  }
  return result;
}

void expect_form_truth(const FormComparison& r, const std::string& what) {
  EXPECT_LE(r.ratio, 1.0) << what << "\n " << r.where;
  EXPECT_EQ(r.untouched_changed, 0) << what << "\n first: " << r.first_changed;
}

bool form_differs(const FormComparison& r) { return r.ratio > 1.0 || r.untouched_changed > 0; }

std::unique_ptr<RopeFormImpl> form_load(const std::string& target, double timeout = 0) {
  return load_python_rope_form(target, py_options(timeout));
}

// ---- the examples: the truth in every view, storage, source and layout ------------------------

// Seen failing: with the example's `o2 = x2 * cos + x1 * sin` made `- x1 * sin`, every rotated
// feature was ~1e6 of its bound; with Qwen3's `.to(input_dtype)` before the weight removed (the
// norm then fp32 where storage was declared), nothing failed (fp32 is within the storage bound),
// which is why the precision bug below runs in bf16 the other way round.
TEST(PythonRopeForm, VllmForwardNativeEqualsTheOracleInEveryViewStorageSourceAndLayout) {
  REQUIRE_TORCH();
  const auto impl = form_load(py_example("torch_rope_form.py:vllm_forward_native"));
  EXPECT_EQ(impl->id(), "python/torch_rope_form.vllm_forward_native");
  unsigned seed = 1;
  double worst = 0;
  for (const Views views : kAllViews) {
    for (const StorageType storage : {StorageType::fp32, StorageType::bf16, StorageType::fp16}) {
      for (const AngleSource angles : {AngleSource::cos_sin_cache, AngleSource::spec}) {
        for (const Layout layout : {Layout::interleaved, Layout::half_split}) {
          FormShape shape{views, storage, angles, layout, seed % 2 == 0};
          const FormCase c = form_case(shape, seed++);
          const FormComparison r = compare_form(c, run_form(*impl, c));
          expect_form_truth(r, c.what());
          worst = std::max(worst, r.ratio);
        }
      }
    }
  }
  std::cout << fmt::format("vllm_forward_native: worst feature {:.6f} of its bound\n", worst);
}

TEST(PythonRopeForm, HfQkNormsEqualTheOracleThroughStridedViews) {
  REQUIRE_TORCH();
  unsigned seed = 100;
  for (const auto& [function, weight, precision] :
       {std::tuple{"hf_qwen3_qk_norm", NormWeight::plain, NormPrecision::storage},
        std::tuple{"hf_gemma3_qk_norm", NormWeight::one_plus, NormPrecision::fp32}}) {
    const auto impl = form_load(py_example(std::string("torch_rope_form.py:") + function));
    double worst = 0;
    for (const Views views : kAllViews) {
      for (const StorageType storage : {StorageType::fp32, StorageType::bf16}) {
        for (const bool partial : {false, true}) {
          FormShape shape{views, storage, AngleSource::spec, Layout::half_split, partial, true, weight, precision};
          const FormCase c = form_case(shape, seed++);
          const FormComparison r = compare_form(c, run_form(*impl, c));
          expect_form_truth(r, std::string(function) + ": " + c.what());
          worst = std::max(worst, r.ratio);
        }
      }
    }
    // Without a norm: apply_rotary_pos_emb alone.
    const FormCase plain = form_case({Views::packed_qkv, StorageType::fp32, AngleSource::spec}, seed++);
    expect_form_truth(compare_form(plain, run_form(*impl, plain)), std::string(function) + ": " + plain.what());
    std::cout << fmt::format("{}: worst feature {:.6f} of its bound\n", function, worst);
  }
}

TEST(PythonRopeForm, NumpyExampleEqualsTheOracleThroughAsStridedViews) {
  REQUIRE_NUMPY_PYTHON();
  const auto impl = form_load(py_example("numpy_rope_form.py:apply"));
  unsigned seed = 200;
  for (const Views views : kAllViews) {
    for (const StorageType storage : {StorageType::fp32, StorageType::bf16, StorageType::fp16}) {
      for (const AngleSource angles : {AngleSource::cos_sin_cache, AngleSource::spec}) {
        FormShape shape{views, storage, angles, seed % 2 == 0 ? Layout::interleaved : Layout::half_split, seed % 3 == 0,
                        seed % 2 == 1, seed % 4 < 2 ? NormWeight::plain : NormWeight::one_plus};
        shape.angle_precision = AnglePrecision::fp64;  // what it declares
        const FormCase c = form_case(shape, seed++);
        expect_form_truth(compare_form(c, run_form(*impl, c)), c.what());
      }
    }
  }
  // A rotation it did not declare (fp32 angles) is refused as every form's is; a norm precision
  // it did not declare too.
  EXPECT_THROW(run_form(*impl, form_case({}, 7)), InvalidInput);
  FormShape storage_norm{.norm = true, .precision = NormPrecision::storage, .angle_precision = AnglePrecision::fp64};
  EXPECT_THROW(run_form(*impl, form_case(storage_norm, 8)), InvalidInput);
}

// ---- each bug differs where its bug says, and nowhere else --------------------------------------

void expect_bug(const RopeFormImpl& impl, const FormShape& shows, const FormShape& hides, unsigned seed) {
  const FormCase bad = form_case(shows, seed), fine = form_case(hides, seed + 1);
  const FormComparison r = compare_form(bad, run_form(impl, bad));
  EXPECT_TRUE(form_differs(r)) << impl.id() << ": the bug did not show: " << bad.what();
  expect_form_truth(compare_form(fine, run_form(impl, fine)), std::string(impl.id()) + " (where it hides): " + fine.what());
}

TEST(PythonRopeFormBugs, KReadWithQsHeadStrideShowsWhereTheStridesDiffer) {
  REQUIRE_TORCH();
  const auto impl = form_load(py_fixture("rope_form_bugs.py:k_read_with_q_head_stride"));
  expect_bug(*impl, {Views::gapped}, {Views::packed_qkv}, 300);
  expect_bug(*impl, {Views::gapped, StorageType::bf16}, {Views::flat, StorageType::bf16}, 302);
}

TEST(PythonRopeFormBugs, AContiguousCopyLosesTheResultOfStridedViewsOnly) {
  REQUIRE_TORCH();
  const auto impl = form_load(py_fixture("rope_form_bugs.py:contiguous_copy_rotated"));
  for (const Views strided : {Views::packed_qkv, Views::mla, Views::gapped}) {
    expect_bug(*impl, {strided}, {Views::flat}, 310 + static_cast<unsigned>(strided) * 2);
  }
}

TEST(PythonRopeFormBugs, RotaryDimIgnoredWithTheNormShowsWithPartialRotaryOnly) {
  REQUIRE_TORCH();
  const auto impl = form_load(py_fixture("rope_form_bugs.py:rotary_dim_ignored_with_norm"));
  FormShape partial{Views::packed_qkv, StorageType::fp32, AngleSource::spec, Layout::half_split, true, true,
                    NormWeight::one_plus};
  FormShape whole = partial;
  whole.partial = false;
  expect_bug(*impl, partial, whole, 320);
}

TEST(PythonRopeFormBugs, CosAndSinAtTheSameIndexIsWrongInEveryLayout) {
  REQUIRE_TORCH();
  const auto impl = form_load(py_fixture("rope_form_bugs.py:cos_and_sin_at_the_same_index"));
  for (const Layout layout : {Layout::interleaved, Layout::half_split}) {
    const FormCase c = form_case({Views::flat, StorageType::fp32, AngleSource::cos_sin_cache, layout}, 330);
    EXPECT_TRUE(form_differs(compare_form(c, run_form(*impl, c)))) << c.what();
  }
}

TEST(PythonRopeFormBugs, EpsDroppedShowsOnQuietHeadsOnly) {
  REQUIRE_TORCH();
  const auto impl = form_load(py_fixture("rope_form_bugs.py:eps_dropped"));
  FormShape quiet{Views::flat, StorageType::fp32, AngleSource::spec, Layout::half_split, false, true,
                  NormWeight::plain, NormPrecision::storage};
  quiet.amplitude = 1e-3f;  // mean(x^2) ~ 3e-7, eps 1e-6
  FormShape loud = quiet;
  loud.amplitude = 4.0f;  // mean(x^2) ~ 5: eps moves r by ~1e-7, within the norm's bound (~2e-6)
  expect_bug(*impl, quiet, loud, 340);
}

TEST(PythonRopeFormBugs, OnePlusWeightAppliedAsPlain) {
  REQUIRE_TORCH();
  const auto impl = form_load(py_fixture("rope_form_bugs.py:one_plus_weight_as_plain"));
  const FormCase c = form_case({Views::mla, StorageType::fp32, AngleSource::spec, Layout::half_split, false, true,
                                NormWeight::one_plus},
                               350);
  EXPECT_TRUE(form_differs(compare_form(c, run_form(*impl, c)))) << c.what();
}

TEST(PythonRopeFormBugs, NormRoundedToStorageWhereFp32IsDeclaredShowsInBf16Only) {
  REQUIRE_TORCH();
  const auto impl = form_load(py_fixture("rope_form_bugs.py:norm_in_storage_declared_fp32"));
  FormShape bf16{Views::packed_qkv, StorageType::bf16, AngleSource::spec, Layout::half_split, true, true,
                 NormWeight::one_plus};
  FormShape fp32 = bf16;
  fp32.storage = StorageType::fp32;
  expect_bug(*impl, bf16, fp32, 360);
}

// ---- failures say what, and the next call goes on ---------------------------------------------

std::string form_failure(const RopeFormImpl& impl, const FormCase& c) {
  try {
    run_form(impl, c);
  } catch (const PluginFailure& e) {
    return e.what();
  }
  return "(no failure)";
}

TEST(PythonRopeFormFailures, AnExceptionNamesItsTypeItsLineAndTheCall) {
  REQUIRE_TORCH();
  const auto impl = form_load(py_fixture("rope_form_bugs.py:raises_on_bf16"));
  const FormCase bf16 = form_case({Views::mla, StorageType::bf16}, 400);
  const std::string why = form_failure(*impl, bf16);
  EXPECT_TRUE(contains(why, "Python function raised NotImplementedError: no bf16 in this port")) << why;
  EXPECT_TRUE(contains(why, "rope_form_bugs.py")) << why;
  EXPECT_TRUE(contains(why, "bf16 storage, angles from the cos_sin_cache of 4096 rows")) << why;
  EXPECT_TRUE(contains(why, fmt::format("positions [{}", bf16.positions[0]))) << why;
  const FormCase fp32 = form_case({Views::mla}, 401);
  expect_form_truth(compare_form(fp32, run_form(*impl, fp32)), fp32.what());
}

TEST(PythonRopeFormFailures, AWrongResultSaysWhatCameBack) {
  REQUIRE_TORCH();
  const FormCase c = form_case({Views::packed_qkv}, 410);
  const std::string why = form_failure(*form_load(py_fixture("rope_form_bugs.py:returns_a_wrong_shape")), c);
  EXPECT_TRUE(contains(why, fmt::format("Python function returned q of shape ({}, 1, {}) and dtype float32; expected "
                                        "shape ({}, {}, {})",
                                        c.tokens, c.spec.head_dim, c.tokens, c.q.heads, c.spec.head_dim)))
      << why;
}

TEST(PythonRopeFormFailures, WritesIntoTheCacheOrPastTheBufferAreCaught) {
  REQUIRE_TORCH();
  const FormCase c = form_case({Views::gapped, StorageType::bf16}, 420);
  std::string why = form_failure(*form_load(py_fixture("rope_form_bugs.py:writes_the_cache")), c);
  EXPECT_TRUE(contains(why, "Python function modified cos_sin_cache (read-only) (call form:")) << why;
  why = form_failure(*form_load(py_fixture("rope_form_bugs.py:writes_past_the_buffer")), c);
  EXPECT_TRUE(contains(why, "Python function wrote 2 bytes past the end of the buffer")) << why;
}

TEST(PythonRopeFormFailures, CallsOutsideTheDeclarationAreRefused) {
  REQUIRE_TORCH();
  const auto qwen3 = form_load(py_example("torch_rope_form.py:hf_qwen3_qk_norm"));
  const RopeFormCapabilities caps = qwen3->capabilities();
  EXPECT_EQ(caps.norm_weights, std::vector{NormWeight::plain});
  EXPECT_EQ(caps.norm_precision, NormPrecision::storage);
  // HF's rotate_half: no interleaved pairs; its own angles: no cache; no fp16 declared.
  FormShape norm{Views::flat, StorageType::fp32, AngleSource::spec, Layout::half_split, false, true,
                 NormWeight::plain, NormPrecision::storage};
  for (const auto& change : {+[](FormShape& s) { s.layout = Layout::interleaved; },
                             +[](FormShape& s) { s.angles = AngleSource::cos_sin_cache; },
                             +[](FormShape& s) { s.storage = StorageType::fp16; },
                             +[](FormShape& s) { s.weight = NormWeight::one_plus; }}) {
    FormShape shape = norm;
    change(shape);
    EXPECT_THROW(run_form(*qwen3, form_case(shape, 430)), InvalidInput);
  }
}

TEST(PythonRopeFormFailures, MalformedDeclarationsAreRefusedSayingWhat) {
  REQUIRE_TORCH();
  const auto expect_refused = [](const std::string& target, const std::string& part) {
    try {
      form_load(target);
      ADD_FAILURE() << target << " loaded; expected '" << part << "'";
    } catch (const InvalidInput& e) {
      EXPECT_TRUE(contains(e.what(), part)) << e.what();
    }
  };
  expect_refused(py_fixture("rope_form_bugs.py:declares_a_backward"), "'autograd': a call form has no backward pass");
  expect_refused(py_fixture("rope_form_bugs.py:declares_an_unknown_source"),
                 "'rope_form': 'angle_sources' has 'table', not one of spec, cos_sin_cache");
  expect_refused(py_fixture("rope_form_bugs.py:takes_the_rope_arguments"),
                 "cannot be called as fn(q, k, positions, cos_sin_cache, norm, spec, form)");
  expect_refused(py_example("torch_fused_cache.py:vllm_fused"), "a fused cache call, not a call form");
  expect_refused(py_fixture("contract_rope.py:correct"), "a RoPE function, not a call form");
  try {
    load_python(py_example("torch_rope_form.py:vllm_forward_native"), py_options());
    ADD_FAILURE() << "a call form loaded as a RoPE function";
  } catch (const InvalidInput& e) {
    EXPECT_TRUE(contains(e.what(), "it declares a call form ('rope_form'), not a RoPE function")) << e.what();
  }
}

TEST(PythonRopeFormFailures, LoadPluginsKeepsACallFormBesideTheOtherKinds) {
  REQUIRE_NUMPY_PYTHON();
  PluginOptions options = py_options();
  options.python = {py_example("numpy_rope_form.py:apply"), py_example("numpy_fused_cache.py:apply"),
                    py_example("numpy_rope.py:apply")};
  const LoadedPlugins loaded = load_plugins({}, options);
  ASSERT_EQ(loaded.rope_form.size(), 1u);
  ASSERT_EQ(loaded.rope_cache.size(), 1u);
  ASSERT_EQ(loaded.rope.size(), 1u);
  EXPECT_EQ(loaded.rope_form[0]->id(), "python/numpy_rope_form.apply");
  const RopeFormCapabilities caps = loaded.rope_form[0]->capabilities();
  EXPECT_EQ(caps.storages, (std::vector{StorageType::fp32, StorageType::bf16, StorageType::fp16}));
  EXPECT_EQ(caps.angle_sources, (std::vector{AngleSource::spec, AngleSource::cos_sin_cache}));
  EXPECT_EQ(caps.norm_weights, (std::vector{NormWeight::plain, NormWeight::one_plus}));
  ASSERT_NE(python_info(*loaded.rope_form[0]), nullptr);
  EXPECT_TRUE(contains(python_info(*loaded.rope_form[0])->declaration, "\"rope_form\"")) << python_info(*loaded.rope_form[0])->declaration;
}

}  // namespace python_form_test
}  // namespace ropecheck
