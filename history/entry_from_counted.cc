// entry_from_counted() (entry_from_counted.h): counted.json read by its own reader (every case
// checked), mapped onto the entry's fields, and read back by the history's reader before it is
// returned, as a bench run is (entry_from_run.cc).
#include "history/entry_from_counted.h"

#include <fmt/format.h>

#include "bench/format/counted_json.h"
#include "core/errors.h"
#include "history/iso_time.h"
#include "history/machine_id.h"

namespace ropecheck::history {

namespace fs = std::filesystem;

Entry entry_from_counted(const fs::path& run, const CommitFacts& commit, std::int64_t now) {
  const CountedRun counted = read_counted_run(run);
  std::error_code error;
  const fs::path file = fs::is_directory(run, error) ? run / kCountedFileName : run;
  Entry e;
  e.commit = {commit.id, commit.time, commit.branch, commit.subject, commit.ancestors};
  const auto started = parse_iso8601(counted.started);
  if (!started) {
    throw InvalidInput(fmt::format("{}: \"started\" '{}' is not an ISO 8601 date-time", file.string(), counted.started));
  }
  e.run.time = *started;
  e.run.recorded = now;
  e.counted = EntryCounted{counted.counted_isa, counted.isa_note, counted.simulated_caches, counted.valgrind,
                           counted.model};
  // The simulated machine names the line; the host's CPU is kept for the record only.
  e.machine.cpu_model = counted.cpu_model;
  e.machine.dispatched_isa = counted.counted_isa;
  e.machine.fingerprint = counted_machine_fingerprint(*e.counted);
  e.machine.id = counted_machine_id(*e.counted);
  e.build.ropecheck_commit = counted.ropecheck_commit;
  for (const auto& c : counted.cases) {
    EntryCase out;
    out.name = c.name;
    out.counted = EntryCountedCase{c.calls, c.totals, c.estimated_cycles, c.instructions(), c.l1_misses(),
                                   c.ll_misses()};
    e.cases.push_back(std::move(out));
  }
  if (e.cases.empty()) throw InvalidInput(fmt::format("{}: no counted case to record", file.string()));
  // Counts repeat exactly from process to process, so the digest takes the run's start and host
  // CPU beside them: two runs of one build are two runs, one file recorded twice is one.
  nlohmann::ordered_json identity = entry_to_json(e)["cases"];
  identity.push_back(format_utc(e.run.time));
  identity.push_back(counted.cpu_model);
  identity.push_back(counted.ropecheck_commit);
  e.run.digest = fnv1a_hex(identity.dump());
  return entry_from_json(entry_to_json(e), file);
}

}  // namespace ropecheck::history
