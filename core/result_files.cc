// prepare_out_dir() and the atomic write_text_file() / write_json_file() (result_files.h).
#include "core/result_files.h"

#include <fmt/format.h>

#include <fstream>
#include <system_error>

#include "core/errors.h"

namespace ropecheck {

using Json = nlohmann::ordered_json;

void prepare_out_dir(const std::filesystem::path& dir) {
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  if (error) {
    throw InvalidInput(fmt::format("cannot create output directory '{}' (--out): {}",
                                   dir.string(), error.message()));
  }
  // create_directories succeeds on an existing read-only directory; a probe write does not.
  const auto probe = dir / ".ropecheck-write-probe";
  if (!std::ofstream(probe)) {
    throw InvalidInput(fmt::format("cannot write in output directory '{}' (--out)", dir.string()));
  }
  std::filesystem::remove(probe, error);
}

void write_text_file(const std::string& text, const std::filesystem::path& path) {
  auto temporary = path;
  temporary += ".tmp";
  {
    std::ofstream file(temporary);
    file << text;
    if (!file.flush()) {
      throw InvalidInput(fmt::format("cannot write '{}'", temporary.string()));
    }
  }
  std::error_code error;
  std::filesystem::rename(temporary, path, error);
  if (error) {
    throw InvalidInput(
        fmt::format("cannot move '{}' to '{}': {}", temporary.string(), path.string(),
                    error.message()));
  }
}

void write_json_file(const Json& json, const std::filesystem::path& path) {
  // A message or counterexample is not guaranteed UTF-8; replace bad bytes rather than throw.
  write_text_file(json.dump(2, ' ', false, Json::error_handler_t::replace) + '\n', path);
}

}  // namespace ropecheck
