// mutant/neon_zip_halves_swapped (aarch64 builds only): the NEON kernel (kernel/neon) with one
// lane-order decision flipped, the bug class of a port to 128-bit zips. Its interleaved table row
// duplicates four angles' cos into [c0 c0 c1 c1][c2 c2 c3 c3] (and sin into [-s0 s0 ...]) by
// vzip1q/vzip2q; here the two zip halves are stored in the wrong order, so within every four
// pairs, pairs 0, 1 and 2, 3 swap their angles: still rotations linear in the position (relative
// positions and composition hold), which only the truth (the oracle's frequency per pair) shows.
// Where rotary_dim / 2 is no multiple of 4, the last block's lanes past the row (zeros) move in
// front: those pairs get cos = sin = 0 and are wiped, which the norm and R_0 = I show as well.
// Only the interleaved layout: half-split runs the real kernel's code.
// Run: `ropecheck verify --impl mutant/neon_zip_halves_swapped` (under qemu-aarch64 off aarch64).
#include <cstddef>
#include <iterator>
#include <memory>

#include "impls/kernels/kernel_scratch.h"
#include "impls/kernels/rope_kernel.h"
#include "impls/rope_impl.h"

namespace ropecheck {

#if defined(__aarch64__)
std::unique_ptr<RopeImpl> make_kernel_neon();

namespace {

class NeonZipHalvesSwapped final : public RopeImpl {
 public:
  NeonZipHalvesSwapped() : kernel_(make_kernel_neon()) {}
  std::string_view id() const override { return "mutant/neon_zip_halves_swapped"; }
  std::string_view summary() const override {
    return "NEON kernel whose interleaved table stores its zip1/zip2 halves swapped: pairs 0, 1 "
           "and 2, 3 of every four rotate by each other's angles";
  }
  RopeCapabilities capabilities() const override { return kernel_->capabilities(); }

 protected:
  // kernel/neon's call (kernel_rope.cc run_kernel), with the mutated kernel: the same scratch,
  // the same kept rows (its own, as each kernel level has).
  void rotate_qk(const RopeSpec& spec, HeadTensor q, HeadTensor k, PositionIds positions) const override {
    thread_local KernelScratch scratch_of_pass[std::size(kAllPasses)];
    KernelScratch& scratch = scratch_of_pass[static_cast<std::size_t>(spec.pass)];
    scratch.prepare(reinterpret_cast<AnyKernel>(kernels::rope_kernel_neon_zip_halves_swapped), spec);
    const kernels::TableRowCache rows = scratch.rows.cache();
    kernels::rope_kernel_neon_zip_halves_swapped(
        {q.data.data(), k.data.data(), q.tokens, q.heads, k.heads, spec.head_dim, spec.rotary_dim,
         spec.layout == Layout::interleaved, positions.data(), scratch.theta.data(), scratch.scale,
         scratch.table.data(), scratch.angles.data(), &rows, axis_count(spec), scratch.row_axis.data(),
         scratch.axis_rows.data()});
  }

 private:
  std::unique_ptr<RopeImpl> kernel_;
};

}  // namespace

std::unique_ptr<RopeImpl> make_mutant_neon_zip_halves_swapped() { return std::make_unique<NeonZipHalvesSwapped>(); }
#endif

}  // namespace ropecheck
