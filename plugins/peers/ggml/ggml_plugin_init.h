// What both ggml peers' init does alike (ggml_rope_plugin.cc, ggml_flash_attn_plugin.cc): size the
// thread pool and write init's one line.
#pragma once

#include <sched.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <string>

#include "ropecheck/plugin.h"

namespace ropecheck_ggml_peer {

// The pool's size: what init allows, at most the CPUs this process may run on. ggml's members
// spin at its barriers, so a pool larger than the CPUs makes every call wait for members that are
// not running; verify asks for more threads than the machine has (a split is judged whatever the
// machine), and plugin.h's "at most" lets the peer use fewer.
inline int pool_threads(int allowed) {
  cpu_set_t set;
  int cpus = 1;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) cpus = CPU_COUNT(&set);
  return std::clamp(allowed, 1, std::max(cpus, 1));
}

// init's description line (the version, CPU level, pool), cut to the host's buffer.
inline void write_line(const ropecheck_plugin_init_args* args, const std::string& text) {
  if (args->description == nullptr || args->description_bytes == 0) return;
  const std::size_t n = std::min<std::size_t>(text.size(), args->description_bytes - 1);
  std::memcpy(args->description, text.data(), n);
  args->description[n] = '\0';
}

}  // namespace ropecheck_ggml_peer
