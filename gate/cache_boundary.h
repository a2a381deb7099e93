// Which gate cases sit on a cache boundary of the running machine: a working set within a factor
// of two of the L2 or L3 size is flagged (reported, not gated), because there whether the data
// stays in the cache depends on the pages a process happens to get and on its neighbours, so
// fresh processes of one build differ by more than a code change the gate should see.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ropecheck {

struct CacheLevel {
  int level = 0;            // 2 or 3
  std::uint64_t bytes = 0;  // one instance's size, as sysfs gives it
};

// A working set w is on the boundary of a cache of size c when c / kCacheBoundaryFactor < w <
// c * kCacheBoundaryFactor.
inline constexpr double kCacheBoundaryFactor = 2;

// The unified or data caches of level 2 and up of cpu0, from sysfs (index*/level, type, size);
// empty when sysfs cannot be read (then nothing is flagged).
std::vector<CacheLevel> read_cpu_caches(
    const std::filesystem::path& cache_dir = "/sys/devices/system/cpu/cpu0/cache");

// The bytes one call of a case walks, for the case names of bench/format/shapes.h: RoPE's q and k
// (4 bytes an element for kernel/..., 2 for kernel_bf16/... and kernel_fp16/...; plugin cases
// counted as fp32), attention's q, k, v and output. None for a name not built from those tables.
std::optional<std::uint64_t> working_set_bytes(std::string_view case_name);

// "" when no cache is near; else e.g. "working set 2.0 MiB within 2x of the 1.0 MiB L2".
std::string cache_boundary_flag(std::uint64_t working_set, const std::vector<CacheLevel>& caches);

// "1.0 MiB", "32 KiB".
std::string byte_size_text(std::uint64_t bytes);

}  // namespace ropecheck
