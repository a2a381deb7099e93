// Sinusoidal-table benchmark cases: every sinusoidal implementation filling a positions x d_model
// table (shapes.h), with the in-place probe over the same bytes as its same-run limit.
// Napkin math: the table is written once, positions * d_model * 4 bytes (4096 x 512: 8.4 MB);
// the probe reads and writes it, so limit_fraction = probe time / fill time compares the fill
// with one streaming pass over its own memory (a fill is sin/cos-bound: expect well below 1).
#pragma once

#include <deque>
#include <vector>

#include "bench/ratio_table.h"
#include "impls/sinusoidal/absolute_encoding.h"
#include "bench/format/shapes.h"

namespace ropecheck::bench {

struct TableCase {
  TableCase(const SinusoidalImpl* i, TableShape s) : impl(i), shape(s) {}
  const SinusoidalImpl* impl;
  const TableShape shape;
};

std::vector<Comparison> register_table_cases(std::deque<TableCase>& owner);

}  // namespace ropecheck::bench
