// The shared memory a plugin call works on: one memfd, mapped MAP_SHARED by the host and by the
// worker, holding q, k, positions and a LongRoPE spec's factor arrays (and for ABI 5's fused call
// v, the slots, the two caches and the FP8 scales; for ABI 6's form call the buffer, the cos/sin
// cache and the norm weights), each with at least 4 KiB of guard bytes (a
// position-keyed pattern, ggml test-backend-ops' idea) before and after it. After the call the host reads the
// guards back: any changed byte is a write outside the buffers, named by buffer and distance.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

namespace ropecheck {

// memcpy into or out of a buffer, where a size of 0 may come with a null pointer (an empty span's
// data(), a q-only call's k), which memcpy forbids.
inline void copy_bytes(void* to, const void* from, std::size_t bytes) {
  if (bytes != 0) std::memcpy(to, from, bytes);
}

class GuardedBuffers {
 public:
  static constexpr std::size_t kGuardBytes = 4096;

  GuardedBuffers();  // throws std::system_error when the memfd cannot be made
  ~GuardedBuffers();
  GuardedBuffers(const GuardedBuffers&) = delete;
  GuardedBuffers& operator=(const GuardedBuffers&) = delete;

  int fd() const { return fd_; }
  std::uint64_t file_bytes() const { return mapped_bytes_; }

  enum Buffer {
    q = 0, k = 1, positions = 2, factors = 3,
    v = 4, slots = 5, k_cache = 6, v_cache = 7, scales = 8,  // ABI 5's fused call
    form_buffer = 9, cos_sin_cache = 10, norm_weights = 11,   // ABI 6's form call
  };
  static constexpr int kBuffers = 12;
  // The first four are every call's; the others (v onwards) take no room, and have no guards,
  // while empty.
  static constexpr int kRopeBuffers = 4;

  // Lays out a RoPE call's four buffers (growing the file when needed) and writes every guard byte.
  void prepare(std::size_t q_bytes, std::size_t k_bytes, std::size_t positions_bytes,
               std::size_t factors_bytes = 0);
  // The same for every buffer: bytes[b] for Buffer b.
  void prepare_all(const std::size_t (&bytes)[kBuffers]);

  std::byte* data(Buffer b) const { return base_ + regions_[b].data_begin; }
  std::uint64_t offset(Buffer b) const { return regions_[b].data_begin; }

  // "" when every guard byte is intact; else e.g. "wrote 4 bytes past the end of q" (the
  // distance to the farthest changed byte), one clause per damaged guard.
  std::string damage() const;

 private:
  struct Region {
    const char* name;
    std::size_t begin = 0;       // the leading guard starts here
    std::size_t data_begin = 0;  // page aligned
    std::size_t data_end = 0;    // the trailing guard starts here
    std::size_t end = 0;         // the next region's leading guard
  };

  void ensure_bytes(std::size_t bytes);
  void fill(std::size_t from, std::size_t to) const;
  // Offsets in [from, to) whose byte differs from the pattern: first and last, or false.
  bool changed(std::size_t from, std::size_t to, std::size_t* first, std::size_t* last) const;

  int fd_ = -1;
  std::byte* base_ = nullptr;
  std::size_t mapped_bytes_ = 0;
  Region regions_[kBuffers] = {{"q"},      {"k"},       {"positions"}, {"factors"},        {"v"},
                                {"slots"}, {"k_cache"}, {"v_cache"},   {"the FP8 scales"}, {"the buffer"},
                                {"the cos/sin cache"},  {"the norm weights"}};
};

}  // namespace ropecheck
