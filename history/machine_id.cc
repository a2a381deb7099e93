// machine_fingerprint(), machine_id() and fnv1a_hex() (machine_id.h).
#include "history/machine_id.h"

#include <fmt/format.h>

#include <cctype>
#include <cstdint>

#include "core/errors.h"
#include "reports/writer.h"

namespace ropecheck::history {
namespace {

// reports' slug, at most 40 characters, "unknown" for none.
std::string short_slug(const std::string& text) {
  std::string out = slug(text).substr(0, 40);
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out.empty() ? "unknown" : out;
}

}  // namespace

std::string fnv1a_hex(const std::string& text) {
  std::uint64_t hash = 14695981039346656037ull;
  for (const char c : text) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 1099511628211ull;
  }
  return fmt::format("{:016x}", hash);
}

std::string machine_fingerprint(const EntryMachine& m) {
  std::string facts = fmt::format("cpu={}\ncpus={}\nflags=", m.cpu_model, m.logical_cpus);
  for (const auto& f : m.cpu_flags) facts += f + ' ';
  facts += "\nlevels=";
  for (const auto& l : m.isa_levels) facts += l + ' ';
  facts += fmt::format("\ndispatched={}\nopenblas_core={}\n", m.dispatched_isa, m.openblas_core);
  return fnv1a_hex(facts).substr(0, 8);
}

std::string counted_machine_fingerprint(const EntryCounted& c) {
  const std::string facts =
      fmt::format("counted\nisa={}\ncaches={}\nvalgrind={}\ncycles={}\n", c.counted_isa, c.simulated_caches,
                  c.valgrind, c.model.formula());
  return fnv1a_hex(facts).substr(0, 8);
}

std::string counted_machine_id(const EntryCounted& c) {
  return fmt::format("counted-{}-{}", short_slug(c.counted_isa), counted_machine_fingerprint(c));
}

std::string machine_id(const EntryMachine& m, const std::string& name) {
  if (!name.empty() && (!is_file_name_id(name) || name.size() > 80)) {
    throw InvalidInput(fmt::format(
        "--machine '{}': a machine name is 1-80 letters, digits, '.', '_' or '-'", name));
  }
  const std::string base = name.empty() ? fmt::format("{}-{}cpu-{}", short_slug(m.cpu_model), m.logical_cpus,
                                                      short_slug(m.dispatched_isa))
                                        : name;
  return base + "-" + machine_fingerprint(m);
}

}  // namespace ropecheck::history
