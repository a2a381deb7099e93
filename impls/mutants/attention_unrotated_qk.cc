// mutant/attention_unrotated_qk: seed 001's attention. RoPE is computed, but an `else` was lost
// and the rotated Q and K are overwritten by the unrotated ones, so attention never sees the
// positions. It is BLAS attention otherwise.
#include <memory>

#include "impls/attention/attention_impl.h"

namespace ropecheck {
namespace {

class UnrotatedQk final : public AttentionImpl {
 public:
  std::string_view id() const override { return "mutant/attention_unrotated_qk"; }
  std::string_view summary() const override {
    return "seed 001's bug: rotated q, k overwritten by the unrotated ones (a lost else)";
  }

 protected:
  void attend(const AttentionShape& shape, std::span<const float> q, std::span<const float> k,
              std::span<const float> v, std::span<float> out, int threads) const override {
    attention_blas(shape, q, k, v, out, {.block_rows = 7, .threads = threads});
  }
  bool uses_rotated_qk() const override { return false; }  // BUG
};

}  // namespace

std::unique_ptr<AttentionImpl> make_mutant_attention_unrotated_qk() {
  return std::make_unique<UnrotatedQk>();
}

}  // namespace ropecheck
