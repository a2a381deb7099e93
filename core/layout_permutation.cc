// Feature and weight permutations between the interleaved and half-split layouts (seed 002).
#include "core/layout_permutation.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/errors.h"

namespace ropecheck {

std::vector<int> interleaved_to_half_split(int n) {
  if (n <= 0 || n % 2 != 0) {
    throw InvalidInput(fmt::format("feature count must be even and positive, got {}", n));
  }
  std::vector<int> to(static_cast<std::size_t>(n));
  for (int k = 0; k < n / 2; ++k) {
    to[static_cast<std::size_t>(2 * k)] = k;
    to[static_cast<std::size_t>(2 * k + 1)] = n / 2 + k;
  }
  return to;
}

void scatter_features(std::span<const float> in, std::span<float> out, std::span<const int> to) {
  std::copy(in.begin(), in.end(), out.begin());
  for (std::size_t j = 0; j < to.size(); ++j) out[static_cast<std::size_t>(to[j])] = in[j];
}

void gather_features(std::span<const float> in, std::span<float> out, std::span<const int> to) {
  std::copy(in.begin(), in.end(), out.begin());
  for (std::size_t j = 0; j < to.size(); ++j) out[j] = in[static_cast<std::size_t>(to[j])];
}

namespace {

// Moves whole rows of w: row (h, j) of the source goes to row (h, to[j]) when `forward`, and
// comes back from there otherwise.
std::vector<float> permute_rows(std::span<const float> w, int n_heads, int dim_in, bool forward) {
  if (n_heads <= 0 || dim_in <= 0 || w.empty() ||
      w.size() % (static_cast<std::size_t>(n_heads) * static_cast<std::size_t>(dim_in)) != 0) {
    throw InvalidInput(fmt::format("weight of {} floats is not [n_heads={} * head_dim][dim_in={}]",
                                   w.size(), n_heads, dim_in));
  }
  const auto rows = w.size() / static_cast<std::size_t>(dim_in);
  const int head_dim = static_cast<int>(rows / static_cast<std::size_t>(n_heads));
  const auto to = interleaved_to_half_split(head_dim);  // throws on odd head_dim
  std::vector<float> out(w.size());
  const auto row_bytes = static_cast<std::size_t>(dim_in);
  for (int h = 0; h < n_heads; ++h) {
    for (int j = 0; j < head_dim; ++j) {
      const auto src = static_cast<std::size_t>(h * head_dim + (forward ? j : to[static_cast<std::size_t>(j)]));
      const auto dst = static_cast<std::size_t>(h * head_dim + (forward ? to[static_cast<std::size_t>(j)] : j));
      std::copy_n(w.begin() + static_cast<std::ptrdiff_t>(src * row_bytes), row_bytes,
                  out.begin() + static_cast<std::ptrdiff_t>(dst * row_bytes));
    }
  }
  return out;
}

}  // namespace

std::vector<float> permute_for_rotate_half(std::span<const float> w, int n_heads, int dim_in) {
  return permute_rows(w, n_heads, dim_in, /*forward=*/true);
}

std::vector<float> unpermute_from_rotate_half(std::span<const float> w, int n_heads, int dim_in) {
  return permute_rows(w, n_heads, dim_in, /*forward=*/false);
}

}  // namespace ropecheck
