// Formatting and parsing of bench.json case names (case_name.h).
#include "bench/format/case_name.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <iterator>
#include <vector>

namespace ropecheck::bench {
namespace {

std::vector<std::string_view> split(std::string_view text) {
  std::vector<std::string_view> parts;
  for (std::size_t start = 0;;) {
    const auto slash = text.find('/', start);
    parts.push_back(text.substr(start, slash - start));
    if (slash == std::string_view::npos) return parts;
    start = slash + 1;
  }
}

// The non-negative integer after "<key>:" in `part` ("threads:2" -> 2); nothing else may follow.
std::optional<long> keyed_int(std::string_view part, std::string_view key) {
  if (part.size() <= key.size() + 1 || part.substr(0, key.size()) != key || part[key.size()] != ':') {
    return std::nullopt;
  }
  long value = 0;
  const char* begin = part.data() + key.size() + 1;
  const char* end = part.data() + part.size();
  const auto [stop, error] = std::from_chars(begin, end, value);
  if (error != std::errc() || stop != end || value < 0) return std::nullopt;
  return value;
}

bool is_layout(std::string_view s) { return s == "interleaved" || s == "half_split"; }

// A rotation ceiling's algorithm: "rotation" or "rotation_<storage>".
bool is_rotation(std::string_view algorithm) {
  return algorithm == "rotation" || (algorithm.starts_with("rotation_") && algorithm.size() > 9);
}

}  // namespace

std::string registered_name(const RopeCaseName& n) {
  return fmt::format("{}/{}/{}{}", n.impl, n.shape, n.layout, n.backward ? "/backward" : "");
}
std::string full_name(const RopeCaseName& n) {
  return n.in_worker ? fmt::format("{}/threads:{}/manual_time", registered_name(n), n.threads)
                     : fmt::format("{}/real_time/threads:{}", registered_name(n), n.threads);
}
std::optional<RopeCaseName> parse_rope_case(std::string_view name) {
  auto parts = split(name);
  // The backward's segment after the layout; without it, the forward's name.
  const bool backward = parts.size() == 7 && parts[4] == "backward";
  if (backward) parts.erase(parts.begin() + 4);
  if (parts.size() != 6 || !is_layout(parts[3]) || is_rotation(parts[0])) return std::nullopt;
  const bool in_worker = parts[5] == "manual_time";
  if (!in_worker && parts[4] != "real_time") return std::nullopt;
  const auto threads = keyed_int(in_worker ? parts[4] : parts[5], "threads");
  if (!threads || *threads < 1 || parts[0].empty() || parts[1].empty() || parts[2].empty()) {
    return std::nullopt;
  }
  return RopeCaseName{std::string(parts[0]) + "/" + std::string(parts[1]), std::string(parts[2]),
                      std::string(parts[3]), static_cast<int>(*threads), in_worker, backward};
}

namespace {

constexpr std::string_view kAttentionForms[] = {"attention_blas", "attention_blas_rope", "attention_fused"};

}  // namespace

std::string_view form_id(AttentionRope rope) { return kAttentionForms[static_cast<int>(rope)]; }

std::string registered_name(const AttentionCaseName& n) {
  const std::string heads = n.kv() == n.heads ? fmt::format("causal_{}heads", n.heads)
                                              : fmt::format("causal_{}heads_{}kv", n.heads, n.kv());
  return fmt::format("{}/{}/tokens:{}/head_dim:{}/{}:{}", n.impl(), heads, n.tokens, n.head_dim,
                     n.peer.empty() ? "blas_threads" : "threads", n.blas_threads);
}
std::string full_name(const AttentionCaseName& n) { return registered_name(n) + "/real_time"; }
std::optional<AttentionCaseName> parse_attention_case(std::string_view name) {
  auto parts = split(name);
  // A peer's id is two parts, "plugin/<name>"; an own form's one.
  std::string peer;
  if (parts.size() == 7 && parts[0] == "plugin" && !parts[1].empty()) {
    peer = fmt::format("plugin/{}", parts[1]);
    parts.erase(parts.begin());
  }
  if (parts.size() != 6 || parts[5] != "real_time") return std::nullopt;
  AttentionRope rope = AttentionRope::none;
  if (peer.empty()) {
    const auto form = std::find(std::begin(kAttentionForms), std::end(kAttentionForms), parts[0]);
    if (form == std::end(kAttentionForms)) return std::nullopt;
    rope = static_cast<AttentionRope>(form - std::begin(kAttentionForms));
  }
  // causal_<H>heads or causal_<H>heads_<KV>kv
  constexpr std::string_view kPrefix = "causal_", kHeads = "heads", kKv = "kv";
  std::string_view rest = parts[1];
  if (!rest.starts_with(kPrefix)) return std::nullopt;
  rest.remove_prefix(kPrefix.size());
  const auto number = [&rest]() -> std::optional<long> {
    long value = 0;
    const auto [stop, error] = std::from_chars(rest.data(), rest.data() + rest.size(), value);
    if (error != std::errc() || stop == rest.data() || value < 1) return std::nullopt;
    rest.remove_prefix(static_cast<std::size_t>(stop - rest.data()));
    return value;
  };
  const auto heads = number();
  if (!heads || !rest.starts_with(kHeads)) return std::nullopt;
  rest.remove_prefix(kHeads.size());
  long kv_heads = 0;
  if (!rest.empty()) {
    if (!rest.starts_with("_")) return std::nullopt;
    rest.remove_prefix(1);
    const auto kv = number();
    if (!kv || rest != kKv || *kv == *heads || *heads % *kv != 0) return std::nullopt;
    kv_heads = *kv;
  }
  const auto tokens = keyed_int(parts[2], "tokens");
  const auto head_dim = keyed_int(parts[3], "head_dim");
  const auto threads = keyed_int(parts[4], peer.empty() ? "blas_threads" : "threads");
  if (!tokens || !head_dim || !threads) return std::nullopt;
  return AttentionCaseName{*heads, *tokens, static_cast<int>(*head_dim), static_cast<int>(*threads), rope, kv_heads,
                           peer};
}

std::string registered_name(const TableCaseName& n) { return fmt::format("{}/{}", n.impl, n.shape); }
std::string full_name(const TableCaseName& n) { return registered_name(n) + "/real_time"; }
std::optional<TableCaseName> parse_table_case(std::string_view name) {
  const auto parts = split(name);
  if (parts.size() != 4 || parts[3] != "real_time" || parts[0].empty() || parts[1].empty() ||
      parts[2].empty()) {
    return std::nullopt;
  }
  return TableCaseName{std::string(parts[0]) + "/" + std::string(parts[1]), std::string(parts[2])};
}

namespace {
constexpr std::string_view kConversionPrefix = "conversion_";
}  // namespace

std::string registered_name(const ConversionCaseName& n) { return fmt::format("{}/{}", n.conversion, n.shape); }
std::string full_name(const ConversionCaseName& n) {
  return fmt::format("{}/real_time/threads:{}", registered_name(n), n.threads);
}
std::optional<ConversionCaseName> parse_conversion_case(std::string_view name) {
  const auto parts = split(name);
  if (parts.size() != 5 || !parts[0].starts_with(kConversionPrefix) || parts[0].size() == kConversionPrefix.size() ||
      parts[1].empty() || parts[2].empty() || parts[3] != "real_time") {
    return std::nullopt;
  }
  const auto threads = keyed_int(parts[4], "threads");
  if (!threads || *threads < 1) return std::nullopt;
  return ConversionCaseName{std::string(parts[0]) + "/" + std::string(parts[1]), std::string(parts[2]),
                            static_cast<int>(*threads)};
}
std::string kernel_of_conversion(std::string_view conversion) {
  return conversion.starts_with(kConversionPrefix)
             ? "kernel_" + std::string(conversion.substr(kConversionPrefix.size()))
             : std::string(conversion);
}


std::string registered_name(const RotationCaseName& n) {
  return fmt::format("{}/{}/{}", n.rotation, n.shape, n.layout);
}
std::string full_name(const RotationCaseName& n) {
  return fmt::format("{}/real_time/threads:{}", registered_name(n), n.threads);
}
std::optional<RotationCaseName> parse_rotation_case(std::string_view name) {
  const auto parts = split(name);
  if (parts.size() != 6 || !is_rotation(parts[0]) || parts[1].empty() || parts[2].empty() || !is_layout(parts[3]) ||
      parts[4] != "real_time") {
    return std::nullopt;
  }
  const auto threads = keyed_int(parts[5], "threads");
  if (!threads || *threads < 1) return std::nullopt;
  return RotationCaseName{std::string(parts[0]) + "/" + std::string(parts[1]), std::string(parts[2]),
                          std::string(parts[3]), static_cast<int>(*threads)};
}
std::string kernel_of_rotation(std::string_view rotation) {
  return rotation.starts_with("rotation") ? "kernel" + std::string(rotation.substr(8)) : std::string(rotation);
}

std::string registered_name(const FusedCacheCaseName& n) {
  return fmt::format("{}/{}/{}_{}", n.impl, n.shape, n.layout, n.storage);
}
std::string full_name(const FusedCacheCaseName& n) { return registered_name(n) + "/real_time"; }
std::optional<FusedCacheCaseName> parse_fused_cache_case(std::string_view name) {
  const auto parts = split(name);
  // The own kernels (fused_cache/<level>) and the peers (plugin/<name>, python/<name>) beside them.
  const bool subject = parts.size() == 5 && (parts[0].starts_with("fused_cache") || parts[0] == "plugin" ||
                                             parts[0] == "python");
  if (!subject || parts[1].empty() || parts[2].empty() ||
      parts[4] != "real_time") {
    return std::nullopt;
  }
  const auto underscore = parts[3].find('_');
  const std::string_view layout = parts[3].substr(0, underscore);
  if (underscore == std::string_view::npos || (layout != "nhd" && layout != "hnd" && layout != "mla")) return std::nullopt;
  return FusedCacheCaseName{std::string(parts[0]) + "/" + std::string(parts[1]), std::string(parts[2]),
                            std::string(layout), std::string(parts[3].substr(underscore + 1))};
}

std::string registered_name(const QkNormRopeCaseName& n) {
  return fmt::format("{}/{}/{}_{}", n.impl, n.shape, n.angles, n.storage);
}
std::string full_name(const QkNormRopeCaseName& n) { return registered_name(n) + "/real_time"; }
std::optional<QkNormRopeCaseName> parse_qk_norm_rope_case(std::string_view name) {
  const auto parts = split(name);
  // The own kernels (qk_norm_rope/<level>) and the peers (plugin/<name>, python/<name>) beside them.
  const bool subject = parts.size() == 5 && (parts[0] == "qk_norm_rope" || parts[0] == "plugin" || parts[0] == "python");
  if (!subject || parts[1].empty() || parts[2].empty() || parts[4] != "real_time") {
    return std::nullopt;
  }
  const auto underscore = parts[3].find('_');
  const std::string_view angles = parts[3].substr(0, underscore);
  if (underscore == std::string_view::npos || (angles != "cache" && angles != "spec")) return std::nullopt;
  return QkNormRopeCaseName{std::string(parts[0]) + "/" + std::string(parts[1]), std::string(parts[2]),
                            std::string(angles), std::string(parts[3].substr(underscore + 1))};
}

}  // namespace ropecheck::bench
