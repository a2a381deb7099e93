// The .npy writer and reader (format in ropecheck/npy.h). The reader accepts what NumPy writes
// (keys in any order, any spacing, versions 1.0 and 2.0) so that a porter's own files read back.
//   tests/vectors/vectors_test.cc checks the bytes of a written header without this code.
#include "vectors/npy.h"

#include <fmt/format.h>

#include <bit>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string_view>

#include "core/errors.h"
#include "core/storage.h"

namespace ropecheck {
namespace {

// The data is written as the machine holds it; every target ropecheck builds for (x86-64) is
// little-endian, which is what the '<' in every descr promises.
static_assert(std::endian::native == std::endian::little, "npy.cc writes host-order data as '<'");

constexpr std::string_view kMagic = "\x93NUMPY";
constexpr std::size_t kPreamble = 10;  // magic (6), version (2), header length (2) in version 1.0
constexpr std::size_t kAlignment = 64;

std::size_t element_size(const std::string& descr, const std::filesystem::path& path) {
  if (descr.size() == 3 && (descr[0] == '<' || descr[0] == '|') &&
      (descr[1] == 'f' || descr[1] == 'i' || descr[1] == 'u') && descr[2] >= '1' && descr[2] <= '8') {
    const auto size = static_cast<std::size_t>(descr[2] - '0');
    if (size == 1 || size == 2 || size == 4 || size == 8) return size;
  }
  throw InvalidInput(fmt::format("{}: unsupported dtype '{}' (little-endian f/i/u of 1, 2, 4 or "
                                 "8 bytes only)", path.string(), descr));
}

// Throws rather than wraps: a header read from disk can claim any shape.
std::int64_t product(std::span<const std::int64_t> shape) {
  std::int64_t n = 1;
  for (const auto d : shape) {
    if (d < 0 || __builtin_mul_overflow(n, d, &n) || n > (std::int64_t{1} << 40)) {
      throw InvalidInput("npy: shape has a negative dimension or more than 2^40 elements");
    }
  }
  return n;
}

// --- header parsing: a Python dict literal of three known keys ---------------------------------

class HeaderParser {
 public:
  HeaderParser(std::string_view text, const std::filesystem::path& path) : text_(text), path_(path) {}

  NpyArray parse() {
    NpyArray array;
    bool have_descr = false, have_order = false, have_shape = false;
    expect('{');
    while (!peek('}')) {
      const std::string key = quoted();
      expect(':');
      if (key == "descr") {
        array.descr = quoted();
        have_descr = true;
      } else if (key == "fortran_order") {
        if (word() != "False") fail("fortran_order True: only C-order arrays are read");
        have_order = true;
      } else if (key == "shape") {
        array.shape = tuple();
        have_shape = true;
      } else {
        fail(fmt::format("unknown key '{}'", key));
      }
      if (!peek('}')) expect(',');
    }
    if (!have_descr || !have_order || !have_shape) fail("a key of descr, fortran_order, shape is missing");
    return array;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw InvalidInput(fmt::format("{}: bad .npy header ({}): {}", path_.string(), what, text_));
  }
  void skip_space() {
    while (at_ < text_.size() && (text_[at_] == ' ' || text_[at_] == '\n')) ++at_;
  }
  bool peek(char c) {
    skip_space();
    return at_ < text_.size() && text_[at_] == c;
  }
  void expect(char c) {
    if (!peek(c)) fail(fmt::format("expected '{}' at offset {}", c, at_));
    ++at_;
  }
  std::string quoted() {
    skip_space();
    if (at_ >= text_.size() || (text_[at_] != '\'' && text_[at_] != '"')) fail("expected a string");
    const char quote = text_[at_++];
    const auto end = text_.find(quote, at_);
    if (end == std::string_view::npos) fail("unterminated string");
    std::string s(text_.substr(at_, end - at_));
    at_ = end + 1;
    return s;
  }
  std::string word() {
    skip_space();
    const auto start = at_;
    while (at_ < text_.size() && std::isalpha(static_cast<unsigned char>(text_[at_]))) ++at_;
    return std::string(text_.substr(start, at_ - start));
  }
  std::vector<std::int64_t> tuple() {
    std::vector<std::int64_t> dims;
    expect('(');
    while (!peek(')')) {
      std::int64_t d = 0;
      bool digits = false;
      while (at_ < text_.size() && text_[at_] >= '0' && text_[at_] <= '9') {
        if (d > (std::int64_t{1} << 40)) fail("dimension too large");
        d = d * 10 + (text_[at_++] - '0');
        digits = true;
      }
      if (!digits) fail("expected a dimension");
      dims.push_back(d);
      if (!peek(')')) expect(',');
    }
    ++at_;
    return dims;
  }

  std::string_view text_;
  const std::filesystem::path& path_;
  std::size_t at_ = 0;
};

template <typename T>
std::vector<T> elements_as(const NpyArray& array, const char* descr) {
  if (array.descr != descr) {
    throw InvalidInput(fmt::format("array of dtype '{}' read as '{}'", array.descr, descr));
  }
  std::vector<T> out(array.data.size() / sizeof(T));
  if (!out.empty()) std::memcpy(out.data(), array.data.data(), out.size() * sizeof(T));
  return out;
}

}  // namespace

std::string npy_header(const std::string& descr, std::span<const std::int64_t> shape) {
  std::string dims;
  for (const auto d : shape) dims += fmt::format("{}, ", d);
  // Python's tuple syntax: (7,) for one dimension, (2, 3) for more, () for none.
  if (shape.size() > 1) dims.resize(dims.size() - 2);
  if (shape.size() == 1) dims.resize(dims.size() - 1);
  std::string header =
      fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': ({}), }}", descr, dims);
  // Spaces then '\n' so that the data starts on a 64-byte boundary (NumPy's own alignment).
  const std::size_t unpadded = kPreamble + header.size() + 1;
  header.append((kAlignment - unpadded % kAlignment) % kAlignment, ' ');
  header.push_back('\n');
  return header;
}

std::uintmax_t write_npy(const std::filesystem::path& path, const std::string& descr,
                         std::span<const std::int64_t> shape, std::span<const std::byte> data) {
  const auto expected = static_cast<std::size_t>(product(shape)) * element_size(descr, path);
  if (data.size() != expected) {
    throw InvalidInput(fmt::format("{}: {} bytes of data for shape of {} bytes", path.string(),
                                   data.size(), expected));
  }
  const std::string header = npy_header(descr, shape);
  if (header.size() > 0xFFFF) throw InvalidInput(fmt::format("{}: header too long", path.string()));
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  if (!file) {
    throw InvalidInput(fmt::format("cannot write {}: {}", path.string(), std::strerror(errno)));
  }
  const char length[2] = {static_cast<char>(header.size() & 0xFF),
                          static_cast<char>(header.size() >> 8)};
  file.write(kMagic.data(), static_cast<std::streamsize>(kMagic.size()));
  file.put('\x01').put('\x00');
  file.write(length, 2);
  file.write(header.data(), static_cast<std::streamsize>(header.size()));
  file.write(reinterpret_cast<const char*>(data.data()), static_cast<std::streamsize>(data.size()));
  file.close();
  if (!file) {
    throw InvalidInput(fmt::format("writing {} failed: {}", path.string(), std::strerror(errno)));
  }
  return kPreamble + header.size() + data.size();
}

std::uintmax_t write_npy(const std::filesystem::path& path, std::span<const float> data,
                         std::span<const std::int64_t> shape) {
  return write_npy(path, kNpyFloat32, shape, std::as_bytes(data));
}
std::uintmax_t write_npy(const std::filesystem::path& path, std::span<const double> data,
                         std::span<const std::int64_t> shape) {
  return write_npy(path, kNpyFloat64, shape, std::as_bytes(data));
}
std::uintmax_t write_npy(const std::filesystem::path& path, std::span<const std::uint16_t> data,
                         std::span<const std::int64_t> shape) {
  return write_npy(path, kNpyUint16, shape, std::as_bytes(data));
}
std::uintmax_t write_npy(const std::filesystem::path& path, std::span<const std::int64_t> data,
                         std::span<const std::int64_t> shape) {
  return write_npy(path, kNpyInt64, shape, std::as_bytes(data));
}
std::uintmax_t write_npy(const std::filesystem::path& path, std::span<const Fp16> data,
                         std::span<const std::int64_t> shape) {
  return write_npy(path, kNpyFloat16, shape, std::as_bytes(data));
}

NpyArray read_npy(const std::filesystem::path& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) {
    throw InvalidInput(fmt::format("cannot read {}: {}", path.string(), std::strerror(errno)));
  }
  const std::string bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  if (bytes.size() < kPreamble || std::string_view(bytes).substr(0, kMagic.size()) != kMagic) {
    throw InvalidInput(fmt::format("{}: not a .npy file (no \\x93NUMPY magic)", path.string()));
  }
  const auto byte = [&](std::size_t i) { return static_cast<std::size_t>(static_cast<unsigned char>(bytes[i])); };
  std::size_t header_length = 0, header_start = 0;
  if (byte(6) == 1) {
    header_length = byte(8) | byte(9) << 8;
    header_start = 10;
  } else if (byte(6) == 2 && bytes.size() >= 12) {
    header_length = byte(8) | byte(9) << 8 | byte(10) << 16 | byte(11) << 24;
    header_start = 12;
  } else {
    throw InvalidInput(fmt::format("{}: unsupported .npy version {}.{}", path.string(), byte(6), byte(7)));
  }
  if (bytes.size() < header_start + header_length) {
    throw InvalidInput(fmt::format("{}: truncated .npy header", path.string()));
  }
  NpyArray array =
      HeaderParser(std::string_view(bytes).substr(header_start, header_length), path).parse();
  const std::size_t data_start = header_start + header_length;
  const auto size = static_cast<std::size_t>(array.elements()) * element_size(array.descr, path);
  if (bytes.size() != data_start + size) {
    throw InvalidInput(fmt::format("{}: {} data bytes, shape and dtype need {}", path.string(),
                                   bytes.size() - data_start, size));
  }
  array.data.resize(size);
  if (size > 0) std::memcpy(array.data.data(), bytes.data() + data_start, size);
  return array;
}

std::int64_t NpyArray::elements() const { return product(shape); }
std::vector<float> NpyArray::as_float32() const { return elements_as<float>(*this, kNpyFloat32); }
std::vector<double> NpyArray::as_float64() const { return elements_as<double>(*this, kNpyFloat64); }
std::vector<std::uint16_t> NpyArray::as_uint16() const {
  return elements_as<std::uint16_t>(*this, kNpyUint16);
}
std::vector<std::int64_t> NpyArray::as_int64() const {
  return elements_as<std::int64_t>(*this, kNpyInt64);
}
std::vector<Fp16> NpyArray::as_float16() const { return elements_as<Fp16>(*this, kNpyFloat16); }

std::vector<float> NpyArray::stored_as_float32() const {
  if (descr == kNpyFloat32) return as_float32();
  std::vector<float> widened;
  if (descr == kNpyFloat16) {
    for (const Fp16 half : as_float16()) widened.push_back(float_from_fp16(half));
    return widened;
  }
  if (descr == kNpyUint16) {
    for (const std::uint16_t bits : as_uint16()) widened.push_back(float_from_bf16(bits));
    return widened;
  }
  throw InvalidInput(fmt::format("dtype '{}' is none of the stored types '<f4' (fp32), '<f2' (fp16), "
                                 "'<u2' (bf16 bit patterns)", descr));
}

}  // namespace ropecheck
