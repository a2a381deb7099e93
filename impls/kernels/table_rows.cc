// TableRows: the fast kernel's cos/sin table rows kept across calls (table_rows.h).
#include "impls/kernels/table_rows.h"

#include <new>

namespace ropecheck {
namespace {

constexpr std::align_val_t kCacheLine{64};

}  // namespace

void TableRows::AlignedDelete::operator()(float* p) const { ::operator delete[](p, kCacheLine); }

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
      fresh.rows.reset(new (kCacheLine) float[floats]);
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
