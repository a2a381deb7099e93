// Views of the data every implementation works on: row-major contiguous
// [tokens][heads][head_dim] elements (fp32, or bf16/fp16 bit patterns), and one int64 position per
// token.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "core/storage.h"

namespace ropecheck {

template <typename Element>
struct HeadTensorOf {
  std::span<Element> data;
  std::int64_t tokens = 0;
  std::int64_t heads = 0;
  std::int64_t head_dim = 0;

  // The head_dim features of one (token, head).
  std::span<Element> row(std::int64_t token, std::int64_t head) const {
    const auto offset = static_cast<std::size_t>((token * heads + head) * head_dim);
    return data.subspan(offset, static_cast<std::size_t>(head_dim));
  }
};

using HeadTensor = HeadTensorOf<float>;
using Bf16HeadTensor = HeadTensorOf<std::uint16_t>;  // bf16 bit patterns (storage.h)
using Fp16HeadTensor = HeadTensorOf<Fp16>;           // fp16 bit patterns (storage.h)

using PositionIds = std::span<const std::int64_t>;

}  // namespace ropecheck
