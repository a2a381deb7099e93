// RoPE benchmark cases (see rope_cases.h).
#include "bench/rope_cases.h"

#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <exception>

#include "bench/format/case_name.h"
#include "core/logging.h"
#include "bench/probes.h"
#include "bench/prompt_positions.h"
#include "impls/kernels/table_rows.h"
#include "impls/oracle/oracle.h"
#include "plugins/host/plugin_host.h"
#include "core/tolerance.h"
#include "bench/random_data.h"
#include "bench/rope_walk.h"
#include "bench/same_run_limit.h"
#include "bench/slowdown.h"

namespace ropecheck::bench {
namespace {

// Issue 3's targets for kernel/avx512, as ratios: to the same-run probe ("probe") or to the
// rate of a lower kernel level on the same case.
struct Goal {
  std::string_view shape, versus;
  double ratio;
};
constexpr Goal kAvx512Goals[] = {
    {"llama7b_prefill4096", "probe", 0.90},
    {"llama7b_decode_at4095", "probe", 0.50},  // time <= 2x the probe's over the same 32 KiB
    {"gpt2_small_prefill512", "probe", 0.70},
    {"gpt2_small_prefill512", "kernel/scalar", 4.0},
    {"gpt2_small_prefill512", "kernel/avx2", 1.5},
};

double goal_for(const RopeImpl& impl, const RopeShape& shape, std::string_view versus) {
  if (impl.id() != "kernel/avx512") return 0;
  for (const Goal& g : kAvx512Goals) {
    if (g.shape == shape.name && g.versus == versus) return g.ratio;
  }
  return 0;
}


template <typename Element>
HeadTensorOf<Element> rows(AlignedVector<Element>& x, const RopeShape& shape, TokenRange r,
                           std::int64_t heads) {
  return {token_rows(std::span(x), heads * shape.head_dim, r), r.count, heads, shape.head_dim};
}

// "" when impl agrees with the float64 oracle on the shape's last few tokens (the highest
// positions, where angle errors would show), else the first element outside the bound of the
// tolerance model (rotation_bound_units, eps32 * |pair|). Inputs are values of the
// implementation's storage type (through its fp32 entry point for bf16 and fp16).
std::string check_against_oracle(const RopeImpl& impl, const RopeSpec& spec, const RopeShape& shape,
                                 double& worst_fraction) {
  const StorageType storage = impl.capabilities().storage;
  const std::int64_t n = std::min<std::int64_t>(shape.tokens, 8), d = shape.head_dim;
  // The last n tokens' positions (a prompt's: its largest, and its text after the image).
  const auto axes = static_cast<std::size_t>(axis_count(spec));
  const auto all = prompt_positions(shape);
  const std::vector<std::int64_t> positions(all.end() - static_cast<std::ptrdiff_t>(n * axes), all.end());
  const std::vector<int> pair_axis = pair_axes(spec.axes, spec.rotary_dim);
  auto q_in = random_floats(static_cast<std::size_t>(n * shape.q_heads * d), 3);
  auto k_in = random_floats(static_cast<std::size_t>(n * shape.k_heads * d), 4);
  for (float& x : q_in) x = round_to_storage(x, storage);
  for (float& x : k_in) x = round_to_storage(x, storage);
  auto q = q_in, k = k_in;
  try {
    impl.apply(spec, {q, n, shape.q_heads, d}, {k, n, shape.k_heads, d}, positions);
  } catch (const std::exception& e) {
    return fmt::format("apply threw: {}", e.what());
  }
  const auto theta = oracle_inverse_frequencies(spec);
  const ErrorModel model = error_model(spec, storage);
  const std::size_t half = static_cast<std::size_t>(spec.rotary_dim) / 2;
  const bool interleaved = spec.layout == Layout::interleaved;
  auto check = [&](const char* name, const std::vector<float>& in, const std::vector<float>& got,
                   std::int64_t heads) -> std::string {
    const auto want = oracle_rope(spec, in, n, heads, positions);
    for (std::int64_t t = 0; t < n; ++t) {
      for (std::int64_t h = 0; h < heads; ++h) {
        const auto row = static_cast<std::size_t>((t * heads + h) * d);
        for (std::size_t i = 0; i < half; ++i) {
          const std::int64_t m = positions[static_cast<std::size_t>(t) * axes + static_cast<std::size_t>(pair_axis[i])];
          const std::size_t a = row + (interleaved ? 2 * i : i);
          const std::size_t b = row + (interleaved ? 2 * i + 1 : i + half);
          const double pair = unit_pair_norm(storage, model.attention_factor,
                                             std::hypot(double{in[a]}, double{in[b]}));
          const double bound = rotation_bound_units(model, m, static_cast<double>(theta[i]), static_cast<int>(i));
          for (const std::size_t at : {a, b}) {
            const double units = std::abs(got[at] - want[at]) / (kEps32 * pair);
            worst_fraction = std::max(worst_fraction, units / bound);
            if (!(units <= bound)) {  // NaN fails too
              return fmt::format("{} at position {} head {} pair {}: {} vs oracle {}: {:.3g} > "
                                 "{:.3g} eps32*|pair|", name, m, h, i, got[at], want[at], units,
                                 bound);
            }
          }
        }
      }
    }
    return "";
  };
  std::string error = check("q", q_in, q, shape.q_heads);
  return error.empty() ? check("k", k_in, k, shape.k_heads) : error;
}

// Times impl on this thread's tokens, with the probe over the same bytes (same_run_limit.h).
// (A plugin's work runs in its worker process: it is timed there, time_in_worker below.)
template <typename Element, typename Apply>
void time_case(benchmark::State& state, Workload& w, AlignedVector<Element>& q_all,
               AlignedVector<Element>& k_all, Apply apply) {
  const TokenRange r = my_tokens(state, w.shape.tokens);
  const auto q = rows(q_all, w.shape, r, w.shape.q_heads);
  const auto k = rows(k_all, w.shape, r, w.shape.k_heads);
  const auto axes = static_cast<std::size_t>(axis_count(w.shape.axes));
  const PositionIds positions = std::span(w.positions).subspan(static_cast<std::size_t>(r.first) * axes,
                                                               static_cast<std::size_t>(r.count) * axes);
  const auto elements = q.data.size() + k.data.size();
  const double bytes = 2.0 * sizeof(Element) * static_cast<double>(elements);  // read + write
  const auto step = [&] {
    apply(q, k, positions);
    benchmark::ClobberMemory();
  };
  const auto probe = [&] { probe_pass(as_floats(q.data), as_floats(k.data), r.count); };
  run_with_limit(state, step, probe, bytes);
  state.SetBytesProcessed(static_cast<std::int64_t>(bytes) * state.iterations());
  state.counters["flops"] = benchmark::Counter(3.0 * static_cast<double>(elements),  // 6 a pair
                                               benchmark::Counter::kIsIterationInvariantRate);
}

// The probe as the plugin worker runs it (plugin_protocol.h, WorkerProbe): this function's address
// is valid in the worker, a fork of this process.
void probe_in_worker(float* q, std::size_t q_floats, float* k, std::size_t k_floats, std::int64_t tokens) {
  probe_pass({q, q_floats}, {k, k_floats}, tokens);
}

// Median wall time of a few calls through the ABI's process boundary (q and k copied into
// shared memory and back, one request and reply): what `bench` reported before plugins were
// timed in their worker, kept as a separate counter (boundary_seconds).
template <typename Apply>
double boundary_seconds(Apply apply) {
  std::vector<double> took;
  for (int i = 0; i < 3; ++i) {
    const auto start = WallClock::now();
    apply();
    took.push_back(std::chrono::duration<double>(WallClock::now() - start).count());
  }
  std::sort(took.begin(), took.end());
  return took[1];
}

// A plugin, timed where it runs (plugin_host.h, PluginTimer): q and k staged once into its
// worker's shared memory, then every iteration one apply there, timed by the worker, with the
// same-run probe over the same bytes run and timed in the worker after it (the built-ins' rule:
// at least a quarter of the case's time). The Google Benchmark time is the worker's (manual
// time); the rate, limit_fraction and probe_rate are the built-ins' counters.
template <typename Element>
void time_in_worker(benchmark::State& state, const RopeCase& c, const PluginTimer& timer, AlignedVector<Element>& q,
                    AlignedVector<Element>& k) {
  const Workload& w = *c.workload;
  const int threads = static_cast<int>(state.range(0));
  const StorageType storage = c.impl->capabilities().storage;
  const double boundary = boundary_seconds([&] {
    timer.apply_at(c.spec, storage, std::as_writable_bytes(std::span(q)), w.shape.q_heads,
                   std::as_writable_bytes(std::span(k)), w.shape.k_heads, w.positions, threads);
  });
  timer.stage(c.spec, storage, std::as_bytes(std::span(q)), w.shape.q_heads, std::as_bytes(std::span(k)),
              w.shape.k_heads, w.positions);
  timer.timed_call(probe_in_worker, threads);  // untimed: page faults, caches
  double apply_seconds = 0, probe_seconds = 0;
  std::int64_t probe_passes = 0;
  for (auto _ : state) {
    const WorkerTimedCall t = timer.timed_call(probe_in_worker, threads);
    state.SetIterationTime(t.apply_seconds);
    apply_seconds += t.apply_seconds;
    probe_seconds += t.probe_seconds;
    probe_passes += t.probe_passes;
  }
  const double elements = static_cast<double>(q.size() + k.size());
  const double bytes = 2.0 * sizeof(Element) * elements;  // read + write
  const double per_call = apply_seconds / static_cast<double>(state.iterations());
  const double per_probe = probe_seconds / static_cast<double>(probe_passes);
  using benchmark::Counter;
  state.counters["bytes_per_second"] = Counter(bytes / per_call);
  state.counters["flops"] = Counter(3.0 * elements / per_call);
  state.counters["limit_fraction"] = Counter(per_probe / per_call);
  state.counters["probe_rate"] = Counter(bytes / per_probe);
  state.counters["boundary_seconds"] = Counter(boundary);
  state.counters["boundary_bytes_per_second"] = Counter(bytes / boundary);
}

void bench_plugin(benchmark::State& state, RopeCase* c, const PluginTimer& timer) {
  Workload& w = *c->workload;
  const StorageType storage = c->impl->capabilities().storage;
  if (storage == StorageType::bf16) {
    w.allocate_bf16();
    time_in_worker(state, *c, timer, w.q16, w.k16);
  } else if (storage == StorageType::fp16) {
    w.allocate_fp16();
    time_in_worker(state, *c, timer, w.q_half, w.k_half);
  } else {
    w.allocate();
    time_in_worker(state, *c, timer, w.q, w.k);
  }
}

// The fast kernel keeps each position's cos/sin row (impls/kernels/table_rows.h): a decode case
// times calls at a kept position, as every layer after the first makes them. Beside it:
// the bytes kept per position, and a call at a position of a block not yet formed (its 32 rows
// formed, then the token rotated), the first layer's call once every 32 positions.
void kept_rows_counters(benchmark::State& state, const RopeCase& c) {
  static std::int64_t next_fresh = std::int64_t{1} << 23;  // thread 0 only: blocks never formed yet
  const Workload& w = *c.workload;
  std::vector<float> q(w.q.begin(), w.q.begin() + static_cast<std::ptrdiff_t>(w.shape.q_heads * w.shape.head_dim));
  std::vector<float> k(w.k.begin(), w.k.begin() + static_cast<std::ptrdiff_t>(w.shape.k_heads * w.shape.head_dim));
  std::vector<double> took;
  for (int i = 0; i < 15; ++i) {
    const std::int64_t position = next_fresh;
    next_fresh += kernels::kAnchorEvery;
    const auto start = Clock::now();
    c.impl->apply(c.spec, {q, 1, w.shape.q_heads, w.shape.head_dim}, {k, 1, w.shape.k_heads, w.shape.head_dim},
                  std::span(&position, 1));
    took.push_back(std::chrono::duration<double>(Clock::now() - start).count());
  }
  std::nth_element(took.begin(), took.begin() + 7, took.end());
  state.counters["fresh_block_seconds"] = benchmark::Counter(took[7]);
  state.counters["kept_row_bytes"] = benchmark::Counter(static_cast<double>(TableRows::row_bytes(c.spec.rotary_dim)));
}

void bench_rope(benchmark::State& state, RopeCase* c) {
  std::call_once(c->checked, [c] {
    double worst = 0;
    c->error = check_against_oracle(*c->impl, c->spec, c->workload->shape, worst);
    // A failing case timed anyway says so in every repetition; its error is printed once, after
    // the run (run_bench.cc).
    c->label = c->error.empty() ? fmt::format("oracle: {:.2f} of bound", worst)
                                : fmt::format("oracle FAILED: {:.2f} of bound", worst);
  });
  if (!c->error.empty() && !c->time_failing) {
    state.SkipWithError(c->error.c_str());
    return;  // every thread sees the same error, so none waits for the others
  }
  if (const PluginTimer* timer = plugin_timer(*c->impl)) {
    try {
      bench_plugin(state, c, *timer);
    } catch (const std::exception& e) {  // a plugin that fails while timed: this case's error
      state.SkipWithError(e.what());
      return;
    }
    state.SetLabel(c->label);
    if (!c->error.empty()) state.counters["oracle_failed"] = 1;
    return;
  }
  Workload& w = *c->workload;
  const double slowdown = slowdown_percent(c->impl->id());  // 0 outside gate calibration
  const StorageType storage = c->impl->capabilities().storage;
  if (storage == StorageType::bf16) {
    w.allocate_bf16();  // bf16 in and out: the bytes a bf16 model moves
    time_case(state, w, w.q16, w.k16, [&](Bf16HeadTensor q, Bf16HeadTensor k, PositionIds p) {
      call_slowed(slowdown, [&] { c->impl->apply_bf16(c->spec, q, k, p); });
    });
  } else if (storage == StorageType::fp16) {
    w.allocate_fp16();
    time_case(state, w, w.q_half, w.k_half, [&](Fp16HeadTensor q, Fp16HeadTensor k, PositionIds p) {
      call_slowed(slowdown, [&] { c->impl->apply_fp16(c->spec, q, k, p); });
    });
  } else {
    w.allocate();
    time_case(state, w, w.q, w.k, [&](HeadTensor q, HeadTensor k, PositionIds p) {
      call_slowed(slowdown, [&] { c->impl->apply(c->spec, q, k, p); });
    });
    if (w.shape.tokens == 1 && c->impl->id().starts_with("kernel/") && state.thread_index() == 0) {
      kept_rows_counters(state, *c);
    }
  }
  state.SetLabel(c->label);
  // A case timed despite its failed check says so in every repetition's entry of bench.json.
  if (!c->error.empty()) state.counters["oracle_failed"] = 1;
}

bool is_kernel(const RopeImpl& impl) { return impl.id().starts_with("kernel"); }

// The slow references on the shapes marked for them only (core/model_shapes.h).
bool worth_running(const RopeImpl& impl, const RopeShape& shape) {
  return runs_model_shape(impl.id(), shape);
}

// The (layout, pass) cases of one implementation on one shape: both layouts forward, and the
// backward of each on a prefill shape where the implementation has one (shapes.h).
std::vector<std::pair<Layout, Pass>> cases_of(const RopeImpl& impl, const RopeShape& shape) {
  std::vector<std::pair<Layout, Pass>> cases;
  const bool backward = has_backward_case(shape) && impl.capabilities().implements(Pass::backward);
  for (const Pass pass : kAllPasses) {
    if (pass == Pass::backward && !backward) continue;
    for (const Layout layout : {Layout::interleaved, Layout::half_split}) cases.emplace_back(layout, pass);
  }
  return cases;
}

}  // namespace

// Each storage type's buffers are made from the same fixed-seed values (q seed 1, k seed 2), and
// only when a case of that type runs: a 16-bit case's process never builds the fp32 copies.
template <typename T, typename Convert>
void make_inputs(const RopeShape& shape, AlignedVector<T>& q, AlignedVector<T>& k, Convert convert) {
  q.resize(static_cast<std::size_t>(shape.tokens * shape.q_heads * shape.head_dim));
  k.resize(static_cast<std::size_t>(shape.tokens * shape.k_heads * shape.head_dim));
  fill_random(std::span<T>(q), 1, convert);
  fill_random(std::span<T>(k), 2, convert);
}

void Workload::allocate_positions() {
  std::call_once(allocated_positions, [this] { positions = prompt_positions(shape); });
}

void Workload::allocate() {
  allocate_positions();
  std::call_once(allocated, [this] { make_inputs(shape, q, k, [](float x) { return x; }); });
}

void Workload::allocate_bf16() {
  allocate_positions();
  std::call_once(allocated_bf16, [this] { make_inputs(shape, q16, k16, bf16_from_float); });
}

void Workload::allocate_fp16() {
  allocate_positions();
  std::call_once(allocated_fp16, [this] { make_inputs(shape, q_half, k_half, fp16_from_float); });
}

RopeCase::RopeCase(const RopeImpl* i, Workload* w, Layout layout, Pass pass) : impl(i), workload(w) {
  spec.pass = pass;
  spec.head_dim = static_cast<int>(w->shape.head_dim);
  spec.rotary_dim = static_cast<int>(w->shape.rotary_dim > 0 ? w->shape.rotary_dim : w->shape.head_dim);
  spec.layout = layout;
  spec.axes = w->shape.axes;  // a vision-language shape's (refused by those that do not have them)
  // fp64 angles where the implementation forms them (every built-in); otherwise what it declares
  // (the PyTorch peers: fp32 only), so that its oracle check uses its own error model.
  const auto& precisions = i->capabilities().angle_precisions;
  if (!precisions.empty() &&
      std::find(precisions.begin(), precisions.end(), AnglePrecision::fp64) == precisions.end()) {
    spec.angle_precision = precisions.front();
  }
}

std::vector<Comparison> register_rope_cases(RopeCases& owner, std::span<const RopeImpl* const> impls,
                                            std::span<const int> threads, LeftOut& left_out) {
  std::vector<const RopeImpl*> available;
  for (const RopeImpl* impl : impls) {
    const RopeCapabilities caps = impl->capabilities();
    if (caps.available) {
      available.push_back(impl);
    } else {
      left_out.add(std::string(impl->id()), caps.unavailable_reason);
    }
  }
  std::vector<Comparison> table;
  for (const RopeShape& shape : kRopeShapes) {
    Workload& w = owner.workloads.emplace_back(shape);
    for (const RopeImpl* impl : available) {
      if (!worth_running(*impl, shape)) continue;
      for (const auto& [layout, pass] : cases_of(*impl, shape)) {
        RopeCase& c = owner.cases.emplace_back(impl, &w, layout, pass);
        c.time_failing = owner.time_failing;
        if (const auto why = impl->capabilities().why_unsupported(c.spec); !why.empty()) {
          // What its capability record says (`ropecheck list`), for every shape: not worth a line.
          progress_log().debug("bench: skipping {} on {}: {}", impl->id(), shape.name, why);
          owner.cases.pop_back();
          continue;
        }
        const auto name_of = [&](std::string_view id, Pass of_pass = Pass::forward) {
          RopeCaseName n{std::string(id), shape.name, std::string(to_string(layout))};
          n.backward = of_pass == Pass::backward;
          return registered_name(n);
        };
        const std::string name = name_of(impl->id(), pass);
        if (plugin_timer(*impl) != nullptr) {
          // Timed in its worker at each thread count as the call's (ABI 2 and 3's call->threads;
          // ABI 1 has none: one): <name>/threads:N/manual_time (case_name.h).
          auto* b = benchmark::RegisterBenchmark(name.c_str(), bench_rope, &c)->UseManualTime()->ArgName("threads");
          // A Python function (no PluginInfo) is timed at one thread, as ABI 1.
          const PluginInfo* info = plugin_info(*impl);
          const bool abi2 = info != nullptr && info->abi_version >= ROPECHECK_PLUGIN_ABI_V2;
          for (const int n : threads) {
            if (n == 1 || abi2) {
              b->Arg(n);
              table.push_back({fmt::format("{}/threads:{}", name, n), "", 0});
            }
          }
          continue;
        }
        auto* b = benchmark::RegisterBenchmark(name.c_str(), bench_rope, &c)->UseRealTime();
        // A thread needs a token; the references are not worth a scaling curve.
        for (const int n : threads) {
          if (n == 1 || (n <= shape.tokens && is_kernel(*impl))) b->Threads(n);
        }
        if (pass == Pass::backward) {
          // Beside its forward on the same tensors, by limit_fraction: an own kernel's should be
          // the same within kBackwardFractionTolerance (shapes.h).
          table.push_back({name, "", 0});
          table.push_back({name, name_of(impl->id()), is_kernel(*impl) ? 1 - kBackwardFractionTolerance : 0,
                           /*by_fraction=*/true});
          continue;
        }
        table.push_back({name, "", goal_for(*impl, shape, "probe")});
        // A multi-axis case beside its 1D twin (format/shapes.h), by limit_fraction.
        if (const auto twin = one_axis_twin(shape.name); !twin.empty() && is_kernel(*impl)) {
          const std::string twin_name =
              registered_name(RopeCaseName{std::string(impl->id()), std::string(twin), std::string(to_string(layout))});
          table.push_back({name, twin_name, kMultiAxisGoal, /*by_fraction=*/true});
        }
        for (const char* lower : {"kernel/scalar", "kernel/avx2"}) {
          if (const double goal = goal_for(*impl, shape, lower)) table.push_back({name, name_of(lower), goal});
        }
      }
    }
  }
  return table;
}

}  // namespace ropecheck::bench
