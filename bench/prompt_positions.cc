// Bench positions (prompt_positions.h).
#include "bench/prompt_positions.h"

#include <algorithm>

namespace ropecheck::bench {

std::vector<std::int64_t> prompt_positions(const ModelShape& shape) {
  const int axes = axis_count(shape.axes);
  std::vector<std::int64_t> p;
  p.reserve(static_cast<std::size_t>(shape.tokens * axes));
  const auto text = [&](std::int64_t m) { p.insert(p.end(), static_cast<std::size_t>(axes), m); };
  if (axes == 1) {
    for (std::int64_t t = 0; t < shape.tokens; ++t) text(shape.first_position + t);
    return p;
  }
  constexpr std::int64_t kRow = 32;  // patches to a row
  const std::int64_t before = axes == 2 ? 0 : shape.tokens / 8;
  const std::int64_t patches = axes == 2 ? shape.tokens : shape.tokens - 2 * before;
  for (std::int64_t t = 0; t < before; ++t) text(t);
  std::int64_t next = before;
  for (std::int64_t n = 0; n < patches; ++n) {
    const std::int64_t row = before + n / kRow, column = before + n % kRow;
    if (axes == 2) {
      p.insert(p.end(), {row, column});
    } else {
      p.insert(p.end(), {before, row, column});
    }
    next = std::max({next, row + 1, column + 1});
  }
  while (static_cast<std::int64_t>(p.size()) < shape.tokens * axes) text(next++);
  return p;
}

}  // namespace ropecheck::bench
