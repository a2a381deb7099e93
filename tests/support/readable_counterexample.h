// What a failure must say so that a porter, who has none of ropecheck's sources, can read it: the
// call that failed with each value named (tokens, heads, kv_heads, threads, positions, the spec
// really used) and every drawn value under a name, never RapidCheck's type names, "<???>" or a
// line of a source file. Used on every mutant's failures (MutantKill) and on the text a command
// prints and writes (console, verify.json, JUnit).
#pragma once

#include <regex>
#include <sstream>
#include <string>

namespace ropecheck::test {

// "" when `counterexample` (with the message beside it) reads as it must, else what is wrong.
// `rope_calls`: the failure is a RoPE property's, so it must show the call that failed.
inline std::string unreadable_counterexample(const std::string& message, const std::string& counterexample,
                                             bool rope_calls) {
  const std::string both = message + "\n" + counterexample;
  if (both.find("<\?\?\?>") != std::string::npos) return "a value without a printer: <\?\?\?>";
  static const std::regex source_line(R"([A-Za-z_0-9]+\.(cc|h|hpp|cpp|c):[0-9]+)");
  if (std::regex_search(both, source_line)) return "a line of a source file";
  // RapidCheck names an unnamed draw by its type: "long: 1", "ropecheck::RopeSpec: ...".
  static const std::regex type_named(
      R"((^|\n) *((unsigned |signed )?(long|int|short|char|bool|double|float|long long)|std::[^:\n]*|ropecheck::[^:\n]*|rc::[^:\n]*|[^:\n]*<[^:\n]*>): )");
  if (std::smatch m; std::regex_search(counterexample, m, type_named)) {
    return "a value named by its type: '" + m[0].str() + "'";
  }
  if (rope_calls) {
    static const std::regex call(
        R"((the call that failed|call [0-9]+ of [0-9]+[^:]*): [a-z0-9_]+/[A-Za-z0-9_.]+: tokens=[0-9]+ heads=[0-9]+ kv_heads=[0-9]+ threads=[0-9]+( shift=[0-9]+ floats)? positions(=\[[^\n]*\]( \([0-9]+ positions, -?[0-9]+ to -?[0-9]+\))?|(\(t,h,w\)|\(row,column\))=\[[^\n]*\]( \([0-9]+ tokens\))?)\n  spec: head_dim=[0-9]+ rotary_dim=[0-9]+ base=)");
    if (!std::regex_search(counterexample, call)) return "no call with tokens, heads, kv_heads, threads, positions and spec";
  }
  return "";
}

}  // namespace ropecheck::test
