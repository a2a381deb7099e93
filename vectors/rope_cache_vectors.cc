// write_rope_cache_case (rope_cache_vectors.h): one fused case's files from the float64 oracle
// (impls/oracle/oracle_kv_cache.h) and its manifest entry.
#include "vectors/rope_cache_vectors.h"

#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "impls/oracle/oracle.h"
#include "impls/oracle/oracle_kv_cache.h"
#include "vectors/case_writer.h"
#include "vectors/golden_cases.h"
#include "vectors/manifest.h"
#include "vectors/rope_cache_manifest.h"
#include "vectors/round_once.h"

namespace ropecheck {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

// A float64 stored-domain value rounded once, straight to the storage (round_once.h), written at
// element `index`: what an exact port leaves there.
void write_rounded_once(CacheStorage storage, std::span<std::byte> cache, std::int64_t index, double y) {
  std::byte* at = cache.data() + index * element_bytes(storage);
  switch (storage) {
    case CacheStorage::fp32: {
      const auto f = static_cast<float>(y);
      std::memcpy(at, &f, sizeof f);
      return;
    }
    case CacheStorage::bf16: {
      const std::uint16_t bits = bf16_from_double(y);
      std::memcpy(at, &bits, sizeof bits);
      return;
    }
    case CacheStorage::fp16: {
      const Fp16 half = fp16_from_double(y);
      std::memcpy(at, &half.bits, sizeof half.bits);
      return;
    }
    case CacheStorage::fp8_e4m3: *at = std::byte{fp8_from_double(y, Fp8Format::e4m3)}; return;
    case CacheStorage::fp8_e5m2: *at = std::byte{fp8_from_double(y, Fp8Format::e5m2)}; return;
  }
}

std::string exact_in(StorageType inputs) {
  return inputs == StorageType::fp32 ? "" : fmt::format(" (values exact in {})", to_string(inputs));
}

}  // namespace

std::vector<std::byte> initial_cache(const GoldenRopeCacheCase& c, const char* which) {
  const auto elements = static_cast<std::size_t>(cache_elements(c.cache));
  const auto values = golden_inputs(c.name, std::string(which) + "_cache_initial", elements, StorageType::fp32, 64.0f);
  std::vector<std::byte> cache(elements * static_cast<std::size_t>(element_bytes(c.cache.storage)));
  for (std::size_t i = 0; i < elements; ++i) {
    const auto index = static_cast<std::int64_t>(i);
    write_cache_element(c.cache.storage, cache, index, values[i]);
    if (read_cache_element(c.cache.storage, cache, index) == 0.0f) write_cache_element(c.cache.storage, cache, index, 1.0f);
  }
  return cache;
}

Json write_rope_cache_case(const GoldenRopeCacheCase& c, const fs::path& out_dir, std::uintmax_t& bytes) {
  CaseWriter writer(out_dir, c.name);
  const KvCacheSpec& cache = c.cache;
  const bool mla = cache.layout == CacheLayout::mla;
  const auto tokens = static_cast<std::int64_t>(c.positions.size());
  const std::int64_t dim = c.spec.head_dim, v_dim = mla ? cache.latent_dim : dim;
  const auto count = [&](std::int64_t heads, std::int64_t features) {
    return static_cast<std::size_t>(tokens * heads * features);
  };
  const auto q = golden_inputs(c.name, "q", count(c.q_heads, dim), c.inputs, c.input_scale);
  const auto k = golden_inputs(c.name, "k", count(cache.kv_heads, dim), c.inputs, c.input_scale);
  const auto v = golden_inputs(c.name, "v", count(cache.kv_heads, v_dim), c.inputs, c.input_scale);
  const FusedCacheTruth truth =
      oracle_rope_and_cache(c.spec, cache, q, c.q_heads, k, v, tokens, c.positions, c.slots);

  const std::string note = exact_in(c.inputs);
  writer.write<float>("q", "q.npy", q, {tokens, c.q_heads, dim}, "input" + note + ", rotated in place by the call");
  writer.write<float>("k", "k.npy", k, {tokens, cache.kv_heads, dim},
                      mla ? "k_pe, input" + note + ": rotated, it fills the last head_dim features of the row"
                          : "input" + note + ": rotated, it is written to k_cache");
  writer.write<float>("v", "v.npy", v, {tokens, cache.kv_heads, v_dim},
                      mla ? "the latent kv_c, input" + note + ": written unrotated, first in the row"
                          : "input" + note + ": written unrotated to v_cache");
  writer.write<std::int64_t>("positions", "positions.npy", c.positions, {tokens}, "position of each token");
  writer.write<std::int64_t>("slots", "slots.npy", c.slots, {tokens},
                             "cache slot of each token: block = slot / block_size, offset = slot % block_size; "
                             "-1 is padding");
  const auto theta_ld = oracle_inverse_frequencies(c.spec);
  const std::vector<double> theta(theta_ld.begin(), theta_ld.end());
  writer.write<double>("theta", "theta.npy", theta, {static_cast<std::int64_t>(theta.size())},
                       "theta_i the expected outputs rotate by, for the fp32-angle bound");
  writer.write<double>("q_expected", "q_expected.npy", truth.q, {tokens, c.q_heads, dim},
                       fmt::format("q after the call, float64: rotated{}",
                                   cache.padding == PaddingRule::skip_token ? ", a padding token's as it came" : ""));
  write_rounded(writer, "q_expected_fp32", "q_expected_fp32.npy", truth.q, StorageType::fp32,
                {tokens, c.q_heads, dim}, "q_expected rounded once to fp32");

  const std::string storage(to_string(cache.storage));
  const char* descr = cache_descr(cache.storage);
  for (const char* which : {"k", "v"}) {
    if (mla && std::string(which) == "v") break;  // one cache: the latent is v's place
    const std::string name = std::string(which) + "_cache";
    const std::vector<double>& stored = std::string(which) == "k" ? truth.k_cache : truth.v_cache;
    const std::vector<std::byte> before = initial_cache(c, which);
    std::vector<std::byte> after = before;
    for (std::size_t i = 0; i < truth.written.size(); ++i) {
      if (truth.written[i]) write_rounded_once(cache.storage, after, static_cast<std::int64_t>(i), stored[i]);
    }
    const std::int64_t features = std::string(which) == "k" ? row_features(cache) : dim;
    std::vector<double> rows(count(cache.kv_heads, features), std::numeric_limits<double>::quiet_NaN());
    for (std::int64_t t = 0; t < tokens; ++t) {
      const std::int64_t slot = c.slots[static_cast<std::size_t>(t)];
      if (slot < 0) continue;
      for (std::int64_t h = 0; h < cache.kv_heads; ++h) {
        for (std::int64_t f = 0; f < features; ++f) {
          rows[static_cast<std::size_t>((t * cache.kv_heads + h) * features + f)] =
              stored[static_cast<std::size_t>(cache_index(cache, slot, h, f))];
        }
      }
    }
    writer.write_bytes(name + "_initial", name + "_initial.npy", descr, before, cache_shape(cache),
                       fmt::format("the {} cache before the call ({}): a pseudo-random pattern, no zeros", which, storage));
    writer.write<double>(std::string(which) + "_rows_expected", std::string(which) + "_rows_expected.npy", rows,
                         {tokens, cache.kv_heads, features},
                         fmt::format("float64, stored domain (before narrowing): the row token t writes for each kv "
                                     "head{}; NaN for a padding token, which writes nothing",
                                     mla ? " (kv_c, then the rotated k_pe)" : ""));
    writer.write_bytes(name + "_expected_" + storage, name + "_expected_" + storage + ".npy", descr, after,
                       cache_shape(cache),
                       fmt::format("the {} cache after the call: each written element the expected row rounded once to "
                                   "{}{}, every other element the initial bytes",
                                   which, storage, is_fp8(cache.storage) ? " (saturating)" : ""));
  }
  bytes += writer.bytes();

  Json outputs = {{"q", port_output_path(c.name, "q")}, {"k_cache", port_output_path(c.name, "k_cache")}};
  if (!mla) outputs["v_cache"] = port_output_path(c.name, "v_cache");
  Json entry = {{"name", c.name},
                {"kind", "rope_cache"},
                {"description", c.description},
                {"spec", rope_spec_json(c.spec)},
                {"dtype", "fp32"},
                {"inputs_exact_in", std::string(to_string(c.inputs))},
                {"tokens", tokens},
                {"q_heads", c.q_heads},
                {"kv_heads", cache.kv_heads},
                {"cache", cache_json(cache)},
                {"files", writer.files()},
                {"tolerance", {{"q", rope_tolerance_json(c.spec, StorageType::fp32)}, {"cache", cache_tolerance_json(cache)}}},
                {"outputs", outputs}};
  if (c.spec.scaling.kind != ScalingKind::none) entry["scaling_effective"] = scaling_effective_json(c.spec);
  return entry;
}

}  // namespace ropecheck
