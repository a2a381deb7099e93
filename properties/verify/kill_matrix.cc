// kill_matrix(): the mutants' results rearranged as mutant x property.
//   ropecheck verify --mutants   (printed after the table, and in verify.json "kill_matrix")
#include "properties/verify/kill_matrix.h"

#include <algorithm>

namespace ropecheck {

KillMatrix kill_matrix(const VerifyRun& run) {
  KillMatrix matrix;
  for (const auto& subject : run.subjects) {
    if (!subject.judged_as_mutant) continue;
    for (const auto& result : subject.results) {
      if (std::find(matrix.properties.begin(), matrix.properties.end(), result.property) ==
          matrix.properties.end()) {
        matrix.properties.push_back(result.property);
      }
    }
  }
  for (const auto& subject : run.subjects) {
    if (!subject.judged_as_mutant) continue;
    MutantRow row{subject.subject.id, std::vector<std::optional<Status>>(matrix.properties.size()),
                  {}, static_cast<int>(subject.results.size()), 0};
    for (const auto& result : subject.results) {
      const auto column = static_cast<std::size_t>(
          std::find(matrix.properties.begin(), matrix.properties.end(), result.property) -
          matrix.properties.begin());
      row.cells[column] = result.status;
      if (result.status != Status::skipped) ++row.ran;
      if (failing(result.status)) row.killed_by.push_back(result.property);
    }
    matrix.mutants.push_back(std::move(row));
  }
  return matrix;
}

}  // namespace ropecheck
