// The two 16-bit storage types as test traits, and one run of a level on buffers of either with
// 16 guard elements after q and k: what storage16_test.cc and fp16_storage_test.cc share.
#pragma once

#include <cmath>
#include <cstdint>
#include <span>
#include <vector>

#include "impls/rope_impl.h"

namespace ropecheck::test {

struct Bf16Storage {
  using Element = std::uint16_t;
  static constexpr StorageType kStorage = StorageType::bf16;
  static constexpr const char* kKernelPrefix = "kernel_bf16/";
#if defined(__aarch64__)
  static constexpr int kKernelLevels = 3;  // portable, NEON and SVE integer rounding
#else
  static constexpr int kKernelLevels = 4;  // portable, AVX2 and AVX-512 integer rounding, AVX512_BF16
#endif
  static constexpr int kMantissaBits = 7;
  static Element guard() { return 0x4B40; }  // 12288.0, must survive every kernel
  static std::uint32_t bits(Element e) { return e; }
  static Element narrow(float f) { return bf16_from_float(f); }
  static float widen(Element e) { return float_from_bf16(e); }
  static int head_exponent(int) { return 0; }  // bf16 has fp32's range: no subnormals here
  static void apply(const RopeImpl& impl, const RopeSpec& spec, HeadTensorOf<Element> q,
                    HeadTensorOf<Element> k, PositionIds positions) {
    impl.apply_bf16(spec, q, k, positions);
  }
};

struct Fp16Storage {
  using Element = Fp16;
  static constexpr StorageType kStorage = StorageType::fp16;
  static constexpr const char* kKernelPrefix = "kernel_fp16/";
  static constexpr int kKernelLevels = 3;  // portable, AVX2 (F16C), AVX-512; portable, NEON, SVE (fcvt)
  static constexpr int kMantissaBits = 10;
  static Element guard() { return Fp16{0x7A00}; }  // 49152.0
  static std::uint32_t bits(Element e) { return e.bits; }
  static Element narrow(float f) { return fp16_from_float(f); }
  static float widen(Element e) { return float_from_fp16(e); }
  // Head h scaled by 2^(-6 h): the last heads of a token hold subnormals (down to 2^-24), whose
  // rotation rounds absolutely.
  static int head_exponent(int head) { return -6 * head; }
  static void apply(const RopeImpl& impl, const RopeSpec& spec, HeadTensorOf<Element> q,
                    HeadTensorOf<Element> k, PositionIds positions) {
    impl.apply_fp16(spec, q, k, positions);
  }
};

template <typename Storage>
struct StoredRun {
  std::vector<float> q_in, k_in;                 // the stored inputs, widened (exact)
  std::vector<typename Storage::Element> q, k;  // outputs, then 16 guard elements each
};

// q = 3 sin(0.37 j), k = 3 sin(0.11 j), each head scaled by 2^head_exponent, stored, rotated.
template <typename Storage>
StoredRun<Storage> run_stored(const RopeImpl& impl, const RopeSpec& spec, std::int64_t tokens,
                              std::int64_t q_heads, std::int64_t k_heads,
                              const std::vector<std::int64_t>& positions) {
  using Element = typename Storage::Element;
  const auto fill = [&](std::int64_t heads, float step, std::vector<Element>& out, std::vector<float>& in) {
    const auto n = static_cast<std::size_t>(tokens * heads * spec.head_dim);
    out.assign(n + 16, Storage::guard());
    for (std::size_t j = 0; j < n; ++j) {
      const auto head = static_cast<int>(j / static_cast<std::size_t>(spec.head_dim) %
                                         static_cast<std::size_t>(heads));
      out[j] = Storage::narrow(
          std::ldexp(std::sin(step * static_cast<float>(j)) * 3.0f, Storage::head_exponent(head)));
      in.push_back(Storage::widen(out[j]));
    }
    return n;
  };
  StoredRun<Storage> r;
  const auto qn = fill(q_heads, 0.37f, r.q, r.q_in);
  const auto kn = fill(k_heads, 0.11f, r.k, r.k_in);
  Storage::apply(impl, spec, HeadTensorOf<Element>{std::span(r.q).first(qn), tokens, q_heads, spec.head_dim},
                 HeadTensorOf<Element>{std::span(r.k).first(kn), tokens, k_heads, spec.head_dim}, positions);
  return r;
}

}  // namespace ropecheck::test
