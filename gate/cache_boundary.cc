// read_cpu_caches(), working_set_bytes() and cache_boundary_flag() (cache_boundary.h).
#include "gate/cache_boundary.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <fstream>

#include "bench/format/case_name.h"
#include "bench/format/shapes.h"

namespace ropecheck {
namespace {

std::string first_line(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::string line;
  std::getline(in, line);
  return line;
}

// sysfs writes sizes as "1024K" (or "32M").
std::optional<std::uint64_t> parse_size(const std::string& text) {
  std::uint64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || value == 0) return std::nullopt;
  const std::string_view unit(end, static_cast<std::size_t>(text.data() + text.size() - end));
  if (unit.empty()) return value;
  if (unit == "K") return value << 10;
  if (unit == "M") return value << 20;
  if (unit == "G") return value << 30;
  return std::nullopt;
}

std::uint64_t element_bytes(std::string_view implementation) {
  return implementation.starts_with("kernel_bf16/") || implementation.starts_with("kernel_fp16/")
             ? 2
             : 4;
}

// q and k of a RoPE shape, in elements; empty for a shape bench does not know.
std::optional<std::uint64_t> qk_elements(std::string_view shape_name) {
  const bench::RopeShape* shape = bench::find_rope_shape(shape_name);
  if (shape == nullptr) return std::nullopt;
  return static_cast<std::uint64_t>(shape->tokens * (shape->q_heads + shape->k_heads) * shape->head_dim);
}

}  // namespace

std::vector<CacheLevel> read_cpu_caches(const std::filesystem::path& cache_dir) {
  std::vector<CacheLevel> caches;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(cache_dir, error)) {
    if (!entry.path().filename().string().starts_with("index")) continue;
    const std::string level = first_line(entry.path() / "level");
    const std::string type = first_line(entry.path() / "type");
    const auto size = parse_size(first_line(entry.path() / "size"));
    if (!size || (type != "Unified" && type != "Data") || level.empty() || level < "2") continue;
    caches.push_back({std::stoi(level), *size});
  }
  std::sort(caches.begin(), caches.end(),
            [](const CacheLevel& a, const CacheLevel& b) { return a.level < b.level; });
  return caches;
}

std::optional<std::uint64_t> working_set_bytes(std::string_view case_name) {
  if (const auto rope = bench::parse_rope_case(case_name)) {
    const auto elements = qk_elements(rope->shape);
    if (!elements) return std::nullopt;
    return *elements * element_bytes(rope->impl);
  }
  if (const auto conversion = bench::parse_conversion_case(case_name)) {  // its kernel's q and k
    const auto elements = qk_elements(conversion->shape);
    if (!elements) return std::nullopt;
    return *elements * element_bytes(bench::kernel_of_conversion(conversion->conversion));
  }
  if (const auto rotation = bench::parse_rotation_case(case_name)) {  // its kernel's q and k
    const auto elements = qk_elements(rotation->shape);
    if (!elements) return std::nullopt;
    return *elements * element_bytes(bench::kernel_of_rotation(rotation->rotation));
  }
  if (const auto attention = bench::parse_attention_case(case_name)) {
    // q and out for every head, k and v for every kv head
    return 2 * static_cast<std::uint64_t>(attention->tokens) *
           static_cast<std::uint64_t>(attention->heads + attention->kv()) *
           static_cast<std::uint64_t>(attention->head_dim) * sizeof(float);
  }
  return std::nullopt;
}

std::string byte_size_text(std::uint64_t bytes) {
  if (bytes >= (std::uint64_t{1} << 20)) return fmt::format("{:.1f} MiB", static_cast<double>(bytes) / (1 << 20));
  return fmt::format("{:.0f} KiB", static_cast<double>(bytes) / (1 << 10));
}

std::string cache_boundary_flag(std::uint64_t working_set, const std::vector<CacheLevel>& caches) {
  const auto w = static_cast<double>(working_set);
  for (const CacheLevel& c : caches) {
    const auto size = static_cast<double>(c.bytes);
    if (w > size / kCacheBoundaryFactor && w < size * kCacheBoundaryFactor) {
      return fmt::format("working set {} within {}x of the {} L{}", byte_size_text(working_set),
                         kCacheBoundaryFactor, byte_size_text(c.bytes), c.level);
    }
  }
  return "";
}

}  // namespace ropecheck
