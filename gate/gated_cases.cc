// fastest_kernels() and the filters of the default gate rule (gated_cases.h).
#include "gate/gated_cases.h"

#include <fmt/format.h>

#include <algorithm>

#include "bench/format/case_name.h"
#include "bench/format/shapes.h"

namespace ropecheck {
namespace {

std::string shapes_alternation() {
  std::string shapes;
  for (const auto shape : kGatedShapes) shapes += (shapes.empty() ? "" : "|") + std::string(shape);
  return shapes;
}

}  // namespace

std::vector<std::string> fastest_kernels(const std::vector<std::string>& available) {
  std::vector<std::string> kernels;
  for (const auto family : kGatedKernelFamilies) {
    for (const auto level : kKernelLevelsFastestFirst) {
      const std::string id = fmt::format("{}/{}", family, level);
      if (std::find(available.begin(), available.end(), id) != available.end()) {
        kernels.push_back(id);
        break;
      }
    }
  }
  return kernels;
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

std::string outside_gate_filter(std::string_view kind) {
  return fmt::format("^{}/[^/]+/({})/{}/{}", kind, shapes_alternation(), kGatedLayout, kForwardOnly);
}

}  // namespace ropecheck
