// The `ropecheck` CLI contract, end to end: spawns the real binary (ROPECHECK_CLI_PATH) and checks
// exit codes, stdout/stderr and verify.json; plus in-process checks of the ropecheck_cli pieces.
//   cmake --build build-cli --target ropecheck cli_test && build-cli/cli_test
//   ctest --test-dir build-cli -L cli
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "cli/cli_app.h"
#include "cli/tee_stream.h"
#include "core/exit_codes.h"
#include "properties/verify/verify.h"
#include "core/machine_info.h"
#include "properties/property.h"
#include "properties/verify/repro.h"
#include "core/errors.h"
#include "impls/registry.h"
#include "tests/support/levels.h"
#include "tests/support/readable_counterexample.h"
#include "tests/support/test_process.h"
#include "core/text_table.h"
#include "properties/verify/verify_run.h"

namespace ropecheck {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;
using test::Exited;
using test::lines_containing;
using test::ScratchDir;
using test::slurp;
using test::spawn;

// Small on purpose: these tests check the CLI's plumbing, not the properties' power.
constexpr const char* kFewCases = "10";

Exited ropecheck_cli(std::vector<std::string> args, const fs::path& cwd = {}) {
  args.insert(args.begin(), ROPECHECK_CLI_PATH);
  return spawn(args, cwd);
}

// Runs a command line as printed for a user (`ropecheck verify ...`) through the shell, with
// `ropecheck` meaning the binary under test: proves the printed quoting is right too.
Exited shell(const std::string& printed_command, const std::string& extra_args) {
  const std::string prefix = "ropecheck ";
  if (printed_command.rfind(prefix, 0) != 0) {
    throw std::runtime_error("not a ropecheck command: " + printed_command);
  }
  return spawn({"/bin/sh", "-c",
                shell_quote(ROPECHECK_CLI_PATH) + " " + printed_command.substr(prefix.size()) +
                    " " + extra_args});
}

Json read_json(const fs::path& path) { return Json::parse(slurp(path)); }

std::vector<std::string> registry_ids() {
  std::vector<std::string> ids;
  for (const auto* impl : rope_implementations()) ids.emplace_back(impl->id());
  for (const auto* impl : sinusoidal_implementations()) ids.emplace_back(impl->id());
  for (const auto* impl : rope_mutants()) ids.emplace_back(impl->id());
  for (const auto* impl : sinusoidal_mutants()) ids.emplace_back(impl->id());
  for (const auto* impl : attention_mutants()) ids.emplace_back(impl->id());
  for (const auto* impl : rope_cache_implementations()) ids.emplace_back(impl->id());
  for (const auto* impl : rope_cache_mutants()) ids.emplace_back(impl->id());
  for (const auto* impl : rope_form_implementations()) ids.emplace_back(impl->id());
  for (const auto* impl : rope_form_mutants()) ids.emplace_back(impl->id());
  return ids;
}

std::vector<std::string> mutant_ids() {
  std::vector<std::string> ids;
  for (const auto* impl : rope_mutants()) ids.emplace_back(impl->id());
  for (const auto* impl : sinusoidal_mutants()) ids.emplace_back(impl->id());
  for (const auto* impl : attention_mutants()) ids.emplace_back(impl->id());
  for (const auto* impl : rope_cache_mutants()) ids.emplace_back(impl->id());
  for (const auto* impl : rope_form_mutants()) ids.emplace_back(impl->id());
  return ids;
}

// A real RoPE implementation and a RoPE property to run on it (the definition, if registered).
std::string real_rope_impl() {
  if (find_rope("rotation_matrix/scalar") != nullptr) return "rotation_matrix/scalar";
  return std::string(rope_implementations().front()->id());
}

const Property* some_rope_property() {
  if (const Property* p = find_property("oracle_agreement")) return p;
  for (const auto& p : property_catalogue()) {
    if (p.kind == SubjectKind::rope) return &p;
  }
  return nullptr;
}

// ---- list --------------------------------------------------------------------------------

// The fused form and its modes (issue 56): its own heading, every mode named, each fused
// implementation with the layouts, storages, scale directions and padding rule it declares.
TEST(CliList, ShowsTheFusedCacheFormAndItsModes) {
  const auto run = ropecheck_cli({"list"});
  ASSERT_EQ(run.code, 0) << run.err;
  const auto heading = run.out.find("Fused RoPE + paged KV-cache write");
  ASSERT_NE(heading, std::string::npos) << run.out;
  for (const char* mode : {"nhd", "hnd", "mla", "fp8_e4m3", "fp8_e5m2", "multiplied", "divided", "skip_token",
                           "rotate_q_only"}) {
    EXPECT_NE(run.out.find(mode, heading), std::string::npos) << mode;
  }
  for (const auto* impl : rope_cache_implementations()) {
    const auto rows = test::lines_containing(run.out, std::string(impl->id()) + " ");
    ASSERT_FALSE(rows.empty()) << impl->id();
    EXPECT_NE(rows.front().find(std::string(to_string(impl->capabilities().padding))), std::string::npos) << rows.front();
  }
}

TEST(CliList, TextNamesEveryRegistryIdAndPropertyWithMutantsApart) {
  const auto run = ropecheck_cli({"list"});
  ASSERT_EQ(run.code, 0) << run.err;
  for (const auto& id : registry_ids()) EXPECT_NE(run.out.find(id), std::string::npos) << id;
  for (const auto& p : property_catalogue()) {
    EXPECT_NE(run.out.find(std::string(p.id)), std::string::npos) << p.id;
  }
  // Mutants are listed after a heading that says what they are, never among the real ones.
  const auto heading = run.out.find("MUTANTS");
  ASSERT_NE(heading, std::string::npos);
  for (const auto& id : mutant_ids()) EXPECT_GT(run.out.find(id), heading) << id;
}

TEST(CliList, JsonParsesAndHoldsEveryRegistryId) {
  const auto run = ropecheck_cli({"list", "--json"});
  ASSERT_EQ(run.code, 0) << run.err;
  const Json list = Json::parse(run.out);
  EXPECT_EQ(list["schema"], "ropecheck.list/1");
  const auto ids = [&](const char* key) {
    std::set<std::string> s;
    for (const auto& e : list[key]) s.insert(e["id"].get<std::string>());
    return s;
  };
  std::set<std::string> rope, sinusoidal, attention, rope_cache, mutants, properties;
  for (const auto* impl : rope_cache_implementations()) rope_cache.emplace(impl->id());
  for (const auto* impl : rope_implementations()) rope.emplace(impl->id());
  for (const auto* impl : sinusoidal_implementations()) sinusoidal.emplace(impl->id());
  for (const auto* impl : attention_implementations()) attention.emplace(impl->id());
  for (const auto& id : mutant_ids()) mutants.insert(id);
  for (const auto& p : property_catalogue()) properties.emplace(p.id);
  EXPECT_EQ(ids("rope_implementations"), rope);
  EXPECT_EQ(ids("sinusoidal_implementations"), sinusoidal);
  EXPECT_EQ(ids("attention_implementations"), attention);
  EXPECT_EQ(ids("rope_cache_implementations"), rope_cache);
  for (const auto& impl : list["rope_cache_implementations"]) {
    for (const char* key : {"layouts", "storages", "scale_directions"}) EXPECT_FALSE(impl[key].empty()) << impl["id"];
    EXPECT_TRUE(impl["padding"] == "skip_token" || impl["padding"] == "rotate_q_only") << impl["id"];
  }
  std::set<std::string> rope_form;
  for (const auto* impl : rope_form_implementations()) rope_form.emplace(impl->id());
  EXPECT_EQ(ids("rope_form_implementations"), rope_form);
  for (const auto& impl : list["rope_form_implementations"]) {
    for (const char* key : {"storages", "angle_sources"}) EXPECT_FALSE(impl[key].empty()) << impl["id"];
    EXPECT_TRUE(impl["norm_weights"].empty() == (impl["norm_precision"] == "")) << impl["id"];
  }
  EXPECT_EQ(ids("mutants"), mutants);
  EXPECT_EQ(ids("properties"), properties);
  for (const auto& impl : list["rope_implementations"]) {
    const auto& caps = impl["capabilities"];
    EXPECT_FALSE(caps["layouts"].empty()) << impl["id"];
    EXPECT_FALSE(caps["angle_precisions"].empty()) << impl["id"];
    EXPECT_TRUE(caps["isa"].is_string()) << impl["id"];
    EXPECT_TRUE(caps["partial_rotary"].is_boolean()) << impl["id"];
    // An unavailable implementation says why.
    if (!caps["available"].get<bool>()) {
      EXPECT_NE(caps["unavailable_reason"], "") << impl["id"];
    }
  }
  for (const auto& p : list["properties"]) {
    EXPECT_TRUE(p["kind"] == "rope" || p["kind"] == "sinusoidal" || p["kind"] == "attention" || p["kind"] == "rope_cache" ||
                p["kind"] == "rope_form")
        << p["id"];
    EXPECT_NE(p["description"], "") << p["id"];
  }
}

// ---- verify: a passing run and its verify.json ---------------------------------------------

TEST(CliVerify, OneImplOnePropertyPassesAndWritesMatchingJson) {
  const Property* property = some_rope_property();
  ASSERT_NE(property, nullptr) << "no RoPE property registered";
  const std::string impl = real_rope_impl();
  const ScratchDir scratch;
  const fs::path out = scratch / "nested" / "out";  // --out creates missing parents
  const std::vector<std::string> args = {"verify", "--impl", impl, "--property",
                                         std::string(property->id), "--cases", kFewCases,
                                         "--seed", "7", "--out", out.string()};
  const auto run = ropecheck_cli(args);
  ASSERT_EQ(run.code, 0) << run.out << run.err;

  // The table row on stdout; progress on stderr only.
  const auto rows = lines_containing(run.out, impl);
  ASSERT_EQ(rows.size(), 1u) << run.out;
  EXPECT_EQ(rows[0].rfind("PASSED", 0), 0u) << rows[0];
  EXPECT_NE(rows[0].find(property->id), std::string::npos) << rows[0];
  EXPECT_EQ(run.out.find("[info]"), std::string::npos) << "progress leaked to stdout";
  EXPECT_NE(run.err.find(impl), std::string::npos) << "no progress line on stderr";

  const Json doc = read_json(out / "verify.json");
  EXPECT_EQ(doc["schema"], "ropecheck.verify/3");
  EXPECT_EQ(doc["seed"], 7);
  EXPECT_EQ(doc["cases"], 10);
  EXPECT_EQ(doc["mutants"], false);
  EXPECT_FALSE(doc.contains("kill_matrix"));
  EXPECT_EQ(doc["tool"]["name"], "ropecheck");
  EXPECT_NE(doc["tool"]["git_commit"], "");
  EXPECT_TRUE(doc["machine"]["cpu_flags"].contains(cpu_flags_of_interest().front()));
  std::vector<std::string> recorded = doc["command_line"];
  ASSERT_EQ(recorded.size(), args.size() + 1);
  EXPECT_TRUE(std::equal(args.begin(), args.end(), recorded.begin() + 1));
  ASSERT_EQ(doc["results"].size(), 1u);
  const auto& result = doc["results"][0];
  EXPECT_EQ(result["subject"], impl);
  EXPECT_EQ(result["property"], std::string(property->id));
  EXPECT_EQ(result["status"], "PASSED");
  EXPECT_EQ(result["mutant"], false);
  EXPECT_GE(result["cases"].get<int>(), 1);
  EXPECT_EQ(result["reproduce"], "");
  EXPECT_EQ(doc["summary"]["passed"], 1);
  EXPECT_EQ(doc["summary"]["exit_code"], 0);
}

// ---- verify: bad usage and input exit 2 naming the problem ---------------------------------

struct UsageCase {
  const char* name;
  std::vector<std::string> args;
  std::vector<std::string> err_mentions;
};

void PrintTo(const UsageCase& c, std::ostream* os) { *os << c.name; }

class CliUsageError : public testing::TestWithParam<UsageCase> {};

TEST_P(CliUsageError, Exits2NamingTheProblem) {
  const auto& c = GetParam();
  const ScratchDir out;
  auto args = c.args;
  // Were a bad case accepted, it must run small and write into a scratch directory.
  if (args.front() == "verify") {
    // Right after the command, so that a case can end on an option missing its value.
    if (std::find(args.begin(), args.end(), "--cases") == args.end()) {
      args.insert(args.begin() + 1, {"--cases", kFewCases});
    }
    if (std::find(args.begin(), args.end(), "--out") == args.end()) {
      args.insert(args.begin() + 1, {"--out", out.str()});
    }
  }
  const auto run = ropecheck_cli(args, out.path());  // the main job's cases would write into cwd
  EXPECT_EQ(run.code, 2) << run.out << run.err;
  for (const auto& mention : c.err_mentions) {
    EXPECT_NE(run.err.find(mention), std::string::npos) << "stderr lacks '" << mention << "':\n"
                                                        << run.err;
  }
  EXPECT_FALSE(fs::exists(out / "verify.json")) << "a rejected run must not write results";
}

std::vector<UsageCase> usage_cases() {
  const std::string impl = real_rope_impl();
  return {
      {"UnknownImpl", {"verify", "--impl", "nope/scalar"}, {"nope/scalar", "--impl", impl}},
      {"UnknownProperty", {"verify", "--property", "no_such_property"},
       {"no_such_property", "--property"}},
      {"ZeroCases", {"verify", "--impl", impl, "--cases", "0"}, {"--cases", "0"}},
      {"NegativeCases", {"verify", "--impl", impl, "--cases", "-5"}, {"--cases"}},
      {"NonNumericCases", {"verify", "--impl", impl, "--cases", "many"}, {"--cases"}},
      {"NegativeJobs", {"verify", "--impl", impl, "--jobs", "-1"}, {"--jobs", "-1"}},
      {"UnparsableSeed", {"verify", "--impl", impl, "--seed", "abc"}, {"--seed", "abc"}},
      {"NegativeSeed", {"verify", "--impl", impl, "--seed", "-1"}, {"--seed", "-1"}},
      {"BadReproduceString", {"verify", "--impl", impl, "--reproduce", "not-a-reproduce-string"},
       {"reproduce", "not-a-reproduce-string"}},
      {"OutUnderAFile", {"verify", "--impl", impl, "--out", "/dev/null/sub"},
       {"/dev/null/sub", "--out"}},
      {"UnknownCommand", {"frobnicate"}, {"frobnicate"}},
      {"UnknownOption", {"list", "--frobnicate"}, {"--frobnicate"}},
      {"MissingValue", {"verify", "--impl"}, {"--impl"}},
      {"CheckWithoutOutputs", {"check", "--vectors", "/nonexistent/golden"}, {"--outputs"}},
      {"CheckMissingVectors", {"check", "--vectors", "/nonexistent/golden", "--outputs", "/tmp"},
       {"/nonexistent/golden", "--vectors"}},
      {"MainJobZeroCases", {"--cases", "0"}, {"--cases", "0"}},
      {"MainJobCasesBeforeACommand", {"--cases", "5", "list"}, {"--cases", "verify --cases N"}},
  };
}

INSTANTIATE_TEST_SUITE_P(Cli, CliUsageError, testing::ValuesIn(usage_cases()),
                         [](const testing::TestParamInfo<UsageCase>& info) {
                           return std::string(info.param.name);
                         });

// ---- verify: a failure prints a __REPRO command that really replays it ----------------------

TEST(CliVerify, MutantFailsAndItsReproCommandReplaysTheSameFailure) {
  ASSERT_NE(find_rope("mutant/sin_sign_flipped"), nullptr) << "mutant not registered";
  ASSERT_NE(some_rope_property(), nullptr) << "no RoPE property registered";
  const ScratchDir out;
  const auto run = ropecheck_cli(
      {"verify", "--impl", "mutant/sin_sign_flipped", "--cases", "20", "--out", out.str()});
  ASSERT_EQ(run.code, 1) << run.out << run.err;
  ASSERT_FALSE(lines_containing(run.out, "FAILED").empty()) << run.out;
  const auto repros = lines_containing(run.out, "__REPRO: ");
  ASSERT_FALSE(repros.empty()) << run.out;

  const std::string command = repros[0].substr(repros[0].find("__REPRO: ") + 9);
  const auto flag = command.find("--property ");
  ASSERT_NE(flag, std::string::npos) << command;
  const auto start = flag + std::string("--property ").size();
  const std::string property = command.substr(start, command.find(' ', start) - start);
  ASSERT_NE(command.find("--reproduce '"), std::string::npos) << command;

  // The original failure's record, to compare the replay's with.
  const Json first = read_json(out / "verify.json");
  const auto original = std::find_if(first["results"].begin(), first["results"].end(),
                                     [&](const Json& r) { return r["property"] == property; });
  ASSERT_NE(original, first["results"].end());
  ASSERT_EQ((*original)["status"], "FAILED");
  EXPECT_EQ((*original)["repro_command"], command);

  const ScratchDir replay_out;
  const auto replay = shell(command, "--out " + shell_quote(replay_out.str()));
  ASSERT_EQ(replay.code, 1) << replay.out << replay.err;
  const Json second = read_json(replay_out / "verify.json");
  ASSERT_EQ(second["results"].size(), 1u) << "a replay runs only the pair it names";
  const auto& replayed = second["results"][0];
  EXPECT_EQ(replayed["subject"], "mutant/sin_sign_flipped");
  EXPECT_EQ(replayed["property"], property);
  EXPECT_EQ(replayed["status"], "FAILED");
  // The same shrunk case, not merely another failure.
  EXPECT_EQ(replayed["counterexample"], (*original)["counterexample"]);
  EXPECT_EQ(replayed["reproduce"], (*original)["reproduce"]);
  const auto replay_repros = lines_containing(replay.out, "__REPRO: ");
  ASSERT_EQ(replay_repros.size(), 1u) << replay.out;
  EXPECT_EQ(replay_repros[0], repros[0]);
}

// A failure reads the same to a porter in the console, verify.json and JUnit: the call that failed
// with each value named (the thread count of a split wrong only from 3 threads on, which verify's
// default draws on a 2-core machine too), the spec really used, no type names, no source lines.
TEST(CliVerify, CounterexampleNamesTheCallInConsoleJsonAndJunit) {
  const ScratchDir out;
  const auto junit = out / "verify.xml";
  const auto run = ropecheck_cli({"verify", "--impl", "mutant/kernel_split_remainder_one", "--property",
                                  "oracle_agreement", "--model-shapes", "none", "--junit", junit.string(),
                                  "--out", out.str()});
  ASSERT_EQ(run.code, 1) << run.out << run.err;
  // The console's block: its lines between "counterexample:" and "__REPRO:", indented by 6.
  const auto begin = run.out.find("    counterexample:\n");
  const auto end = run.out.find("    __REPRO: ");
  ASSERT_NE(begin, std::string::npos) << run.out;
  ASSERT_NE(end, std::string::npos) << run.out;
  ASSERT_LT(begin, end) << "the __REPRO line comes after the counterexample\n" << run.out;
  std::string console;
  std::istringstream block(run.out.substr(begin, end - begin));
  std::string line;
  std::getline(block, line);  // "counterexample:"
  while (std::getline(block, line)) console += (line.size() > 6 ? line.substr(6) : "") + "\n";
  EXPECT_EQ(test::unreadable_counterexample(run.out, console, true), "") << console;
  EXPECT_NE(console.find("threads="), std::string::npos) << console;

  const Json json = read_json(out / "verify.json");
  ASSERT_EQ(json["results"].size(), 1u);
  const auto& r = json["results"][0];
  EXPECT_EQ(test::unreadable_counterexample(r["message"], r["counterexample"], true), "") << r.dump(2);
  // The console prints what verify.json holds (its long value lists cut short): the call whole.
  const std::string json_text = r["counterexample"];
  const auto calls_end = console.find("values the case drew:");
  ASSERT_NE(calls_end, std::string::npos) << console;
  EXPECT_EQ(json_text.substr(0, calls_end), console.substr(0, calls_end));

  std::ifstream xml_in(junit);
  const std::string xml((std::istreambuf_iterator<char>(xml_in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(test::unreadable_counterexample(xml, xml.substr(xml.find("counterexample: ") + 16), true), "")
      << xml;
}

TEST(CliVerify, ReproduceStringForAPairOutsideTheSelectionExits2) {
  ASSERT_NE(find_rope("mutant/sin_sign_flipped"), nullptr) << "mutant not registered";
  ASSERT_NE(some_rope_property(), nullptr) << "no RoPE property registered";
  const ScratchDir out;
  const auto run = ropecheck_cli(
      {"verify", "--impl", "mutant/sin_sign_flipped", "--cases", kFewCases, "--out", out.str()});
  const Json doc = read_json(out / "verify.json");
  const auto failed = std::find_if(doc["results"].begin(), doc["results"].end(),
                                   [](const Json& r) { return r["reproduce"] != ""; });
  ASSERT_NE(failed, doc["results"].end()) << run.out;
  // The string replays the mutant, but only a real implementation is selected: a silent
  // non-replay would be worse than an error.
  const auto other = ropecheck_cli({"verify", "--impl", real_rope_impl(), "--reproduce",
                                    (*failed)["reproduce"].get<std::string>(), "--out",
                                    out.str()});
  EXPECT_EQ(other.code, 2) << other.out << other.err;
  EXPECT_NE(other.err.find("mutant/sin_sign_flipped"), std::string::npos) << other.err;
}

// ---- verify --mutants: the kill matrix -----------------------------------------------------

TEST(CliVerify, MutantsRunPrintsKillMatrixAndVerdictPerMutant) {
  ASSERT_NE(some_rope_property(), nullptr) << "no RoPE property registered";
  const ScratchDir out;
  const auto run = ropecheck_cli({"verify", "--impl", real_rope_impl(), "--mutants", "--cases",
                                  kFewCases, "--out", out.str()});
  ASSERT_TRUE(run.code == 0 || run.code == 1) << run.out << run.err;
  EXPECT_NE(run.out.find("Kill matrix"), std::string::npos) << run.out;
  const Json doc = read_json(out / "verify.json");
  ASSERT_TRUE(doc.contains("kill_matrix"));
  std::vector<std::string> rows;
  bool all_killed = true;
  for (const auto& row : doc["kill_matrix"]["mutants"]) {
    const std::string id = row["mutant"];
    rows.push_back(id);
    const bool killed = row["verdict"] == "KILLED";
    all_killed = all_killed && killed;
    EXPECT_EQ(killed, !row["killed_by"].empty()) << id;
    // One verdict line per mutant on stdout.
    const auto verdicts = lines_containing(run.out, id + "  ");
    EXPECT_TRUE(std::any_of(verdicts.begin(), verdicts.end(), [&](const std::string& line) {
      return line.find(killed ? "KILLED (by " : "SURVIVED (") != std::string::npos;
    })) << id << "\n" << run.out;
  }
  EXPECT_EQ(rows, mutant_ids());
  const bool real_passed = doc["summary"]["unexpected_failures"] == 0;
  EXPECT_EQ(run.code, real_passed && all_killed ? 0 : 1);
}

TEST(CliVerify, MutantNoSelectedPropertyCanCatchSurvivesAndExits1) {
  const Property* property = some_rope_property();
  ASSERT_NE(property, nullptr) << "no RoPE property registered";
  ASSERT_FALSE(sinusoidal_mutants().empty()) << "no sinusoidal mutant registered";
  // A RoPE-only selection cannot touch a sinusoidal mutant: it must be reported as a survivor.
  const std::string survivor(sinusoidal_mutants().front()->id());
  const ScratchDir out;
  const auto run = ropecheck_cli({"verify", "--impl", real_rope_impl(), "--property",
                                  std::string(property->id), "--mutants", "--cases", kFewCases,
                                  "--out", out.str()});
  EXPECT_EQ(run.code, 1) << run.out << run.err;
  const auto lines = lines_containing(run.out, survivor + "  ");
  EXPECT_TRUE(std::any_of(lines.begin(), lines.end(), [](const std::string& line) {
    return line.find("SURVIVED") != std::string::npos;
  })) << run.out;
}

// ---- --help and --version (the main job: main_job_test.cc) ---------------------------------

TEST(CliHelp, EveryCommandHasHelpAndTheAppAVersion) {
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"--help"}, {"list", "--help"}, {"verify", "--help"}, {"bench", "--help"},
           {"report", "--help"}, {"compare", "--help"}, {"vectors", "--help"}, {"check", "--help"}}) {
    const auto run = ropecheck_cli(args);
    EXPECT_EQ(run.code, 0) << args.front() << run.err;
    EXPECT_NE(run.out.find("Usage"), std::string::npos) << run.out;
    if (args.front() == "--help") {
      EXPECT_NE(run.out.find("--cases"), std::string::npos) << run.out;  // the main job's options
      EXPECT_NE(run.out.find("--verbose"), std::string::npos) << run.out;
    }
  }
  const auto version = ropecheck_cli({"--version"});
  EXPECT_EQ(version.code, 0);
  EXPECT_NE(version.out.find("ropecheck 0."), std::string::npos) << version.out;
}

// ---- in process: the library pieces -------------------------------------------------------

TEST(CliLibrary, RunCliMapsInvalidInputToExit2WithoutThrowing) {
  const char* argv[] = {"ropecheck", "verify", "--impl", "nope/scalar"};
  std::ostringstream out, err;
  EXPECT_EQ(run_cli(4, argv, out, err), kExitUsage);
  EXPECT_NE(err.str().find("nope/scalar"), std::string::npos);
}

// --verbose is the main job's: after a command it is bad usage, not silently ignored.
TEST(CliLibrary, VerboseIsTheMainJobsOption) {
  const char* argv[] = {"ropecheck", "--verbose", "list"};
  std::ostringstream out, err;
  EXPECT_EQ(run_cli(3, argv, out, err), kExitUsage);
  EXPECT_NE(err.str().find("--verbose is the main job's"), std::string::npos) << err.str();
}

// What --verbose prints and the main job's log hold the same text: one stream writes both.
TEST(CliLibrary, TeeStreamWritesBothStreams) {
  std::ostringstream console, log;
  TeeStream both(console, log);
  both << "STATUS " << 42 << '\n' << std::string(5000, 'x') << std::flush;
  EXPECT_EQ(console.str(), "STATUS 42\n" + std::string(5000, 'x'));
  EXPECT_EQ(log.str(), console.str());
}

TEST(CliLibrary, RunVerifyThrowsInvalidInputForBadOptions) {
  VerifyOptions options;
  options.cases = 0;
  const ScratchDir scratch;
  options.out_dir = scratch.path();
  std::ostringstream out;
  EXPECT_THROW(run_verify(options, out), InvalidInput);
}

PropertyResult throws_runtime_error(const Subject&, const RunConfig&) {
  throw std::runtime_error("generator exploded");
}
PropertyResult throws_invalid_input(const Subject&, const RunConfig&) {
  throw InvalidInput("bad reproduce string");
}

TEST(CliLibrary, PropertyThrowingIsAFailedResultButInvalidInputPropagates) {
  ASSERT_FALSE(rope_implementations().empty());
  const Subject subject = registry_subjects(false).front();
  ASSERT_NE(subject.rope, nullptr);
  const Property exploding{"exploding", "throws", SubjectKind::rope, &throws_runtime_error};
  const auto result = run_property_guarded(exploding, subject, RunConfig{});
  EXPECT_EQ(result.status, Status::failed);
  EXPECT_NE(result.message.find("generator exploded"), std::string::npos) << result.message;
  EXPECT_EQ(result.subject, subject.id);
  EXPECT_EQ(result.property, "exploding");
  const Property rejecting{"rejecting", "throws", SubjectKind::rope, &throws_invalid_input};
  EXPECT_THROW(run_property_guarded(rejecting, subject, RunConfig{}), InvalidInput);
}

constexpr const char* kX86Cpuinfo =
    "processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: Example CPU @ 3GHz\n"
    "flags\t\t: fpu avx2 avx512f avx512vl\n\n"
    "processor\t: 1\nmodel name\t: Other\nflags\t\t: fpu avx512bw\n";

TEST(CliLibrary, ParseCpuinfoReadsTheFirstProcessor) {
  const auto info = parse_cpuinfo(kX86Cpuinfo, Architecture::x86_64);
  EXPECT_EQ(info.cpu_model, "Example CPU @ 3GHz");
  EXPECT_EQ(info.logical_cpus, 2);
  const std::vector<std::pair<std::string, bool>> expected = {
      {"avx2", true}, {"avx512f", true}, {"avx512bw", false}, {"avx512vl", true},
      {"avx512_bf16", false}};
  EXPECT_EQ(info.flags, expected);
  EXPECT_EQ(info.emulated_on, "");
  EXPECT_EQ(parse_cpuinfo("").cpu_model, "unknown");
}

TEST(CliLibrary, ParseCpuinfoNamesAnArmCoreByItsPart) {
  const auto info = parse_cpuinfo(
      "processor\t: 0\nBogoMIPS\t: 2100.00\nFeatures\t: fp asimd fphp asimdhp sve bf16\n"
      "CPU implementer\t: 0x41\nCPU architecture: 8\nCPU variant\t: 0x1\nCPU part\t: 0xd40\n\n"
      "processor\t: 1\nFeatures\t: fp asimd\nCPU implementer\t: 0x41\nCPU part\t: 0xd40\n",
      Architecture::aarch64);
  EXPECT_EQ(info.cpu_model, "ARM Neoverse-V1 (implementer 0x41 part 0xd40)");
  EXPECT_EQ(info.logical_cpus, 2);
  EXPECT_EQ(info.emulated_on, "");
  const std::vector<std::pair<std::string, bool>> expected = {
      {"asimd", true}, {"asimdhp", true}, {"sve", true}, {"sve2", false}, {"bf16", true}, {"i8mm", false}};
  EXPECT_EQ(info.flags, expected);
}

// QEMU's user mode passes the host's /proc/cpuinfo through: an aarch64 build that reads an x86
// CPU's knows it is emulated, and says so wherever it names its machine.
TEST(CliLibrary, ParseCpuinfoSeesAnAarch64BuildUnderEmulation) {
  const auto info = parse_cpuinfo(kX86Cpuinfo, Architecture::aarch64);
  EXPECT_EQ(info.emulated_on, "Example CPU @ 3GHz");
  EXPECT_EQ(info.cpu_model, "aarch64 under emulation on Example CPU @ 3GHz");
  for (const auto& [flag, present] : info.flags) EXPECT_FALSE(present) << flag << ": the host's, not this process's";
  EXPECT_EQ(parse_cpuinfo(kX86Cpuinfo, Architecture::x86_64).emulated_on, "");
}

TEST(CliLibrary, ShellQuoteRoundTripsThroughTheShell) {
  EXPECT_EQ(shell_quote("mutant/sin_sign_flipped"), "mutant/sin_sign_flipped");
  EXPECT_EQ(shell_quote(""), "''");
  const std::string nasty = "it's a $HOME `x` \"q\"";
  const auto echoed = spawn({"/bin/sh", "-c", "printf %s " + shell_quote(nasty)});
  EXPECT_EQ(echoed.out, nasty);
}

TEST(CliLibrary, TextTableAlignsColumnsAndKeepsNotesUnderTheirRow) {
  TextTable table({"A", "NUMBER", "C"},
                  {TextTable::Align::left, TextTable::Align::right, TextTable::Align::left});
  table.add_row({"long-cell", "1", "x"});
  table.add_note("  note");
  table.add_row({"s", "22", "y"});
  std::ostringstream out;
  table.print(out);
  EXPECT_EQ(out.str(),
            "A          NUMBER  C\n"
            "long-cell       1  x\n"
            "  note\n"
            "s              22  y\n");
}

}  // namespace
}  // namespace ropecheck

namespace ropecheck {
namespace {

TEST(CliVerify, IsaCapSkipsHigherLevelsWithTheReason) {
  ScratchDir out;
  const auto run = ropecheck_cli({"verify", "--isa", "scalar", "--impl", "kernel/" + test::level_name(test::widest_level()), "--impl",
                                  "kernel/scalar", "--property", "oracle_agreement", "--cases", "10",
                                  "--out", out.str()});
  ASSERT_EQ(run.code, 0) << run.out << run.err;
  EXPECT_FALSE(lines_containing(run.out, "capped by ROPECHECK_ISA=scalar").empty()) << run.out;
  EXPECT_EQ(ropecheck_cli({"verify", "--isa", "sse9"}).code, 2);
}

}  // namespace
}  // namespace ropecheck

namespace ropecheck {
namespace {

TEST(CliCompare, MissingBenchFileExits2NamingIt) {
  const ScratchDir dir;
  const auto run = ropecheck_cli(
      {"compare", (dir / "base" / "bench.json").string(), (dir / "cur").string()});
  EXPECT_EQ(run.code, 2) << run.out << run.err;
  EXPECT_NE(run.err.find("base/bench.json: no such file"), std::string::npos) << run.err;
  EXPECT_EQ(ropecheck_cli({"compare", "--help"}).code, 0);
  EXPECT_EQ(ropecheck_cli({"compare", "a.json", "b.json", "--threshold", "five"}).code, 2);
}

}  // namespace
}  // namespace ropecheck
