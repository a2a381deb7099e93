// The fast kernel's cos/sin table rows kept across calls (rope_kernel.h's TableRowCache): a block
// of kAnchorEvery positions formed on first use by the level's own step 1, read by every later
// token at those positions. One per thread, for the spec and level it last ran (kernel_rope.cc),
// so no locks.
// Napkin math: a row is 2 * rotary_dim floats (1 KiB at Llama 7B's 128) and a block of 32 costs
// one exact SLEEF sincos of every pair and 31 steps of a few FMAs a pair; a decode step of a
// 32-layer model reads its row 32 times.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <unordered_map>

#include "impls/kernels/rope_kernel.h"

namespace ropecheck {

class TableRows {
 public:
  // At most this many bytes of rows per thread; positions past them are formed per call, the
  // same way (rope_kernel.h). 64 MiB holds 64 Ki positions of Llama 7B's interleaved rows (vLLM's
  // cos_sin_cache for a 128 Ki context is as large: it keeps cos and sin once where the
  // interleaved row duplicates them).
  static constexpr std::size_t kMaxBytes = std::size_t{64} << 20;

  // The bytes one position's row takes: the table's 2 * rotary_dim floats and 16 of slack (a
  // masked load or store of a level's last vector stays inside the row), to a cache line.
  static constexpr std::size_t row_bytes(int rotary_dim) {
    return (2 * static_cast<std::size_t>(rotary_dim) + 16 + 15) / 16 * 16 * sizeof(float);
  }
  // Drops every row; rows for rotary_dim from now on.
  void reset(int rotary_dim);
  // The kernel's view of these rows (valid while this object lives and is not reset).
  kernels::TableRowCache cache();
  // The rows of the block starting at `first` (a multiple of kAnchorEvery) and its ready flag;
  // nullptr when kMaxBytes would be passed.
  float* block(std::int64_t first, bool** ready);

 private:
  struct AlignedDelete {
    void operator()(float* p) const;
  };
  struct Block {
    std::unique_ptr<float[], AlignedDelete> rows;
    bool ready = false;
  };

  std::size_t stride_ = 0;  // floats from one row to the next
  std::size_t bytes_ = 0;
  std::unordered_map<std::int64_t, Block> blocks_;  // by first position
  std::int64_t last_first_ = 0;
  Block* last_ = nullptr;  // the previous lookup's (decode and prefill ask for it again)
};

}  // namespace ropecheck
