// `ropecheck ARGS...` run in this process (cli/cli_app.h's run_cli), its exit status and both
// streams: how the vectors tests drive `check` on the outputs they write.
#pragma once

#include <sstream>
#include <string>
#include <vector>

#include "cli/cli_app.h"

namespace ropecheck::test {

struct CliRun {
  int code;
  std::string out, err;
};

inline CliRun run_in_process(std::vector<std::string> args) {
  args.insert(args.begin(), "ropecheck");
  std::vector<const char*> argv;
  for (const auto& a : args) argv.push_back(a.c_str());
  std::ostringstream out, err;
  const int code = run_cli(static_cast<int>(argv.size()), argv.data(), out, err);
  return {code, out.str(), err.str()};
}

}  // namespace ropecheck::test
