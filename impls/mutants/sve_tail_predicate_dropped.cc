// mutant/sve_tail_predicate_dropped (aarch64 builds only): the SVE kernel (kernel/sve,
// rope_kernel_sve_body.h) whose per-vector predicate is built for whole vectors only: a vector of
// features that runs past rotary_dim (interleaved) or rotary_dim / 2 (half-split) gets an
// all-false predicate instead of svwhilelt's partial one, so the last (rotary features mod
// svcntw()) features of every head stay unrotated. The bug class of a vector-length agnostic
// kernel written as a whole-vector loop: right whenever the rotary features are a multiple of the
// vector length (Llama's 128 at every length up to 512 bits, interleaved), so it hides at the
// common model dims and shows at any other even dim (the generators draw every even head_dim up
// to 256, and partial rotary), at every vector length up to 2048 bits.
// The real kernel runs with one decision flipped (SveLevel's kDropTail), in kernel/sve's own
// registry class: everything else, the rows, the threads, the passes, is kernel/sve's, bit for bit.
#if defined(__aarch64__)
#include <memory>
#include <string_view>

#include "impls/kernels/rope_kernel.h"
#include "impls/rope_impl.h"

namespace ropecheck {

std::unique_ptr<RopeImpl> make_kernel_sve_variant(std::string_view id, std::string_view summary,
                                                  void (*kernel)(const kernels::RopeKernelProblem&));

std::unique_ptr<RopeImpl> make_mutant_sve_tail_predicate_dropped() {
  return make_kernel_sve_variant("mutant/sve_tail_predicate_dropped",
                                 "the SVE kernel's tail predicate built for whole vectors only: the last "
                                 "rotary features mod the vector length stay unrotated",
                                 kernels::rope_kernel_sve_tail_predicate_dropped);
}

}  // namespace ropecheck
#endif
