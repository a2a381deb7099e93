// mutant/row_index_16bit: walks the tensor row by row (row = token * heads + head) and finds a
// row's token, hence its position, from the row index kept in 16 bits, as kernels do that pack
// the row into a 16-bit lane or a launch grid's y dimension. Right up to 65 536 rows; past them
// a row is rotated by another token's position. Only a call with more rows shows it.
#include <cstdint>
#include <memory>

#include "impls/mutants/pairwise_mutant.h"

namespace ropecheck {
namespace {

class RowIndex16Bit final : public mutants::PairwiseMutant {
 public:
  std::string_view id() const override { return "mutant/row_index_16bit"; }
  std::string_view summary() const override {
    return "finds each row's position through a 16-bit row index: wrong past 65536 rows";
  }

 protected:
  void rotate_qk(const RopeSpec& spec, HeadTensor q, HeadTensor k,
                 PositionIds positions) const override {
    rotate_rows(spec, q, positions);
    rotate_rows(spec, k, positions);
  }

 private:
  void rotate_rows(const RopeSpec& spec, HeadTensor x, PositionIds positions) const {
    const auto half = static_cast<std::size_t>(spec.rotary_dim / 2);
    const auto theta = frequencies(spec);
    const double scale = attention_factor(spec);
    const bool interleaved = spec.layout == Layout::interleaved;
    for (std::int64_t row = 0; row < x.tokens * x.heads; ++row) {
      const auto narrow = static_cast<std::uint16_t>(row);  // BUG: wraps at 65 536 rows
      const std::int64_t m = positions[static_cast<std::size_t>(narrow / x.heads)];
      const auto head = x.row(row / x.heads, row % x.heads);
      for (std::size_t i = 0; i < half; ++i) {
        const auto [c, s] = cos_sin(spec, m, theta[i], scale);
        const std::size_t a = interleaved ? 2 * i : i;
        const std::size_t b = interleaved ? 2 * i + 1 : i + half;
        const float xa = head[a], xb = head[b];
        head[a] = c * xa - s * xb;
        head[b] = s * xa + c * xb;
      }
    }
  }
};

}  // namespace

std::unique_ptr<RopeImpl> make_mutant_row_index_16bit() { return std::make_unique<RowIndex16Bit>(); }

}  // namespace ropecheck
