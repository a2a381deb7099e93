// LeftOut (left_out.h): what a bench run left out, said once.
#include "bench/left_out.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

namespace ropecheck::bench {

std::string LeftOut::summary() const {
  if (cases_.empty()) return "";
  std::vector<std::string> levels;  // the part after the '/', in first-seen order
  for (const LeftOutCase& c : cases_) {
    const auto slash = c.id.rfind('/');
    std::string level = slash == std::string::npos ? c.id : c.id.substr(slash + 1);
    if (std::find(levels.begin(), levels.end(), level) == levels.end()) levels.push_back(std::move(level));
  }
  const bool one_reason = std::all_of(cases_.begin(), cases_.end(),
                                      [&](const LeftOutCase& c) { return c.reason == cases_.front().reason; });
  return fmt::format("{} kernels left out, levels {}: {}{}", cases_.size(), fmt::join(levels, " "),
                     cases_.front().reason, one_reason ? "" : ", and other reasons");
}

void LeftOut::write_each(std::ostream& out) const {
  for (const LeftOutCase& c : cases_) out << fmt::format("Not run on this CPU: {}: {}\n", c.id, c.reason);
}

}  // namespace ropecheck::bench
