// Result files (verify.json, bench.json, accuracy.json, compare.json, ...): where they go by
// default and how they are written, so that a reader (a report, a CI job) never sees half a file.
#pragma once

#include <cmath>
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

namespace ropecheck {

// Where `ropecheck` and `ropecheck verify` write their files unless told otherwise.
inline constexpr const char* kDefaultOutDir = "reports/out/latest";

// A number as JSON, or null when it is not finite (JSON has no NaN or Inf).
inline nlohmann::ordered_json number_or_null(double x) {
  return std::isfinite(x) ? nlohmann::ordered_json(x) : nlohmann::ordered_json(nullptr);
}

// Writes `json` to `path` through a temporary file renamed into place. Throws InvalidInput when
// the file cannot be written.
void write_json_file(const nlohmann::ordered_json& json, const std::filesystem::path& path);

// The same for any text (JUnit XML, a markdown summary): whole or not at all.
void write_text_file(const std::string& text, const std::filesystem::path& path);

// Creates `dir` (and its parents) and checks that a file can be written in it. Throws
// InvalidInput naming the directory otherwise; called before a run so it fails fast.
void prepare_out_dir(const std::filesystem::path& dir);

}  // namespace ropecheck
