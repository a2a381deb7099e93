// GuardedBuffers (plugin_guarded_buffers.h): memfd layout, guard fill and guard check.
#include "plugins/host/plugin_guarded_buffers.h"

#include <fmt/format.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <system_error>

namespace ropecheck {
namespace {

constexpr std::size_t kPage = 4096;
constexpr std::size_t kPeriod = 256;  // the pattern repeats every 256 bytes of file offset

std::size_t round_up(std::size_t n, std::size_t to) { return (n + to - 1) / to * to; }

// Keyed by file offset rather than one constant byte, so that a plugin copying guard bytes
// around (a shifted memmove) changes them too; 0x00 and float-looking bytes are rare in it.
std::byte pattern_at(std::size_t offset) {
  return static_cast<std::byte>(0xA5u ^ ((offset * 0x3Du) & 0xFFu));
}

// The pattern from any offset: start at pattern_table() + offset % kPeriod.
const std::byte* pattern_table() {
  static const auto table = [] {
    std::array<std::byte, kPage + kPeriod> t{};
    for (std::size_t i = 0; i < t.size(); ++i) t[i] = pattern_at(i);
    return t;
  }();
  return table.data();
}

[[noreturn]] void throw_errno(const char* what) {
  throw std::system_error(errno, std::generic_category(), what);
}

}  // namespace

GuardedBuffers::GuardedBuffers() {
  fd_ = memfd_create("ropecheck-plugin", MFD_CLOEXEC);
  if (fd_ < 0) throw_errno("memfd_create for plugin buffers");
}

GuardedBuffers::~GuardedBuffers() {
  if (base_ != nullptr) munmap(base_, mapped_bytes_);
  if (fd_ >= 0) close(fd_);
}

void GuardedBuffers::ensure_bytes(std::size_t bytes) {
  if (bytes <= mapped_bytes_) return;  // only ever grows: the worker remaps on a new size
  bytes = round_up(bytes * 2, kPage);  // doubling: a growing series of cases remaps rarely
  if (ftruncate(fd_, static_cast<off_t>(bytes)) != 0) throw_errno("ftruncate plugin buffers");
  void* mapping = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, 0);
  if (mapping == MAP_FAILED) throw_errno("mmap plugin buffers");
  if (base_ != nullptr) munmap(base_, mapped_bytes_);
  base_ = static_cast<std::byte*>(mapping);
  mapped_bytes_ = bytes;
}

void GuardedBuffers::prepare(std::size_t q_bytes, std::size_t k_bytes,
                             std::size_t positions_bytes, std::size_t factors_bytes) {
  prepare({q_bytes, k_bytes, positions_bytes, factors_bytes, 0, 0, 0, 0});
}

void GuardedBuffers::prepare(const std::array<std::size_t, kBuffers>& sizes) {
  std::size_t at = 0;
  for (int b = 0; b < kBuffers; ++b) {
    Region& r = regions_[b];
    r.begin = at;
    r.data_begin = at + kGuardBytes;  // page aligned: at is a multiple of the page
    r.data_end = r.data_begin + sizes[static_cast<std::size_t>(b)];
    // The trailing guard: to the next page, then a whole guard more.
    r.end = round_up(r.data_end, kPage) + kGuardBytes;
    at = r.end;
  }
  ensure_bytes(at);
  for (const Region& r : regions_) {
    fill(r.begin, r.data_begin);
    fill(r.data_end, r.end);
  }
}

void GuardedBuffers::fill(std::size_t from, std::size_t to) const {
  while (from < to) {
    const std::size_t n = std::min(to - from, kPage);
    std::memcpy(base_ + from, pattern_table() + from % kPeriod, n);
    from += n;
  }
}

bool GuardedBuffers::changed(std::size_t from, std::size_t to, std::size_t* first,
                             std::size_t* last) const {
  bool any = false;
  for (std::size_t at = from; at < to;) {
    const std::size_t n = std::min(to - at, kPage);
    const std::byte* want = pattern_table() + at % kPeriod;
    if (std::memcmp(base_ + at, want, n) != 0) {
      for (std::size_t i = 0; i < n; ++i) {
        if (base_[at + i] == want[i]) continue;
        if (!any) *first = at + i;
        *last = at + i;
        any = true;
      }
    }
    at += n;
  }
  return any;
}

std::string GuardedBuffers::damage() const {
  std::string found;
  const auto add = [&](std::string clause) {
    found += found.empty() ? clause : "; " + clause;
  };
  for (const Region& r : regions_) {
    std::size_t first = 0, last = 0;
    if (changed(r.begin, r.data_begin, &first, &last)) {
      add(fmt::format("wrote {} bytes before the start of {}", r.data_begin - first, r.name));
    }
    if (changed(r.data_end, r.end, &first, &last)) {
      add(fmt::format("wrote {} bytes past the end of {}", last + 1 - r.data_end, r.name));
    }
  }
  return found;
}

}  // namespace ropecheck
