// TableRows: the fast kernel's cos/sin table rows kept across calls (table_rows.h).
#include "impls/kernels/table_rows.h"

#include <new>

namespace ropecheck {
namespace {

// A page, not a cache line: where a block lies within a page decides which L1 sets its rows
// share with q and k (kernel_scratch.h's ScratchAllocator says what that moved).
constexpr std::align_val_t kBlockAlignment{4096};

}  // namespace

void TableRows::AlignedDelete::operator()(float* p) const { ::operator delete[](p, kBlockAlignment); }

void TableRows::reset(int rotary_dim) {
  blocks_.clear();
  last_ = nullptr;
  bytes_ = 0;
  stride_ = row_bytes(rotary_dim) / sizeof(float);
}

kernels::TableRowCache TableRows::cache() {
  return {[](void* owner, std::int64_t first, bool** ready) { return static_cast<TableRows*>(owner)->block(first, ready); },
          this, static_cast<std::int64_t>(stride_)};
}

float* TableRows::block(std::int64_t first, bool** ready) {
  if (last_ == nullptr || first != last_first_) {
    auto found = blocks_.find(first);
    if (found == blocks_.end()) {
      const std::size_t floats = static_cast<std::size_t>(kernels::kAnchorEvery) * stride_;
      if (bytes_ + floats * sizeof(float) > kMaxBytes) return nullptr;
      Block fresh;
      fresh.rows.reset(new (kBlockAlignment) float[floats]);
      bytes_ += floats * sizeof(float);
      found = blocks_.emplace(first, std::move(fresh)).first;
    }
    last_first_ = first;
    last_ = &found->second;
  }
  *ready = &last_->ready;
  return last_->rows.get();
}

}  // namespace ropecheck
