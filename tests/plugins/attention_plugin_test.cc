// Attention plugins (plugins/include/ropecheck/attention_plugin.h) end to end, on the example
// (plugins/examples/example_attention.c) and its misbehaviours, through the real binary: loaded by
// --plugin, verified by every attention property in this process and in verify's forked workers
// (a context per process, and in a fork of the test), listed, benchmarked beside attention_blas; what declines is SKIPPED,
// what fails is FAILED with its call, what declares a storage without a bound is refused.
//   ctest -R AttentionPlugin
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "core/errors.h"
#include "plugins/host/attention_plugin_host.h"
#include "plugins/host/plugin_host.h"
#include "tests/support/test_process.h"

namespace ropecheck {
namespace {

using test::ScratchDir;
using test::slurp;
using test::spawn;
using Json = nlohmann::json;

// verify --plugin NAME.so (every property that applies to an attention); its results by property.
struct Verified {
  test::Exited run;
  std::map<std::string, Json> by_property;
};
Verified verify_attention(const std::string& name, const std::string& jobs) {
  const ScratchDir out("attention_plugin_verify");
  Verified v{spawn({ROPECHECK_CLI_PATH, "verify", "--plugin", test::built_plugin(name), "--cases", "25", "--jobs", jobs,
                    "--out", out.str()}),
             {}};
  if (std::filesystem::exists(out / "verify.json")) {
    const Json doc = Json::parse(slurp(out / "verify.json"));  // named: a temporary's member would dangle
    for (const auto& r : doc.at("results")) v.by_property[r.at("property")] = r;
  }
  return v;
}

// The catalogue's properties of attention subjects, as `list --json` names them.
std::vector<std::string> attention_property_ids() {
  const auto run = spawn({ROPECHECK_CLI_PATH, "list", "--json"});
  const Json list = Json::parse(run.out);
  std::vector<std::string> ids;
  for (const auto& p : list.at("properties")) {
    if (p.at("kind") == "attention") ids.push_back(p.at("id"));
  }
  return ids;
}

TEST(AttentionPlugin, TheExamplePassesEveryAttentionPropertyHereAndInForkedWorkers) {
  const auto ids = attention_property_ids();
  ASSERT_GE(ids.size(), 8u);  // attention_* and mha_*
  for (const std::string jobs : {"1", "2"}) {  // 2: the subject runs in a fork, which inits its own context
    SCOPED_TRACE("--jobs " + jobs);
    const Verified v = verify_attention("example_attention", jobs);
    EXPECT_EQ(v.run.code, 0) << v.run.out << v.run.err;
    ASSERT_EQ(v.by_property.size(), ids.size()) << v.run.out;
    for (const auto& id : ids) EXPECT_TRUE(v.by_property.contains(id)) << id;
    for (const auto& [property, r] : v.by_property) {
      EXPECT_EQ(r.at("subject"), "plugin/example_attention");
      EXPECT_EQ(r.at("status"), "PASSED") << property << ": " << r.dump(2);
    }
  }
}

// Called here, then in a fork of this process (as verify's workers are): the fork makes a context
// of its own (the example fails a call on a context another process made).
TEST(AttentionPlugin, AForkMakesItsOwnContext) {
  PluginLibrary library = load_plugin_library(test::built_plugin("example_attention"));
  const AttentionShape shape{3, 2, 1, 4, true};
  const std::vector<float> q(24, 0.5f), kv(12, 0.25f);
  std::vector<float> out(24);
  const auto call = [&] { library.attention->run(shape, nullptr, {}, q, kv, kv, out, 1); };
  ASSERT_NO_THROW(call());  // this process's context
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    try {
      call();
    } catch (...) {
      _exit(1);
    }
    _exit(out[0] == 0.25f ? 0 : 2);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "the fork's call: status " << status;
  ASSERT_NO_THROW(call());  // and this process's context still serves it
}

TEST(AttentionPlugin, DecliningIsSkippedAndAnErrorFailsNamingTheCall) {
  const Verified declines = verify_attention("unsupported_attention", "1");
  const Json& skipped = declines.by_property.at("attention_matches_reference");
  EXPECT_EQ(skipped.at("status"), "SKIPPED") << skipped.dump(2);
  EXPECT_NE(skipped.at("message").get<std::string>().find("reported unsupported for"), std::string::npos);

  const Verified errs = verify_attention("error_attention", "1");
  EXPECT_EQ(errs.run.code, 1) << errs.run.out;
  const Json& failed = errs.by_property.at("attention_matches_reference");
  EXPECT_EQ(failed.at("status"), "FAILED") << failed.dump(2);
  // Shrunk to the smallest failing call: 5 tokens.
  EXPECT_NE(failed.at("message").get<std::string>().find("plugin/error_attention returned 2 (ROPECHECK_PLUGIN_ERROR"),
            std::string::npos)
      << failed.dump(2);
  EXPECT_NE(failed.at("message").get<std::string>().find("for 5 tokens"), std::string::npos) << failed.dump(2);
}

TEST(AttentionPlugin, LoadingSaysWhatTheLibraryIs) {
  PluginLibrary library = load_plugin_library(test::built_plugin("example_attention"));
  ASSERT_NE(library.attention, nullptr);
  EXPECT_EQ(library.rope, nullptr);
  EXPECT_EQ(library.attention->id(), "plugin/example_attention");
  EXPECT_EQ(library.attention->kv_storage(), StorageType::fp32);
  ASSERT_NE(attention_plugin_info(*library.attention), nullptr);
  EXPECT_EQ(attention_plugin_info(*library.attention)->path.filename(), "example_attention.so");
  // A RoPE loader refuses it by what it is; a storage without a bound is refused, one line each.
  const auto refused = [](const std::string& name, bool rope_only) {
    try {
      if (rope_only) {
        load_plugin(test::built_plugin(name));
      } else {
        load_plugin_library(test::built_plugin(name));
      }
    } catch (const InvalidInput& e) {
      return std::string(e.what());
    }
    return std::string("loaded");
  };
  EXPECT_NE(refused("example_attention", true).find("is an attention plugin"), std::string::npos);
  EXPECT_NE(refused("bad_kv_attention", false).find("capabilities: kv_dtype 0x2"), std::string::npos)
      << refused("bad_kv_attention", false);
  // A library with neither entry names both.
  EXPECT_NE(refused("not_a_plugin", false).find("ropecheck_attention_plugin_entry"), std::string::npos);
}

TEST(AttentionPlugin, ListShowsItAmongTheAttentionImplementations) {
  const auto run = spawn({ROPECHECK_CLI_PATH, "list", "--json", "--plugin", test::built_plugin("example_attention")});
  ASSERT_EQ(run.code, 0) << run.err;
  bool listed = false;
  const Json list = Json::parse(run.out);
  for (const auto& a : list.at("attention_implementations")) {
    EXPECT_TRUE(a.contains("kv_storage")) << a.dump();
    if (a.at("id") != "plugin/example_attention") continue;
    listed = true;
    EXPECT_EQ(a.at("kv_storage"), "fp32");
    EXPECT_TRUE(a.at("plugin").at("path").get<std::string>().ends_with("example_attention.so"));
  }
  EXPECT_TRUE(listed) << run.out;
}

// Timed beside attention_blas on the same problem and threads, checked first, its ratio printed.
TEST(AttentionPlugin, BenchTimesItBesideAttentionBlas) {
  const ScratchDir out("attention_plugin_bench");
  const auto run = spawn({ROPECHECK_CLI_PATH, "bench", "--plugin", test::built_plugin("example_attention"), "--filter",
                          "^(attention_blas|plugin/example_attention)/causal_8heads/tokens:512/head_dim:128/",
                          "--threads", "1", "--repetitions", "1", "--min-time", "0.001", "--out", out.str()});
  ASSERT_EQ(run.code, 0) << run.out << run.err;
  std::vector<std::string> names;
  const Json doc = Json::parse(slurp(out / "bench.json"));
  for (const auto& b : doc.at("benchmarks")) names.push_back(b.at("name"));
  const std::string peer = "plugin/example_attention/causal_8heads/tokens:512/head_dim:128/threads:1/real_time";
  EXPECT_NE(std::find(names.begin(), names.end(), peer), names.end()) << run.out;
  EXPECT_NE(run.out.find("attention_blas/causal_8heads/tokens:512/head_dim:128/blas_threads:1 (by limit_fraction)"),
            std::string::npos)
      << run.out;
}

}  // namespace
}  // namespace ropecheck
