// The kernels' rotations alone (rotation_alone_levels.h).
#include "impls/kernels/rotation_alone_levels.h"

#include "impls/kernels/rope_kernel.h"

namespace ropecheck::kernels {
namespace {

#if defined(__x86_64__)
constexpr RotationAloneLevel kRotationAloneLevels[] = {
    {"rotation/avx2", "kernel/avx2", StorageType::fp32, Isa::avx2, false, 16, rotation_alone_avx2, nullptr, nullptr},
    {"rotation/avx512", "kernel/avx512", StorageType::fp32, Isa::avx512, false, 32, rotation_alone_avx512, nullptr,
     nullptr},
    {"rotation_fp16/avx2", "kernel_fp16/avx2", StorageType::fp16, Isa::avx2, false, 16, nullptr,
     rotation_alone_fp16_avx2, nullptr},
    {"rotation_fp16/avx512", "kernel_fp16/avx512", StorageType::fp16, Isa::avx512, false, 32, nullptr,
     rotation_alone_fp16_avx512, nullptr},
    {"rotation_bf16/avx2", "kernel_bf16/avx2", StorageType::bf16, Isa::avx2, false, 16, nullptr, nullptr,
     rotation_alone_bf16_avx2},
    // bf16 on AVX-512 holds two values a 32-bit lane (rope_kernel_avx512_bf16.h): 32 a register.
    {"rotation_bf16/avx512", "kernel_bf16/avx512", StorageType::bf16, Isa::avx512, false, 64, nullptr, nullptr,
     rotation_alone_bf16_avx512},
    {"rotation_bf16/avx512bf16", "kernel_bf16/avx512bf16", StorageType::bf16, Isa::avx512, true, 64, nullptr,
     nullptr, rotation_alone_bf16_avx512bf16},
};
#elif defined(__aarch64__)
// NEON: 4 floats a register, blocks of 8. SVE's registers are as long as the CPU makes them:
// block_elements 0, block() asks at run time.
constexpr RotationAloneLevel kRotationAloneLevels[] = {
    {"rotation/neon", "kernel/neon", StorageType::fp32, Isa::neon, false, 8, rotation_alone_neon, nullptr, nullptr},
    {"rotation_fp16/neon", "kernel_fp16/neon", StorageType::fp16, Isa::neon, false, 8, nullptr,
     rotation_alone_fp16_neon, nullptr},
    {"rotation_bf16/neon", "kernel_bf16/neon", StorageType::bf16, Isa::neon, false, 8, nullptr, nullptr,
     rotation_alone_bf16_neon},
    {"rotation/sve", "kernel/sve", StorageType::fp32, Isa::sve, false, 0, rotation_alone_sve, nullptr, nullptr},
    {"rotation_fp16/sve", "kernel_fp16/sve", StorageType::fp16, Isa::sve, false, 0, nullptr, rotation_alone_fp16_sve,
     nullptr},
    {"rotation_bf16/sve", "kernel_bf16/sve", StorageType::bf16, Isa::sve, false, 0, nullptr, nullptr,
     rotation_alone_bf16_sve},
};
#endif

}  // namespace

bool RotationAloneLevel::available(std::string* why) const {
  return cpu_supports(isa, why) && (!needs_avx512_bf16 || cpu_supports_avx512_bf16(why));
}

int RotationAloneLevel::block() const {
  // SVE: two vectors of 32-bit lanes (every storage is widened one element a lane there).
  return block_elements != 0 ? block_elements : 2 * (sve_vector_bits() / 32);
}

std::span<const RotationAloneLevel> rotation_alone_levels() {
#if defined(__x86_64__) || defined(__aarch64__)
  return kRotationAloneLevels;
#else
  return {};
#endif
}

}  // namespace ropecheck::kernels
