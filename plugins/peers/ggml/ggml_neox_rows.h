// Rows as ggml_rope_multi takes them. ggml applies MROPE, IMROPE and VISION in NEOX ordering only
// (pair i = features (i, i + n/2)) and rotates a VISION row whole; ggml.h's two ways for another
// ordering are to split the tensor with views or to permute the weights, llama.cpp's converters'
// way. The peer does the permutation per call: an interleaved or partial multi-axis call's rotary
// features are copied into rows of rotary_dim elements in NEOX ordering, rotated there, and copied
// back into place (the tail features never leave q and k). Copies only: ggml's arithmetic is
// what is judged.
#pragma once

#include <cstddef>

#include "ropecheck/plugin.h"

namespace ropecheck_ggml_peer {

// Whether a multi-axis call on `spec` needs its rows repacked: interleaved, or partial VISION
// (MROPE and IMROPE leave features n_dims.. head_dim alone themselves).
bool needs_neox_rows(const ropecheck_plugin_spec& spec);

// `rows` rows of head_dim elements of `element` bytes at `from` into rows of rotary_dim elements at
// `to`, NEOX ordered: interleaved feature 2i to i, 2i+1 to i + rotary_dim/2; half split as it is.
void pack_neox_rows(const ropecheck_plugin_spec& spec, std::size_t element, std::size_t rows,
                    const unsigned char* from, unsigned char* to);
// The reverse: the rotated features back into their places in the rows at `to`.
void unpack_neox_rows(const ropecheck_plugin_spec& spec, std::size_t element, std::size_t rows,
                      const unsigned char* from, unsigned char* to);

}  // namespace ropecheck_ggml_peer
