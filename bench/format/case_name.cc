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
  if (parts.size() != 6 || !is_layout(parts[3])) return std::nullopt;
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
  return fmt::format("{}/causal_{}heads/tokens:{}/head_dim:{}/blas_threads:{}",
                     kAttentionForms[static_cast<int>(n.rope)], n.heads, n.tokens, n.head_dim,
                     n.blas_threads);
}
std::string full_name(const AttentionCaseName& n) { return registered_name(n) + "/real_time"; }
std::optional<AttentionCaseName> parse_attention_case(std::string_view name) {
  const auto parts = split(name);
  if (parts.size() != 6 || parts[5] != "real_time") return std::nullopt;
  const auto form = std::find(std::begin(kAttentionForms), std::end(kAttentionForms), parts[0]);
  if (form == std::end(kAttentionForms)) return std::nullopt;
  const auto rope = static_cast<AttentionRope>(form - std::begin(kAttentionForms));
  constexpr std::string_view kPrefix = "causal_", kSuffix = "heads";
  const std::string_view heads_part = parts[1];
  if (!heads_part.starts_with(kPrefix) || !heads_part.ends_with(kSuffix)) return std::nullopt;
  long heads = 0;
  const auto digits = heads_part.substr(kPrefix.size(), heads_part.size() - kPrefix.size() - kSuffix.size());
  const auto [stop, error] = std::from_chars(digits.data(), digits.data() + digits.size(), heads);
  if (error != std::errc() || stop != digits.data() + digits.size()) return std::nullopt;
  const auto tokens = keyed_int(parts[2], "tokens");
  const auto head_dim = keyed_int(parts[3], "head_dim");
  const auto threads = keyed_int(parts[4], "blas_threads");
  if (!tokens || !head_dim || !threads) return std::nullopt;
  return AttentionCaseName{heads, *tokens, static_cast<int>(*head_dim), static_cast<int>(*threads), rope};
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

}  // namespace ropecheck::bench
