// Ids of implementations from outside ropecheck: a plugin ("plugin/<name>") or a Python callable
// ("python/<module>.<function>"). The report lists them as peers, and the main job's verdict is
// about ropecheck's own implementations, not theirs.
#pragma once

#include <string_view>

namespace ropecheck {

inline bool is_outside_id(std::string_view id) { return id.starts_with("plugin/") || id.starts_with("python/"); }

}  // namespace ropecheck
