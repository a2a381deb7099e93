// CaseWriter, write_in_dtype and write_rounded (case_writer.h).
#include "vectors/case_writer.h"

#include <fmt/format.h>

#include <system_error>

#include "core/errors.h"
#include "vectors/golden_cases.h"
#include "vectors/round_once.h"

namespace ropecheck {

namespace fs = std::filesystem;

CaseWriter::CaseWriter(const fs::path& out_dir, const std::string& name) : name_(name), dir_(out_dir / name) {
  std::error_code error;
  fs::create_directories(dir_, error);
  if (error) throw InvalidInput(fmt::format("cannot create {}: {}", dir_.string(), error.message()));
}

void CaseWriter::write_bytes(const std::string& key, const std::string& file, const std::string& descr,
                             std::span<const std::byte> data, std::vector<std::int64_t> shape,
                             const std::string& what) {
  bytes_ += write_npy(dir_ / file, descr, shape, data);
  record(key, file, descr, std::move(shape), what);
}

void CaseWriter::record(const std::string& key, const std::string& file, const std::string& descr,
                        std::vector<std::int64_t> shape, const std::string& what) {
  files_[key] = {{"path", name_ + "/" + file}, {"descr", descr}, {"shape", shape}, {"what", what}};
}

void write_in_dtype(CaseWriter& writer, const std::string& key, const std::string& file,
                    std::span<const float> values, StorageType dtype,
                    const std::vector<std::int64_t>& shape, const std::string& what) {
  if (dtype == StorageType::fp32) {
    writer.write<float>(key, file, values, shape, what);
    return;
  }
  if (dtype == StorageType::fp16) {
    std::vector<Fp16> halves(values.size());
    for (std::size_t j = 0; j < values.size(); ++j) halves[j] = fp16_from_float(values[j]);  // exact
    writer.write<Fp16>(key, file, halves, shape, what);
    return;
  }
  std::vector<std::uint16_t> bits(values.size());
  for (std::size_t j = 0; j < values.size(); ++j) bits[j] = bf16_from_float(values[j]);  // exact
  writer.write<std::uint16_t>(key, file, bits, shape, what + " (bf16 bit patterns)");
}

void write_rounded(CaseWriter& writer, const std::string& key, const std::string& file,
                   std::span<const double> expected, StorageType dtype,
                   const std::vector<std::int64_t>& shape, const std::string& what) {
  if (dtype == StorageType::fp32) {
    std::vector<float> rounded(expected.begin(), expected.end());  // one rounding to nearest even
    writer.write<float>(key, file, rounded, shape, what);
    return;
  }
  if (dtype == StorageType::fp16) {
    std::vector<Fp16> halves(expected.size());
    for (std::size_t j = 0; j < expected.size(); ++j) halves[j] = fp16_from_double(expected[j]);
    writer.write<Fp16>(key, file, halves, shape, what);
    return;
  }
  std::vector<std::uint16_t> bits(expected.size());
  for (std::size_t j = 0; j < expected.size(); ++j) bits[j] = bf16_from_double(expected[j]);
  writer.write<std::uint16_t>(key, file, bits, shape, what + " (bf16 bit patterns)");
}

}  // namespace ropecheck
