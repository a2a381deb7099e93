// The 16-bit kernels' conversion levels (round_trip_levels.h).
#include "impls/kernels/round_trip_levels.h"

#include "impls/kernels/rope_kernel.h"

namespace ropecheck::kernels {
namespace {

#if defined(__x86_64__)
constexpr RoundTripLevel kLevels[] = {
    {"conversion_fp16/avx2", "kernel_fp16/avx2", StorageType::fp16, Isa::avx2, false, round_trip_fp16_avx2, nullptr},
    {"conversion_fp16/avx512", "kernel_fp16/avx512", StorageType::fp16, Isa::avx512, false, round_trip_fp16_avx512,
     nullptr},
    {"conversion_bf16/avx2", "kernel_bf16/avx2", StorageType::bf16, Isa::avx2, false, nullptr, round_trip_bf16_avx2},
    {"conversion_bf16/avx512", "kernel_bf16/avx512", StorageType::bf16, Isa::avx512, false, nullptr,
     round_trip_bf16_avx512},
    {"conversion_bf16/avx512bf16", "kernel_bf16/avx512bf16", StorageType::bf16, Isa::avx512, true, nullptr,
     round_trip_bf16_avx512bf16},
};
#elif defined(__aarch64__)
constexpr RoundTripLevel kLevels[] = {
    {"conversion_fp16/neon", "kernel_fp16/neon", StorageType::fp16, Isa::neon, false, round_trip_fp16_neon, nullptr},
    {"conversion_bf16/neon", "kernel_bf16/neon", StorageType::bf16, Isa::neon, false, nullptr, round_trip_bf16_neon},
    {"conversion_fp16/sve", "kernel_fp16/sve", StorageType::fp16, Isa::sve, false, round_trip_fp16_sve, nullptr},
    {"conversion_bf16/sve", "kernel_bf16/sve", StorageType::bf16, Isa::sve, false, nullptr, round_trip_bf16_sve},
};
#endif

}  // namespace

bool RoundTripLevel::available(std::string* why) const {
  return cpu_supports(isa, why) && (!needs_avx512_bf16 || cpu_supports_avx512_bf16(why));
}

std::span<const RoundTripLevel> round_trip_levels() {
#if defined(__x86_64__) || defined(__aarch64__)
  return kLevels;
#else
  return {};
#endif
}

}  // namespace ropecheck::kernels
