// The implementations and ceilings a bench run leaves out because this CPU (or ROPECHECK_ISA)
// does not run their level. The console gets one line for all of them (the number and the levels),
// the run's output each one with its reason: on a CPU without AVX-512 a line per case repeated
// what the verdict's "Skipped" section says (issue 55).
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace ropecheck::bench {

struct LeftOutCase {
  std::string id;      // kernel/avx512, rotation_bf16/avx512bf16
  std::string reason;  // "this CPU lacks AVX-512F", "capped by ROPECHECK_ISA=avx2"
};

class LeftOut {
 public:
  void add(std::string id, std::string reason) { cases_.push_back({std::move(id), std::move(reason)}); }
  bool empty() const { return cases_.empty(); }
  // "11 kernels left out, levels avx512 avx512bf16: this CPU lacks AVX-512F" (kernels and their
  // ceilings): one console line, the first reason named; "" when nothing was left out.
  std::string summary() const;
  // One line per case, with its reason, for the run's output (the main job's log).
  void write_each(std::ostream& out) const;

 private:
  std::vector<LeftOutCase> cases_;
};

}  // namespace ropecheck::bench
