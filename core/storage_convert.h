// Whole tensors to and from their 16-bit storage: the same bits as storage.h's per-value
// functions (the readable reference), written without branches so that they vectorise. A
// model shape's case converts tens of millions of values per call (a 16-bit implementation's
// float API narrows q and k, calls, widens them back), where the per-value functions' branches
// (normal, subnormal, NaN) mispredict on values drawn across every decade.
#pragma once

#include <cstdint>
#include <span>

#include "core/storage.h"

namespace ropecheck {

// to[i] = fp16_from_float(from[i]) / float_from_fp16(...), bf16 the same; sizes must match.
void narrow_to_fp16(std::span<const float> from, std::span<Fp16> to);
void widen_from_fp16(std::span<const Fp16> from, std::span<float> to);
void narrow_to_bf16(std::span<const float> from, std::span<std::uint16_t> to);
void widen_from_bf16(std::span<const std::uint16_t> from, std::span<float> to);

// x[i] = round_to_storage(x[i], storage) for every element (fp32: nothing to do).
void round_to_storage(std::span<float> x, StorageType storage);

}  // namespace ropecheck
