// OpenBLAS's core beside the kernels' level (core/blas_core.h): a core without the level's vectors
// is replaced, one with them kept, at the scalar level nothing; names as OpenBLAS spells them or
// in any case.
#include <gtest/gtest.h>

#include "core/blas_core.h"

namespace ropecheck {
namespace {

TEST(BlasCore, ACoreWithoutTheLevelsVectorsIsReplaced) {
  // Debian 12's OpenBLAS 0.3.21 on a Xeon of family 6 model 207: Prescott, SSE3 code.
  EXPECT_EQ(blas_core_for(Isa::avx512, "Prescott"), "SkylakeX");
  EXPECT_EQ(blas_core_for(Isa::avx2, "Prescott"), "Haswell");
  EXPECT_EQ(blas_core_for(Isa::avx2, "Sandybridge"), "Haswell");  // AVX without FMA
  EXPECT_EQ(blas_core_for(Isa::avx512, ""), "SkylakeX");
}

TEST(BlasCore, TheAvx2LevelRunsAnAvx2Core) {
  EXPECT_EQ(blas_core_for(Isa::avx2, "Haswell"), std::nullopt);
  EXPECT_EQ(blas_core_for(Isa::avx2, "Zen"), std::nullopt);
  EXPECT_EQ(blas_core_for(Isa::avx2, "SkylakeX"), "Haswell");  // ROPECHECK_ISA=avx2 on AVX-512
  EXPECT_EQ(blas_core_for(Isa::avx2, "Cooperlake"), "Haswell");
}

TEST(BlasCore, TheAvx512LevelKeepsAVectorCoreOpenBlasChose) {
  for (const char* core : {"SkylakeX", "Cooperlake", "SapphireRapids", "Haswell", "Zen"}) {
    EXPECT_EQ(blas_core_for(Isa::avx512, core), std::nullopt) << core;
  }
}

TEST(BlasCore, NamesCompareWithoutCase) {
  EXPECT_EQ(blas_core_for(Isa::avx512, "skylakex"), std::nullopt);
  EXPECT_EQ(blas_core_for(Isa::avx2, "HASWELL"), std::nullopt);
  EXPECT_EQ(blas_core_for(Isa::avx2, "Haswel"), "Haswell");  // a prefix is another name
}

TEST(BlasCore, TheScalarLevelKeepsOpenBlasChoice) {
  for (const char* core : {"Prescott", "Haswell", "SkylakeX"}) {
    EXPECT_EQ(blas_core_for(Isa::scalar, core), std::nullopt) << core;
  }
}

}  // namespace
}  // namespace ropecheck
