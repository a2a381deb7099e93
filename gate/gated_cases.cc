// fastest_kernels() and the filters of the default gate rule (gated_cases.h).
#include "gate/gated_cases.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "bench/format/case_name.h"
#include "bench/format/shapes.h"
#include "core/isa.h"
#include "gate/cache_boundary.h"
#include "gate/counted_runner.h"

namespace ropecheck {
namespace {

std::string shapes_alternation() {
  std::string shapes;
  for (const auto shape : kGatedShapes) shapes += (shapes.empty() ? "" : "|") + std::string(shape);
  return shapes;
}

}  // namespace

namespace {

template <std::size_t N>
std::vector<std::string> fastest_of(const std::vector<std::string>& available, const std::string_view (&levels)[N]) {
  std::vector<std::string> kernels;
  for (const auto family : kGatedKernelFamilies) {
    for (const auto level : levels) {
      const std::string id = fmt::format("{}/{}", family, level);
      if (std::find(available.begin(), available.end(), id) != available.end()) {
        kernels.push_back(id);
        break;
      }
    }
  }
  return kernels;
}

}  // namespace

std::vector<std::string> fastest_kernels(const std::vector<std::string>& available) {
  return fastest_of(available, kKernelLevelsFastestFirst);
}

std::vector<std::string> fastest_counted_kernels(const std::vector<std::string>& available) {
  return fastest_of(available, kCountedLevelsFastestFirst);
}

std::string counted_level(const std::vector<std::string>& counted_kernels) {
  for (const auto level : kCountedLevelsFastestFirst) {
    for (const auto& id : counted_kernels) {
      if (id.ends_with(fmt::format("/{}", level))) return std::string(level);
    }
  }
  return "";
}

std::string counted_level_note(const std::string& level) {
  for (const auto& [isa, name] : {std::pair{Isa::avx512, "AVX-512"}, std::pair{Isa::sve, "SVE"}}) {
    if (cpu_supports(isa)) {
      return fmt::format("this CPU has {}, which Valgrind does not run: kernels counted at {}", name,
                         level.empty() ? "no level" : level);
    }
  }
  return "";
}

CaseRoute route_case(const std::string& case_name) {
  const auto bytes = working_set_bytes(case_name);
  if (!bytes) return {false, "working set unknown: real time"};
  if (*bytes <= kSimulatedLastLevelBytes) {
    return {true, fmt::format("counted: working set {} fits the simulated {} last level",
                              byte_size_text(*bytes), byte_size_text(kSimulatedLastLevelBytes))};
  }
  return {false, fmt::format("real time: working set {} exceeds the simulated {} last level, and "
                             "callgrind models no memory bandwidth or prefetcher",
                             byte_size_text(*bytes), byte_size_text(kSimulatedLastLevelBytes))};
}

// The forward's cases only: what follows the layout in its names (real_time, or a plugin's
// threads:N), where the backward's have "backward/". The own kernels' backward is the forward's
// code on negated frequencies (impls/kernels/kernel_rope.cc): gating it too would double the
// gate's time to measure the same code twice.
constexpr std::string_view kForwardOnly = "(real_time|threads:)";

std::string default_gate_filter(const std::vector<std::string>& kernels) {
  // Ids and names hold only [a-z0-9_/:], none of them special in a regex.
  std::string filter;
  if (!kernels.empty()) {
    std::string ids;
    for (const auto& id : kernels) ids += (ids.empty() ? "" : "|") + id;
    filter = fmt::format("^({})/({})/{}/{}|", ids, shapes_alternation(), kGatedLayout, kForwardOnly);
  }
  const bench::AttentionCaseName attention{bench::kAttentionHeads, kGatedAttentionTokens,
                                           kGatedAttentionHeadDim, 1};
  return filter + fmt::format("^{}/", bench::registered_name(attention));
}

std::string timed_half_filter(const std::vector<std::string>& kernels) {
  std::string shapes;
  for (const auto shape : kGatedShapes) {
    // Routed by the smallest element (16 bits): a shape timed at that size is timed at every size.
    const auto name = fmt::format("kernel_bf16/scalar/{}/{}/real_time/threads:1", shape, kGatedLayout);
    if (!route_case(name).counted) shapes += (shapes.empty() ? "" : "|") + std::string(shape);
  }
  if (shapes.empty() || kernels.empty()) return "";
  std::string ids;
  for (const auto& id : kernels) ids += (ids.empty() ? "" : "|") + id;
  return fmt::format("^({})/({})/{}/{}", ids, shapes, kGatedLayout, kForwardOnly);
}

std::string outside_gate_filter(std::string_view kind) {
  return fmt::format("^{}/[^/]+/({})/{}/{}", kind, shapes_alternation(), kGatedLayout, kForwardOnly);
}

}  // namespace ropecheck
