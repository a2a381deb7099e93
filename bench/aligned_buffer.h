// Page-aligned storage (huge pages where large) for the benchmark's q and k buffers. Where a std::vector's buffer lands
// depends on what the process allocated before (its command line and environment among it), so
// its offset within a page and a cache line changed from process to process, and with it the
// speed of a case and its probe (bench/README.md: one case's probe 27% apart between two
// processes of one build). Aligned to a page, every process streams identically placed data.
#pragma once

#include <sys/mman.h>

#include <cstddef>
#include <new>
#include <vector>

namespace ropecheck::bench {

inline constexpr std::size_t kBufferAlignment = 4096;
// Buffers of a huge page or more start on a huge page and ask for transparent huge pages
// (madvise: where THP is "madvise", the default of many distributions, they get none otherwise):
// then which physical pages a process gets decides far less of its cache-set conflicts and TLB
// misses (bench/README.md measured the out-of-cache cases with and without).
inline constexpr std::size_t kHugePage = std::size_t{2} << 20;

inline std::size_t buffer_alignment(std::size_t bytes) {
  return bytes >= kHugePage ? kHugePage : kBufferAlignment;
}

template <typename T>
struct PageAlignedAllocator {
  using value_type = T;
  PageAlignedAllocator() = default;
  template <typename U>
  PageAlignedAllocator(const PageAlignedAllocator<U>&) noexcept {}
  T* allocate(std::size_t n) {
    const std::size_t bytes = n * sizeof(T);
    void* p = ::operator new(bytes, std::align_val_t{buffer_alignment(bytes)});
    // Advice only: where THP is off or unsupported this fails and nothing changes.
    if (bytes >= kHugePage) madvise(p, bytes, MADV_HUGEPAGE);
    return static_cast<T*>(p);
  }
  void deallocate(T* p, std::size_t n) noexcept {
    ::operator delete(p, std::align_val_t{buffer_alignment(n * sizeof(T))});
  }
  template <typename U>
  bool operator==(const PageAlignedAllocator<U>&) const noexcept { return true; }
};

template <typename T>
using AlignedVector = std::vector<T, PageAlignedAllocator<T>>;

}  // namespace ropecheck::bench
