// A suite over the golden vectors (tests/vectors): `ropecheck vectors` written once into a scratch
// directory for the suite, its manifest's entries and files, and a port's outputs computed by the
// oracle, for `check` to judge.
#pragma once

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "core/exit_codes.h"
#include "core/storage.h"
#include "impls/oracle/oracle.h"
#include "tests/support/test_process.h"
#include "vectors/golden_cases.h"
#include "vectors/npy.h"
#include "vectors/vectors.h"

namespace ropecheck::test {

class GoldenVectorsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new ScratchDir("ropecheck_golden_vectors");
    std::ostringstream out;
    ASSERT_EQ(run_vectors(VectorsOptions{vectors()}, out), kExitOk) << out.str();
    manifest_ = new nlohmann::ordered_json(nlohmann::ordered_json::parse(slurp(vectors() / "manifest.json")));
  }
  static void TearDownTestSuite() {
    delete dir_;
    delete manifest_;
    dir_ = nullptr;
    manifest_ = nullptr;
  }

  static std::filesystem::path vectors() { return *dir_ / "golden"; }
  static const nlohmann::ordered_json& manifest() { return *manifest_; }
  static const nlohmann::ordered_json& entry(const GoldenRopeCase& c) {
    for (const auto& e : manifest()["cases"]) {
      if (e["name"] == c.name) return e;
    }
    throw std::runtime_error("no manifest entry for " + c.name);
  }
  static NpyArray file(const GoldenRopeCase& c, const std::string& key) {
    return read_npy(vectors() / entry(c)["files"][key]["path"].get<std::string>());
  }

  // A port's outputs for case c in OUT/<case>/{q,k}_out.npy: the oracle's result for `spec` at
  // `positions` (the case's own, or a broken port's reading of them) on the case's inputs, rounded
  // once to the case's storage (a bf16 case's outputs are its bf16 bits).
  static void write_oracle_outputs(const std::filesystem::path& out, const GoldenRopeCase& c, const RopeSpec& spec,
                                   const std::vector<std::int64_t>& positions) {
    std::filesystem::create_directories(out / c.name);
    const std::int64_t tokens = golden_tokens(c);
    for (const auto& [tensor, heads] : {std::pair{std::string("q"), c.q_heads}, {std::string("k"), c.kv_heads}}) {
      const auto result = oracle_rope(spec, file(c, tensor).stored_as_float32(), tokens, heads, positions);
      const std::vector<std::int64_t> shape{tokens, heads, c.spec.head_dim};
      const auto path = out / c.name / (tensor + "_out.npy");
      if (c.dtype == StorageType::bf16) {
        std::vector<std::uint16_t> bits;
        for (const double y : result) bits.push_back(bf16_from_float(static_cast<float>(y)));
        write_npy(path, bits, shape);
      } else {
        write_npy(path, std::vector<float>(result.begin(), result.end()), shape);
      }
    }
  }

 private:
  static inline ScratchDir* dir_ = nullptr;
  static inline nlohmann::ordered_json* manifest_ = nullptr;
};

}  // namespace ropecheck::test
