// Scratch floats kept per thread (kept_scratch.h).
#include "impls/attention/kept_scratch.h"

#include <array>
#include <memory>

namespace ropecheck {

std::span<float> kept_scratch(ScratchUse use, std::size_t count) {
  struct Buffer {
    std::unique_ptr<float[]> floats;  // new float[]: no zero fill, unlike a vector's resize
    std::size_t size = 0;
  };
  thread_local std::array<Buffer, 3> kept;
  Buffer& b = kept[static_cast<std::size_t>(use)];
  if (b.size < count) {
    b.floats.reset();  // the old one first: never both at once
    b.floats.reset(new float[count]);
    b.size = count;
  }
  return {b.floats.get(), count};
}

}  // namespace ropecheck
