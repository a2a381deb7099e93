// NumPy .npy files (format version 1.0), written and read without NumPy: the golden vectors'
// format (`ropecheck vectors`), readable from any language. A file is the magic "\x93NUMPY", the
// version bytes 1 0, a little-endian uint16 header length, a Python-dict header
//   {'descr': '<f4', 'fortran_order': False, 'shape': (T, H, D), }
// padded with spaces to a multiple of 64 bytes and ending in '\n', then the raw C-order data.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "core/fp16_bits.h"

namespace ropecheck {

// The element types ropecheck writes, by their NumPy descr. bf16 has no NumPy type: it is
// stored as '<u2' bit patterns (the top 16 bits of an IEEE binary32). fp16 is NumPy's own
// float16 (IEEE binary16): '<f2', which np.load reads as numbers, not bits.
inline constexpr const char* kNpyFloat16 = "<f2";
inline constexpr const char* kNpyFloat32 = "<f4";
inline constexpr const char* kNpyFloat64 = "<f8";
inline constexpr const char* kNpyUint16 = "<u2";
inline constexpr const char* kNpyInt64 = "<i8";
// One byte per element (an FP8 cache's codes): NumPy writes uint8 with no byte order, '|u1'.
inline constexpr const char* kNpyUint8 = "|u1";

// The header text (dict, padding and '\n' included) for a descr and shape: what follows the
// 10-byte preamble.
std::string npy_header(const std::string& descr, std::span<const std::int64_t> shape);

// Writes one array; `data` holds the elements' bytes, product(shape) * element size of them.
// Returns the file's size in bytes. Throws InvalidInput naming the path when it cannot be written
// (missing or unwritable directory) or when the data does not match the shape.
std::uintmax_t write_npy(const std::filesystem::path& path, const std::string& descr,
                         std::span<const std::int64_t> shape, std::span<const std::byte> data);
std::uintmax_t write_npy(const std::filesystem::path& path, std::span<const float> data,
                         std::span<const std::int64_t> shape);
std::uintmax_t write_npy(const std::filesystem::path& path, std::span<const double> data,
                         std::span<const std::int64_t> shape);
std::uintmax_t write_npy(const std::filesystem::path& path, std::span<const std::uint16_t> data,
                         std::span<const std::int64_t> shape);
std::uintmax_t write_npy(const std::filesystem::path& path, std::span<const std::int64_t> data,
                         std::span<const std::int64_t> shape);
// fp16 as '<f2': the same two bytes as the bit patterns, a different descr (Fp16 is its own type
// so that it cannot be written as '<u2' by accident).
std::uintmax_t write_npy(const std::filesystem::path& path, std::span<const Fp16> data,
                         std::span<const std::int64_t> shape);

struct NpyArray {
  std::string descr;                // "<f2", "<f4", "<f8", "<u2", "<i8", ...
  std::vector<std::int64_t> shape;  // () for a scalar
  std::vector<std::byte> data;      // C order, little-endian

  std::int64_t elements() const;
  // The elements as T; throws InvalidInput unless descr is T's ("<f4" for float, ...).
  std::vector<float> as_float32() const;
  std::vector<double> as_float64() const;
  std::vector<std::uint16_t> as_uint16() const;
  std::vector<std::int64_t> as_int64() const;
  std::vector<Fp16> as_float16() const;  // '<f2' only: a '<u2' (bf16) array is not fp16
  // A tensor in one of the storage types of the golden vectors, widened to float (exactly):
  // '<f4' as is, '<f2' as fp16, '<u2' as bf16 bit patterns. Throws InvalidInput for other dtypes.
  std::vector<float> stored_as_float32() const;
};

// Reads a version 1.0 or 2.0 .npy file of a little-endian numeric type in C order. Throws
// InvalidInput naming the path and what is wrong (missing file, bad magic, unparsable header,
// Fortran order, truncated data).
NpyArray read_npy(const std::filesystem::path& path);

}  // namespace ropecheck
