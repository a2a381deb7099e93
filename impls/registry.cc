// Expands impls/registry.inc into the registry. Built as part of the core static library and
// referenced by name, so no implementation can be dropped by the linker (no self-registration).
#include "impls/registry.h"

#include <fmt/format.h>

#include <memory>
#include <stdexcept>
#include <string_view>
#include <vector>

namespace ropecheck {

#define ROPE_IMPL(first, second, factory) std::unique_ptr<RopeImpl> factory();
#define ROPE_MUTANT(first, second, factory) std::unique_ptr<RopeImpl> factory();
#define SINUSOIDAL_IMPL(first, second, factory) std::unique_ptr<SinusoidalImpl> factory();
#define SINUSOIDAL_MUTANT(first, second, factory) std::unique_ptr<SinusoidalImpl> factory();
#define ATTENTION_IMPL(first, second, factory) std::unique_ptr<AttentionImpl> factory();
#define ATTENTION_MUTANT(first, second, factory) std::unique_ptr<AttentionImpl> factory();
#define ROPE_CACHE_IMPL(first, second, factory) std::unique_ptr<RopeCacheImpl> factory();
#define ROPE_CACHE_MUTANT(first, second, factory) std::unique_ptr<RopeCacheImpl> factory();
#define ROPE_FORM_IMPL(first, second, factory) std::unique_ptr<RopeFormImpl> factory();
#define ROPE_FORM_MUTANT(first, second, factory) std::unique_ptr<RopeFormImpl> factory();
#include "impls/registry.inc"
#undef ROPE_IMPL
#undef ROPE_MUTANT
#undef SINUSOIDAL_IMPL
#undef SINUSOIDAL_MUTANT
#undef ATTENTION_IMPL
#undef ATTENTION_MUTANT
#undef ROPE_CACHE_IMPL
#undef ROPE_CACHE_MUTANT
#undef ROPE_FORM_IMPL
#undef ROPE_FORM_MUTANT

namespace {

template <typename Impl>
struct Lists {
  std::vector<std::unique_ptr<Impl>> owned;
  std::vector<const Impl*> real;
  std::vector<const Impl*> mutants;

  // The listed id must be the one the implementation answers to: the list is where a reader
  // looks an id up, so a line that says otherwise stops every run at its first use.
  void add(std::string_view listed_id, std::unique_ptr<Impl> impl, bool mutant) {
    if (impl->id() != listed_id) {
      throw std::logic_error(fmt::format("impls/registry.inc lists '{}', but its factory makes '{}'",
                                         listed_id, impl->id()));
    }
    (mutant ? mutants : real).push_back(impl.get());
    owned.push_back(std::move(impl));
  }
};

struct Registry {
  Lists<RopeImpl> rope;
  Lists<SinusoidalImpl> sinusoidal;
  Lists<AttentionImpl> attention;
  Lists<RopeCacheImpl> rope_cache;
  Lists<RopeFormImpl> rope_form;
};

// One expansion of the list, in its order, built on first use.
const Registry& registry() {
  static const Registry all = [] {
    Registry r;
#define ROPE_IMPL(first, second, factory) r.rope.add(#first "/" #second, factory(), false);
#define ROPE_MUTANT(first, second, factory) r.rope.add(#first "/" #second, factory(), true);
#define SINUSOIDAL_IMPL(first, second, factory) r.sinusoidal.add(#first "/" #second, factory(), false);
#define SINUSOIDAL_MUTANT(first, second, factory) r.sinusoidal.add(#first "/" #second, factory(), true);
#define ATTENTION_IMPL(first, second, factory) r.attention.add(#first "/" #second, factory(), false);
#define ATTENTION_MUTANT(first, second, factory) r.attention.add(#first "/" #second, factory(), true);
#define ROPE_CACHE_IMPL(first, second, factory) r.rope_cache.add(#first "/" #second, factory(), false);
#define ROPE_CACHE_MUTANT(first, second, factory) r.rope_cache.add(#first "/" #second, factory(), true);
#define ROPE_FORM_IMPL(first, second, factory) r.rope_form.add(#first "/" #second, factory(), false);
#define ROPE_FORM_MUTANT(first, second, factory) r.rope_form.add(#first "/" #second, factory(), true);
#include "impls/registry.inc"
#undef ROPE_IMPL
#undef ROPE_MUTANT
#undef SINUSOIDAL_IMPL
#undef SINUSOIDAL_MUTANT
#undef ATTENTION_IMPL
#undef ATTENTION_MUTANT
#undef ROPE_CACHE_IMPL
#undef ROPE_CACHE_MUTANT
#undef ROPE_FORM_IMPL
#undef ROPE_FORM_MUTANT
    return r;
  }();
  return all;
}

const Lists<RopeImpl>& rope_lists() { return registry().rope; }
const Lists<SinusoidalImpl>& sinusoidal_lists() { return registry().sinusoidal; }
const Lists<AttentionImpl>& attention_lists() { return registry().attention; }
const Lists<RopeCacheImpl>& rope_cache_lists() { return registry().rope_cache; }
const Lists<RopeFormImpl>& rope_form_lists() { return registry().rope_form; }

template <typename Impl>
const Impl* find_in(const Lists<Impl>& lists, std::string_view id) {
  for (const auto& impl : lists.owned) {
    if (impl->id() == id) return impl.get();
  }
  return nullptr;
}

}  // namespace

std::span<const RopeImpl* const> rope_implementations() { return rope_lists().real; }
std::span<const RopeImpl* const> rope_mutants() { return rope_lists().mutants; }
const RopeImpl& rope_oracle() { return *rope_lists().real.front(); }

std::span<const SinusoidalImpl* const> sinusoidal_implementations() {
  return sinusoidal_lists().real;
}
std::span<const SinusoidalImpl* const> sinusoidal_mutants() { return sinusoidal_lists().mutants; }

std::span<const AttentionImpl* const> attention_implementations() { return attention_lists().real; }
std::span<const AttentionImpl* const> attention_mutants() { return attention_lists().mutants; }

const AttentionImpl* find_attention(std::string_view id) { return find_in(attention_lists(), id); }

std::span<const RopeCacheImpl* const> rope_cache_implementations() { return rope_cache_lists().real; }
std::span<const RopeCacheImpl* const> rope_cache_mutants() { return rope_cache_lists().mutants; }
const RopeCacheImpl* find_rope_cache(std::string_view id) { return find_in(rope_cache_lists(), id); }

std::span<const RopeFormImpl* const> rope_form_implementations() { return rope_form_lists().real; }
std::span<const RopeFormImpl* const> rope_form_mutants() { return rope_form_lists().mutants; }
const RopeFormImpl* find_rope_form(std::string_view id) { return find_in(rope_form_lists(), id); }

const RopeImpl* find_rope(std::string_view id) { return find_in(rope_lists(), id); }
const SinusoidalImpl* find_sinusoidal(std::string_view id) {
  return find_in(sinusoidal_lists(), id);
}

}  // namespace ropecheck
