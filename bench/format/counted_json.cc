// counted.json: writing and reading (counted_json.h).
#include "bench/format/counted_json.h"

#include <fmt/format.h>

#include <fstream>
#include <set>

#include "core/errors.h"

namespace ropecheck {
namespace {

using nlohmann::json;

constexpr const char* kEventNames[] = {"Ir", "Dr", "Dw", "I1mr", "D1mr", "D1mw", "ILmr", "DLmr", "DLmw"};

std::uint64_t* event_fields(EventCounts& c, std::size_t i) {
  std::uint64_t* fields[] = {&c.ir, &c.dr, &c.dw, &c.i1mr, &c.d1mr, &c.d1mw, &c.ilmr, &c.dlmr, &c.dlmw};
  return fields[i];
}

json events_json(EventCounts c) {
  json j = json::object();
  for (std::size_t i = 0; i < std::size(kEventNames); ++i) j[kEventNames[i]] = *event_fields(c, i);
  return j;
}

EventCounts events_from(const json& j) {
  EventCounts c;
  for (std::size_t i = 0; i < std::size(kEventNames); ++i) *event_fields(c, i) = j.at(kEventNames[i]).get<std::uint64_t>();
  return c;
}

}  // namespace

double CycleModel::estimate(const EventCounts& c) const {
  const double ll = static_cast<double>(c.ll_misses());
  const double served_by_ll = static_cast<double>(c.l1_misses()) - ll;
  return static_cast<double>(c.ir) + l1_miss_cycles * served_by_ll + ll_miss_cycles * ll;
}

std::string CycleModel::formula() const {
  return fmt::format("Ir + {:g} x (L1 misses - LL misses) + {:g} x LL misses", l1_miss_cycles, ll_miss_cycles);
}

const CountedCase* CountedRun::find(const std::string& name) const {
  for (const auto& c : cases) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

json counted_run_json(const CountedRun& run) {
  json cases = json::array();
  for (const auto& c : run.cases) {
    cases.push_back({{"name", c.name},
                     {"calls", c.calls},
                     {"totals", events_json(c.totals)},
                     {"per_call", {{"estimated_cycles", c.estimated_cycles},
                                   {"instructions", c.instructions()},
                                   {"l1_misses", c.l1_misses()},
                                   {"ll_misses", c.ll_misses()}}}});
  }
  return {{"schema", kCountedSchema},
          {"started", run.started},
          {"cpu_model", run.cpu_model},
          {"valgrind", run.valgrind},
          {"simulated_caches", run.simulated_caches},
          {"counted_isa", run.counted_isa},
          {"isa_note", run.isa_note},
          {"cycle_model", {{"l1_miss_cycles", run.model.l1_miss_cycles},
                           {"ll_miss_cycles", run.model.ll_miss_cycles},
                           {"formula", run.model.formula()}}},
          {"ropecheck_commit", run.ropecheck_commit},
          {"cases", cases}};
}

bool is_counted_run(const std::filesystem::path& path) {
  std::error_code error;
  if (std::filesystem::is_directory(path, error)) return std::filesystem::is_regular_file(path / kCountedFileName, error);
  return path.filename() == kCountedFileName && std::filesystem::is_regular_file(path, error);
}

CountedRun read_counted_run(const std::filesystem::path& path) {
  std::error_code error;
  const auto file = std::filesystem::is_directory(path, error) ? path / kCountedFileName : path;
  std::ifstream in(file);
  if (!in) throw InvalidInput(fmt::format("{}: cannot be read (a counted run's {})", file.string(), kCountedFileName));
  CountedRun run;
  try {
    const json j = json::parse(in);
    if (j.at("schema").get<std::string>() != kCountedSchema) {
      throw InvalidInput(fmt::format("{}: schema '{}', expected '{}'", file.string(),
                                     j.at("schema").get<std::string>(), kCountedSchema));
    }
    run.started = j.at("started").get<std::string>();
    run.cpu_model = j.at("cpu_model").get<std::string>();
    run.valgrind = j.at("valgrind").get<std::string>();
    run.simulated_caches = j.at("simulated_caches").get<std::string>();
    run.counted_isa = j.at("counted_isa").get<std::string>();
    run.isa_note = j.at("isa_note").get<std::string>();
    run.model.l1_miss_cycles = j.at("cycle_model").at("l1_miss_cycles").get<double>();
    run.model.ll_miss_cycles = j.at("cycle_model").at("ll_miss_cycles").get<double>();
    run.ropecheck_commit = j.at("ropecheck_commit").get<std::string>();
    std::set<std::string> seen;
    for (const auto& c : j.at("cases")) {
      CountedCase one;
      one.name = c.at("name").get<std::string>();
      one.calls = c.at("calls").get<int>();
      one.totals = events_from(c.at("totals"));
      if (one.calls < 1 || one.totals.ir == 0) {
        throw InvalidInput(fmt::format("{}: case {} has {} calls and {} instructions: nothing was counted",
                                       file.string(), one.name, one.calls, one.totals.ir));
      }
      if (!seen.insert(one.name).second) throw InvalidInput(fmt::format("{}: case {} twice", file.string(), one.name));
      one.estimated_cycles = run.model.estimate(one.totals) / one.calls;
      run.cases.push_back(std::move(one));
    }
  } catch (const json::exception& e) {
    throw InvalidInput(fmt::format("{}: not a counted run ({})", file.string(), e.what()));
  }
  return run;
}

}  // namespace ropecheck
