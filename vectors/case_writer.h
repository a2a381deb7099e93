// The files of one golden case: CaseWriter writes each .npy into DIR/<case>/ and records it for
// the manifest's "files" (path, descr, shape, what); write_in_dtype and write_rounded store a
// tensor in the case's 16- or 32-bit storage type.
#pragma once

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "core/fp16_bits.h"
#include "core/storage.h"
#include "vectors/npy.h"

namespace ropecheck {

class CaseWriter {
 public:
  // Creates OUT_DIR/<name>; throws InvalidInput when it cannot.
  CaseWriter(const std::filesystem::path& out_dir, const std::string& name);

  template <typename T>
  void write(const std::string& key, const std::string& file, std::span<const T> data,
             std::vector<std::int64_t> shape, const std::string& what) {
    bytes_ += write_npy(dir_ / file, data, shape);
    record(key, file, descr_of<T>(), std::move(shape), what);
  }
  // Raw element bytes under an explicit descr ("|u1" for FP8 codes, "<u2" for bf16 bits, ...).
  void write_bytes(const std::string& key, const std::string& file, const std::string& descr,
                   std::span<const std::byte> data, std::vector<std::int64_t> shape, const std::string& what);

  nlohmann::ordered_json files() const { return files_; }
  std::uintmax_t bytes() const { return bytes_; }

 private:
  template <typename T>
  static const char* descr_of() {
    if constexpr (std::is_same_v<T, float>) return kNpyFloat32;
    if constexpr (std::is_same_v<T, double>) return kNpyFloat64;
    if constexpr (std::is_same_v<T, std::uint16_t>) return kNpyUint16;
    if constexpr (std::is_same_v<T, std::int64_t>) return kNpyInt64;
    if constexpr (std::is_same_v<T, Fp16>) return kNpyFloat16;
  }
  void record(const std::string& key, const std::string& file, const std::string& descr,
              std::vector<std::int64_t> shape, const std::string& what);

  std::string name_;
  std::filesystem::path dir_;
  nlohmann::ordered_json files_ = nlohmann::ordered_json::object();
  std::uintmax_t bytes_ = 0;
};

// One tensor of values exact in `dtype`: fp32 as '<f4', bf16 as '<u2' bits, fp16 as '<f2'.
void write_in_dtype(CaseWriter& writer, const std::string& key, const std::string& file,
                    std::span<const float> values, StorageType dtype,
                    const std::vector<std::int64_t>& shape, const std::string& what);

// Float64 values rounded once to `dtype` (nearest even, straight from double), stored as above.
void write_rounded(CaseWriter& writer, const std::string& key, const std::string& file,
                   std::span<const double> expected, StorageType dtype,
                   const std::vector<std::int64_t>& shape, const std::string& what);

}  // namespace ropecheck
