// Which runs may share a line: a machine's id, from the facts a bench run records about its
// hardware. Runs from different machines are never drawn on one line, so the id carries a
// fingerprint of every fact that changes what a kernel can do (CPU model, logical CPUs, the ISA
// flags and levels, the dispatched level, OpenBLAS's core), beside a readable name:
//   amd-epyc-2cpu-avx512-3f9a1c07        (derived), or  ci-large-3f9a1c07  (--machine ci-large)
// Not in it: the clock Google Benchmark read (it moves with frequency scaling), the host name
// (CI runners get a new one each job), the compiler (a toolchain change is a step on the line,
// shown as such, not a new line).
#pragma once

#include <string>

#include "history/entry.h"

namespace ropecheck::history {

// 8 hex digits (of FNV-1a, 64 bits) of the facts above, in a fixed order.
std::string machine_fingerprint(const EntryMachine& machine);

// `name` (when not empty) or a name derived from the CPU model, the logical CPUs and the
// dispatched level, then '-' and the fingerprint; fit for a file name (is_file_name_id). Throws
// InvalidInput for a `name` that is not.
std::string machine_id(const EntryMachine& machine, const std::string& name);

// A counted run's line (entry.h EntryCounted): its counts depend on the simulated machine, not on
// the host that ran Valgrind, so the fingerprint hashes what was simulated and how it is costed
// (the counted ISA, the simulated caches, Valgrind's version, the cycle model), and the id reads
//   counted-avx2-5be01c3a
// whatever host (or --machine name) recorded it: every host's counts of one build fall on one line.
std::string counted_machine_fingerprint(const EntryCounted& counted);
std::string counted_machine_id(const EntryCounted& counted);

// FNV-1a (64 bits) over `text`, as 16 hex digits (also the digest of a run's cases).
std::string fnv1a_hex(const std::string& text);

}  // namespace ropecheck::history
