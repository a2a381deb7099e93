// A history arranged for plotting and step detection: every commit in one order (by committer
// date), every line (a machine and build type: runs of different machines never share one), and
// per case and line the runs of each commit, each run reduced to the medians of its repetitions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "history/store.h"

namespace ropecheck::history {

struct CommitRef {
  std::string id, branch, subject;
  std::int64_t time = 0;       // committer date
  std::int64_t ancestors = 0;  // git rev-list --count (0: unknown): orders commits of one second
  std::int64_t first_run = 0;  // the earliest run recorded at it (the last tie-break)
};

// A line: runs of one machine (machine_id.h) with one build type.
struct LineRef {
  std::string machine_id, build_type;
  std::string label;          // the machine id, plus the build type when its machine has several
  bool counted = false;       // a counted line (entry.h): its runs are counts, not times
  std::size_t latest = 0;     // index into entries of its newest run (its facts, for the page)
  std::size_t runs = 0;
  std::vector<std::size_t> commits;  // indices into commits, in order
};

// One run (one process) of a case: the medians of its repetitions, or its counts per call.
struct RunValue {
  double fraction = 0;  // limit_fraction; 0: not measured
  double rate = 0;      // in the series' unit; 0: not measured in it
  double calls_per_second = 0;  // 1e9 / real time; 0: counted
  double estimated_cycles = 0, instructions = 0;  // per call, counted; 0: timed
  std::size_t entry = 0;  // index into entries
  std::string rate_unit;  // of `rate` in this run
};

struct CommitRuns {
  std::size_t commit = 0;  // index into HistoryView::commits
  std::vector<RunValue> runs;
};

// One case on one line.
struct Series {
  std::string case_name;
  std::size_t line = 0;
  std::string rate_unit;  // the newest run's "GB/s" or "GFLOP/s"; "" when it has none
  std::vector<CommitRuns> commits;  // in commit order, only commits with runs

  // What steps are found in: on a counted line, the estimated cycles per call (lower is better);
  // on a timed one, the same-run fraction when every run has it (the quieter measure,
  // gate/README.md), else the rate when every run has it, else calls per second.
  enum class Measure { fraction, rate, calls, cycles };
  Measure measure() const;
  std::size_t runs() const;
};

struct HistoryView {
  std::vector<StoredEntry> entries;
  // Oldest first: by committer date, then (commits of the same second) by ancestry, then by
  // their first run, then by id.
  std::vector<CommitRef> commits;
  std::vector<LineRef> lines;
  std::vector<std::string> cases;    // in the order the entries first list them
  std::vector<Series> series;        // by case (in `cases` order), then by line
};

// Arranges `entries` (read_history()). Throws InvalidInput when one commit has two dates in two
// files (the order of the plots would be ambiguous), naming both.
HistoryView arrange_history(std::vector<StoredEntry> entries);

// A measure's value of a run, 0 when not measured.
double value_of(const RunValue& run, Series::Measure measure);

// Whether a lower value of `measure` is the better one (cycles; the rates and fractions are
// higher-is-better): which way of a step is a slowdown.
bool lower_is_better(Series::Measure measure);
// Whether a step of `change` (relative, in the measure) is a slowdown.
bool is_slowdown(Series::Measure measure, double change);

}  // namespace ropecheck::history
