// Views of the data every implementation works on: row-major contiguous
// [tokens][heads][head_dim] fp32, and one int64 position per token.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace ropecheck {

struct HeadTensor {
  std::span<float> data;
  std::int64_t tokens = 0;
  std::int64_t heads = 0;
  std::int64_t head_dim = 0;

  // The head_dim features of one (token, head).
  std::span<float> row(std::int64_t token, std::int64_t head) const {
    const auto offset = static_cast<std::size_t>((token * heads + head) * head_dim);
    return data.subspan(offset, static_cast<std::size_t>(head_dim));
  }
};

using PositionIds = std::span<const std::int64_t>;

}  // namespace ropecheck
