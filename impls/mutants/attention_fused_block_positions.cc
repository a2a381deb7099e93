// mutant/attention_fused_block_positions: RoPE fused into attention's packing, with each packed
// block of query rows rotated by the positions of the first rows of the sequence instead of its
// own (an offset dropped when the packing loop was tiled). Keys are right. Every position shifted
// by c shifts the wrong ones alike, so attention stays shift-invariant; within the first block it
// is right. Only a comparison with attention over correctly rotated q and k, past the first
// block, shows it.
#include <memory>

#include "impls/attention/attention_impl.h"

namespace ropecheck {
namespace {

PositionIds positions_from_the_start(PositionIds positions, std::int64_t, std::int64_t rows) {
  return positions.first(static_cast<std::size_t>(rows));  // BUG: the block's offset dropped
}

class FusedBlockPositions final : public AttentionImpl {
 public:
  std::string_view id() const override { return "mutant/attention_fused_block_positions"; }
  std::string_view summary() const override {
    return "fused RoPE attention rotating every query block by the first rows' positions";
  }

 protected:
  void attend(const AttentionShape& shape, std::span<const float> q, std::span<const float> k,
              std::span<const float> v, std::span<float> out, int threads) const override {
    attention_blas(shape, q, k, v, out, {.block_rows = 7, .threads = threads});
  }
  bool fuses_rope() const override { return true; }
  void attend_with_rope(const AttentionShape& shape, const RopeSpec& rope, PositionIds positions,
                        std::span<const float> q, std::span<const float> k,
                        std::span<const float> v, std::span<float> out, int threads) const override {
    attention_blas_rope_fused(shape, rope, positions, q, k, v, out, {.block_rows = 7, .threads = threads},
                              positions_from_the_start);
  }
};

}  // namespace

std::unique_ptr<AttentionImpl> make_mutant_attention_fused_block_positions() {
  return std::make_unique<FusedBlockPositions>();
}

}  // namespace ropecheck
