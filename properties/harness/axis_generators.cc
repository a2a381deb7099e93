// Multi-axis specs and positions (axis_generators.h).
#include "properties/harness/axis_generators.h"

#include <algorithm>

#include "properties/harness/generators.h"

namespace ropecheck {

namespace {

// Sections of `pairs` for a mode, shrinking towards everything on the first axis.
rc::Gen<PositionAxes> sections_of(AxisMode mode, int pairs) {
  return rc::gen::exec([=] {
    PositionAxes axes{mode, {}};
    if (mode == AxisMode::vision) {
      const bool halves = *rc::gen::inRange(0, 3).as("vision split (0, 1: halves)") < 2;
      const int row = halves ? pairs / 2 : *rc::gen::inRange(0, pairs + 1).as("row pairs");
      axes.sections = {row, pairs - row, 0};
      return axes;
    }
    const int model = *rc::gen::inRange(0, 4).as("sections (0: any split, 1: Qwen2-VL's, 2: Qwen3-VL's)");
    if (model == 1 || model == 2) {
      // Qwen2-VL [16, 24, 24] and Qwen3-VL [24, 20, 20] of 64 pairs, scaled; the rest to t.
      const int h = model == 1 ? pairs * 24 / 64 : pairs * 20 / 64;
      axes.sections = {pairs - 2 * h, h, h};
      return axes;
    }
    int a = *rc::gen::inRange(0, pairs + 1).as("first section end");
    int b = *rc::gen::inRange(0, pairs + 1).as("second section end");
    if (a > b) std::swap(a, b);
    axes.sections = {a, b - a, pairs - b};
    return axes;
  });
}

}  // namespace

rc::Gen<PositionAxes> position_axes(const RopeCapabilities& caps, int rotary_dim, bool scaled) {
  std::vector<AxisMode> modes;  // the multi-axis modes it implements and this spec can take
  for (const AxisMode mode : caps.axis_modes) {
    if (mode == AxisMode::none || (mode == AxisMode::vision && (scaled || rotary_dim % 4 != 0))) continue;
    modes.push_back(mode);
  }
  if (modes.empty()) return rc::gen::just(PositionAxes{});
  // Capabilities without one axis (a multi-axis property's): a multi-axis mode every time.
  const auto mode = caps.implements(AxisMode::none)
                        ? rc::gen::weightedOneOf<AxisMode>(
                              {{1, rc::gen::just(AxisMode::none)}, {1, rc::gen::elementOf(modes)}})
                        : rc::gen::elementOf(modes);
  return rc::gen::mapcat(mode, [=](AxisMode m) {
    if (m == AxisMode::none) return rc::gen::just(PositionAxes{});
    return sections_of(m, rotary_dim / 2);
  });
}

std::vector<std::int64_t> grid_positions(int axes, std::size_t tokens, std::int64_t width,
                                         std::int64_t offset) {
  std::vector<std::int64_t> p(tokens * static_cast<std::size_t>(axes));
  for (std::size_t n = 0; n < tokens; ++n) {
    const auto row = static_cast<std::int64_t>(n) / width, column = static_cast<std::int64_t>(n) % width;
    std::int64_t* at = p.data() + n * static_cast<std::size_t>(axes);
    if (axes == 2) {
      at[0] = offset + row;
      at[1] = offset + column;
    } else {
      at[0] = offset;
      at[1] = offset + row;
      at[2] = offset + column;
    }
  }
  return p;
}

rc::Gen<std::vector<std::int64_t>> token_positions(const RopeSpec& spec, std::size_t tokens,
                                                   std::int64_t limit) {
  const int axes = axis_count(spec);
  if (axes == 1) return position_ids(tokens, limit);
  using Positions = std::vector<std::int64_t>;
  const auto n = static_cast<std::int64_t>(tokens);
  // Text: a 1D sequence, every axis at its position.
  auto text = rc::gen::map(position_ids(tokens, limit), [axes](const Positions& one) {
    Positions p;
    p.reserve(one.size() * static_cast<std::size_t>(axes));
    for (const std::int64_t m : one) p.insert(p.end(), static_cast<std::size_t>(axes), m);
    return p;
  });
  // An image: a grid of patches from an offset (rows and columns stay within the limit).
  auto image = rc::gen::apply(
      [=](std::int64_t width, std::int64_t offset) { return grid_positions(axes, tokens, width, offset); },
      rc::gen::inRange<std::int64_t>(1, n + 1),
      rc::gen::inRange<std::int64_t>(0, std::max<std::int64_t>(limit - n, 0) + 1));
  // Each axis its own values (repeats, gaps, negatives).
  auto independent = rc::gen::container<Positions>(tokens * static_cast<std::size_t>(axes),
                                                   signed_position(limit));
  // Text, then an image continuing from its last position (Qwen2-VL's get_rope_index).
  auto text_then_image = rc::gen::apply(
      [=](std::int64_t text_tokens, std::int64_t width) {
        const auto first = std::min(text_tokens, n);
        Positions p;
        for (std::int64_t t = 0; t < first; ++t) p.insert(p.end(), static_cast<std::size_t>(axes), t);
        const auto grid = grid_positions(axes, static_cast<std::size_t>(n - first), width, first);
        p.insert(p.end(), grid.begin(), grid.end());
        return p;
      },
      rc::gen::inRange<std::int64_t>(0, n + 1), rc::gen::inRange<std::int64_t>(1, n + 1));
  if (limit < n) return text;  // too little room for the grids' runs
  return rc::gen::weightedOneOf<Positions>(
      {{1, text}, {2, image}, {2, independent}, {1, text_then_image}});
}

RopeCapabilities scalable(RopeCapabilities caps) {
  std::erase(caps.axis_modes, AxisMode::vision);
  return caps;
}

void showValue(const PositionAxes& axes, std::ostream& os) {
  os << (axes.mode == AxisMode::none ? "axes=none" : describe(axes));
}

}  // namespace ropecheck
