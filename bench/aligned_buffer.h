// Page-aligned storage for the benchmark's q and k buffers. Where a std::vector's buffer lands
// depends on what the process allocated before (its command line and environment among it), so
// its offset within a page and a cache line changed from process to process, and with it the
// speed of a case and its probe (bench/README.md: one case's probe 27% apart between two
// processes of one build). Aligned to a page, every process streams identically placed data.
#pragma once

#include <cstddef>
#include <new>
#include <vector>

namespace ropecheck::bench {

inline constexpr std::size_t kBufferAlignment = 4096;

template <typename T>
struct PageAlignedAllocator {
  using value_type = T;
  PageAlignedAllocator() = default;
  template <typename U>
  PageAlignedAllocator(const PageAlignedAllocator<U>&) noexcept {}
  T* allocate(std::size_t n) {
    return static_cast<T*>(::operator new(n * sizeof(T), std::align_val_t{kBufferAlignment}));
  }
  void deallocate(T* p, std::size_t) noexcept {
    ::operator delete(p, std::align_val_t{kBufferAlignment});
  }
  template <typename U>
  bool operator==(const PageAlignedAllocator<U>&) const noexcept { return true; }
};

template <typename T>
using AlignedVector = std::vector<T, PageAlignedAllocator<T>>;

}  // namespace ropecheck::bench
