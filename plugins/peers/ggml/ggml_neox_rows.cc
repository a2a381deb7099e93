// Repacking rows for ggml_rope_multi (ggml_neox_rows.h).
#include "ggml_neox_rows.h"

#include <cstring>

#include "ggml_rope_parameters.h"

namespace ropecheck_ggml_peer {
namespace {

// Where feature f of a packed (NEOX ordered) row lies in the spec's own row.
std::size_t source_feature(const ropecheck_plugin_spec& spec, std::size_t f) {
  if (spec.layout != ROPECHECK_LAYOUT_INTERLEAVED) return f;
  const auto half = static_cast<std::size_t>(spec.rotary_dim / 2);
  return f < half ? 2 * f : 2 * (f - half) + 1;
}

}  // namespace

bool needs_neox_rows(const ropecheck_plugin_spec& spec) {
  const int mode = axis_mode(spec);
  if (mode == ROPECHECK_AXES_NONE) return false;
  return spec.layout == ROPECHECK_LAYOUT_INTERLEAVED ||
         (mode == ROPECHECK_AXES_VISION && spec.rotary_dim < spec.head_dim);
}

void pack_neox_rows(const ropecheck_plugin_spec& spec, std::size_t element, std::size_t rows,
                    const unsigned char* from, unsigned char* to) {
  const auto head = static_cast<std::size_t>(spec.head_dim), rotary = static_cast<std::size_t>(spec.rotary_dim);
  for (std::size_t r = 0; r < rows; ++r) {
    for (std::size_t f = 0; f < rotary; ++f) {
      std::memcpy(to + (r * rotary + f) * element, from + (r * head + source_feature(spec, f)) * element, element);
    }
  }
}

void unpack_neox_rows(const ropecheck_plugin_spec& spec, std::size_t element, std::size_t rows,
                      const unsigned char* from, unsigned char* to) {
  const auto head = static_cast<std::size_t>(spec.head_dim), rotary = static_cast<std::size_t>(spec.rotary_dim);
  for (std::size_t r = 0; r < rows; ++r) {
    for (std::size_t f = 0; f < rotary; ++f) {
      std::memcpy(to + (r * head + source_feature(spec, f)) * element, from + (r * rotary + f) * element, element);
    }
  }
}

}  // namespace ropecheck_ggml_peer
