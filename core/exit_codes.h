// The exit codes of the CLI contract (docs/cli.md), shared by every command and the library
// functions behind them.
#pragma once

namespace ropecheck {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailed = 1;        // a property failed, a mutant survived, a regression
inline constexpr int kExitUsage = 2;         // bad usage or input: nothing was judged
inline constexpr int kExitInconclusive = 3;  // the gate measured too much noise to decide

}  // namespace ropecheck
