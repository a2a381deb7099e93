// Kernels wrong only on a path small single-threaded calls never take (issue: a row count real
// prefill reaches, a thread split with a short last chunk, wide heads, long contexts). Each wraps
// the real scalar kernel (kernel/scalar) and breaks one switch in front of it, as a real kernel's
// dispatch would: every other call is the kernel's, bit for bit.
//   mutant/kernel_split_floor_chunks    the tokens split over threads by floor(tokens / threads):
//                                       the last tokens % threads are never rotated
//   mutant/kernel_split_remainder_one   the same floor split, the last chunk one token longer when
//                                       any are left: right up to 2 threads (a remainder is 0 or
//                                       1), wrong where tokens % threads >= 2, from 3 threads on
//   mutant/kernel_prefill_tile_positions  calls of >= 16384 rows (tokens x q heads, a prefill) take
//                                       a tiled path that forms each 64-token tile's angles from
//                                       its first position and the offset: packed sequences (a
//                                       position restart inside a tile) rotate wrong
//   mutant/kernel_wide_head_halves      heads wider than 128 rotated as two heads of half the
//                                       width: every pair past the first gets the narrow
//                                       head's frequencies
//   mutant/kernel_long_context_rows     a cos/sin row cache of 65536 positions, indexed modulo its
//                                       size: positions past 65535 get another position's row
#include <memory>
#include <vector>

#include "impls/rope_impl.h"

namespace ropecheck {

std::unique_ptr<RopeImpl> make_kernel_scalar();

namespace {

class KernelPathMutant : public RopeImpl {
 public:
  KernelPathMutant(std::string_view id, std::string_view summary)
      : id_(id), summary_(summary), kernel_(make_kernel_scalar()) {}
  std::string_view id() const override { return id_; }
  std::string_view summary() const override { return summary_; }
  RopeCapabilities capabilities() const override {
    RopeCapabilities caps = kernel_->capabilities();
    caps.axis_modes = {AxisMode::none};  // each path bug is a 1D kernel's
    return caps;
  }

 protected:
  void rotate_qk(const RopeSpec& spec, HeadTensor q, HeadTensor k,
                 PositionIds positions) const override {
    kernel_->apply(spec, q, k, positions);
  }
  const RopeImpl& kernel() const { return *kernel_; }

 private:
  std::string_view id_, summary_;
  std::unique_ptr<RopeImpl> kernel_;
};

// The token range [begin, end) of x and its positions, as a call of its own.
HeadTensor tokens_of(const HeadTensor& x, std::int64_t begin, std::int64_t end) {
  const auto row = static_cast<std::size_t>(x.heads * x.head_dim);
  return {x.data.subspan(static_cast<std::size_t>(begin) * row, static_cast<std::size_t>(end - begin) * row),
          end - begin, x.heads, x.head_dim};
}

class SplitFloorChunks final : public KernelPathMutant {
 public:
  SplitFloorChunks()
      : KernelPathMutant("mutant/kernel_split_floor_chunks",
                         "tokens split over threads by floor(tokens / threads): the remainder is "
                         "never rotated") {}

 protected:
  void rotate_qk_threads(const RopeSpec& spec, HeadTensor q, HeadTensor k, PositionIds positions,
                         int threads) const override {
    const std::int64_t share = q.tokens / threads;  // BUG: floor; ceil covers every token
    for (int j = 0; j < threads; ++j) {
      if (share == 0) break;
      const std::int64_t begin = j * share, end = begin + share;
      kernel().apply(spec, tokens_of(q, begin, end), tokens_of(k, begin, end),
                     positions.subspan(static_cast<std::size_t>(begin), static_cast<std::size_t>(share)));
    }
  }
};

class SplitRemainderOne final : public KernelPathMutant {
 public:
  SplitRemainderOne()
      : KernelPathMutant("mutant/kernel_split_remainder_one",
                         "tokens split by floor(tokens / threads), the last chunk one token longer "
                         "when any are left: wrong only from 3 threads on") {}

 protected:
  void rotate_qk_threads(const RopeSpec& spec, HeadTensor q, HeadTensor k, PositionIds positions,
                         int threads) const override {
    const std::int64_t share = q.tokens / threads;
    for (int j = 0; j < threads; ++j) {
      const std::int64_t begin = j * share;
      std::int64_t end = begin + share;
      if (j == threads - 1 && q.tokens % threads != 0) ++end;  // BUG: "the remainder is one token"
      if (end == begin) continue;
      kernel().apply(spec, tokens_of(q, begin, end), tokens_of(k, begin, end),
                     positions.subspan(static_cast<std::size_t>(begin), static_cast<std::size_t>(end - begin)));
    }
  }
};

class PrefillTilePositions final : public KernelPathMutant {
 public:
  PrefillTilePositions()
      : KernelPathMutant("mutant/kernel_prefill_tile_positions",
                         "prefill calls (>= 16384 rows) in 64-token tiles whose angles come from "
                         "each tile's first position: wrong where a sequence restarts in a tile") {}

 protected:
  void rotate_qk(const RopeSpec& spec, HeadTensor q, HeadTensor k,
                 PositionIds positions) const override {
    if (q.tokens * q.heads < 16384) return kernel().apply(spec, q, k, positions);
    std::vector<std::int64_t> tiled(positions.begin(), positions.end());
    for (std::size_t t = 0; t < tiled.size(); ++t) {
      const std::size_t first = t / 64 * 64;
      tiled[t] = positions[first] + static_cast<std::int64_t>(t - first);  // BUG: assumes contiguous
    }
    kernel().apply(spec, q, k, tiled);
  }
};

class WideHeadHalves final : public KernelPathMutant {
 public:
  WideHeadHalves()
      : KernelPathMutant("mutant/kernel_wide_head_halves",
                         "heads wider than 128 rotated as two heads of half the width: the narrow "
                         "head's frequencies") {}

 protected:
  void rotate_qk(const RopeSpec& spec, HeadTensor q, HeadTensor k,
                 PositionIds positions) const override {
    const int half = spec.head_dim / 2;
    if (spec.head_dim <= 128 || spec.rotary_dim != spec.head_dim || half % 2 != 0) {
      return kernel().apply(spec, q, k, positions);
    }
    RopeSpec narrow = spec;  // BUG: a 128-wide kernel's spec for each half
    narrow.head_dim = narrow.rotary_dim = half;
    if (narrow.scaling.kind == ScalingKind::longrope) {
      narrow.scaling.short_factor.resize(static_cast<std::size_t>(half / 2));
      narrow.scaling.long_factor.resize(static_cast<std::size_t>(half / 2));
    }
    const auto halves = [&](HeadTensor x) { return HeadTensor{x.data, x.tokens, 2 * x.heads, half}; };
    kernel().apply(narrow, halves(q), halves(k), positions);
  }
};

class LongContextRows final : public KernelPathMutant {
 public:
  LongContextRows()
      : KernelPathMutant("mutant/kernel_long_context_rows",
                         "a cos/sin row cache of 65536 positions indexed modulo its size: wrong "
                         "past position 65535") {}

 protected:
  void rotate_qk(const RopeSpec& spec, HeadTensor q, HeadTensor k,
                 PositionIds positions) const override {
    std::vector<std::int64_t> rows(positions.begin(), positions.end());
    for (std::int64_t& m : rows) {
      if (m > 65535) m &= 0xffff;  // BUG: the cache's row, not the position's
    }
    kernel().apply(spec, q, k, rows);
  }
};

}  // namespace

std::unique_ptr<RopeImpl> make_mutant_kernel_split_floor_chunks() {
  return std::make_unique<SplitFloorChunks>();
}
std::unique_ptr<RopeImpl> make_mutant_kernel_split_remainder_one() {
  return std::make_unique<SplitRemainderOne>();
}
std::unique_ptr<RopeImpl> make_mutant_kernel_prefill_tile_positions() {
  return std::make_unique<PrefillTilePositions>();
}
std::unique_ptr<RopeImpl> make_mutant_kernel_wide_head_halves() {
  return std::make_unique<WideHeadHalves>();
}
std::unique_ptr<RopeImpl> make_mutant_kernel_long_context_rows() {
  return std::make_unique<LongContextRows>();
}

}  // namespace ropecheck
