// Expands impls/registry.inc into the registry. Built as part of the core static library and
// referenced by name, so no implementation can be dropped by the linker (no self-registration).
#include "impls/registry.h"

#include <memory>
#include <vector>

namespace ropecheck {

#define ROPE_IMPL(factory) std::unique_ptr<RopeImpl> factory();
#define ROPE_MUTANT(factory) std::unique_ptr<RopeImpl> factory();
#define SINUSOIDAL_IMPL(factory) std::unique_ptr<SinusoidalImpl> factory();
#define SINUSOIDAL_MUTANT(factory) std::unique_ptr<SinusoidalImpl> factory();
#define ATTENTION_IMPL(factory) std::unique_ptr<AttentionImpl> factory();
#define ATTENTION_MUTANT(factory) std::unique_ptr<AttentionImpl> factory();
#include "impls/registry.inc"
#undef ROPE_IMPL
#undef ROPE_MUTANT
#undef SINUSOIDAL_IMPL
#undef SINUSOIDAL_MUTANT
#undef ATTENTION_IMPL
#undef ATTENTION_MUTANT

namespace {

template <typename Impl>
struct Lists {
  std::vector<std::unique_ptr<Impl>> owned;
  std::vector<const Impl*> real;
  std::vector<const Impl*> mutants;

  void add(std::unique_ptr<Impl> impl, bool mutant) {
    (mutant ? mutants : real).push_back(impl.get());
    owned.push_back(std::move(impl));
  }
};

struct Registry {
  Lists<RopeImpl> rope;
  Lists<SinusoidalImpl> sinusoidal;
  Lists<AttentionImpl> attention;
};

// One expansion of the list, in its order, built on first use.
const Registry& registry() {
  static const Registry all = [] {
    Registry r;
#define ROPE_IMPL(factory) r.rope.add(factory(), false);
#define ROPE_MUTANT(factory) r.rope.add(factory(), true);
#define SINUSOIDAL_IMPL(factory) r.sinusoidal.add(factory(), false);
#define SINUSOIDAL_MUTANT(factory) r.sinusoidal.add(factory(), true);
#define ATTENTION_IMPL(factory) r.attention.add(factory(), false);
#define ATTENTION_MUTANT(factory) r.attention.add(factory(), true);
#include "impls/registry.inc"
#undef ROPE_IMPL
#undef ROPE_MUTANT
#undef SINUSOIDAL_IMPL
#undef SINUSOIDAL_MUTANT
#undef ATTENTION_IMPL
#undef ATTENTION_MUTANT
    return r;
  }();
  return all;
}

const Lists<RopeImpl>& rope_lists() { return registry().rope; }
const Lists<SinusoidalImpl>& sinusoidal_lists() { return registry().sinusoidal; }
const Lists<AttentionImpl>& attention_lists() { return registry().attention; }

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

const RopeImpl* find_rope(std::string_view id) { return find_in(rope_lists(), id); }
const SinusoidalImpl* find_sinusoidal(std::string_view id) {
  return find_in(sinusoidal_lists(), id);
}

}  // namespace ropecheck
