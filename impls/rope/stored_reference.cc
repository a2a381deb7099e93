// complex_multiply_{bf16,fp16}/scalar and rotate_half_{bf16,fp16}/scalar: the reference forms on
// 16-bit storage, as models run them there. Meta's LLaMA code does exactly this in fp16:
// `xq.float()`, the complex product in fp32, `.type_as(xq)`; HF's rotate_half upcast the same
// way. So: widen (exact), the fp32 reference, one rounding to the storage per output.
#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "impls/registry.h"

namespace ropecheck {

std::unique_ptr<RopeImpl> make_complex_multiply_scalar();
std::unique_ptr<RopeImpl> make_rotate_half_scalar();

namespace {

class StoredReference final : public RopeImpl {
 public:
  StoredReference(std::unique_ptr<RopeImpl> reference, StorageType storage, std::string id)
      : reference_(std::move(reference)),
        storage_(storage),
        id_(std::move(id)),
        summary_(fmt::format("{} on {} storage: widened, rotated in fp32, rounded once per output",
                             reference_->summary(), to_string(storage))) {}

  std::string_view id() const override { return id_; }
  std::string_view summary() const override { return summary_; }
  RopeCapabilities capabilities() const override {
    RopeCapabilities caps = reference_->capabilities();
    caps.storage = storage_;
    return caps;
  }

 protected:
  // fp32 tensors holding storage values (the properties' way in): rotate, round the results.
  void rotate_qk(const RopeSpec& spec, HeadTensor q, HeadTensor k,
                 PositionIds positions) const override {
    rotate_in_fp32(spec, q, k, positions);
    for (float& v : q.data) v = round_to_storage(v, storage_);
    for (float& v : k.data) v = round_to_storage(v, storage_);
  }
  void rotate_qk_bf16(const RopeSpec& spec, Bf16HeadTensor q, Bf16HeadTensor k,
                      PositionIds positions) const override {
    rotate_stored(spec, q, k, positions, float_from_bf16, bf16_from_float);
  }
  void rotate_qk_fp16(const RopeSpec& spec, Fp16HeadTensor q, Fp16HeadTensor k,
                      PositionIds positions) const override {
    rotate_stored(spec, q, k, positions, float_from_fp16, fp16_from_float);
  }

 private:
  void rotate_in_fp32(const RopeSpec& spec, HeadTensor q, HeadTensor k,
                      PositionIds positions) const {
    // k without heads: the single-tensor apply() (q alone).
    if (k.heads == 0) return reference_->apply(spec, q, positions);
    reference_->apply(spec, q, k, positions);
  }

  template <typename Element, typename Widen, typename Narrow>
  void rotate_stored(const RopeSpec& spec, HeadTensorOf<Element> q, HeadTensorOf<Element> k,
                     PositionIds positions, Widen widen, Narrow narrow) const {
    std::vector<float> q32(q.data.size()), k32(k.data.size());
    std::transform(q.data.begin(), q.data.end(), q32.begin(), widen);
    std::transform(k.data.begin(), k.data.end(), k32.begin(), widen);
    rotate_in_fp32(spec, {q32, q.tokens, q.heads, q.head_dim}, {k32, k.tokens, k.heads, k.head_dim},
                   positions);
    std::transform(q32.begin(), q32.end(), q.data.begin(), narrow);
    std::transform(k32.begin(), k32.end(), k.data.begin(), narrow);
  }

  std::unique_ptr<RopeImpl> reference_;
  StorageType storage_;
  std::string id_;
  std::string summary_;
};

}  // namespace

std::unique_ptr<RopeImpl> make_complex_multiply_bf16() {
  return std::make_unique<StoredReference>(make_complex_multiply_scalar(), StorageType::bf16,
                                           "complex_multiply_bf16/scalar");
}
std::unique_ptr<RopeImpl> make_complex_multiply_fp16() {
  return std::make_unique<StoredReference>(make_complex_multiply_scalar(), StorageType::fp16,
                                           "complex_multiply_fp16/scalar");
}
std::unique_ptr<RopeImpl> make_rotate_half_bf16() {
  return std::make_unique<StoredReference>(make_rotate_half_scalar(), StorageType::bf16,
                                           "rotate_half_bf16/scalar");
}
std::unique_ptr<RopeImpl> make_rotate_half_fp16() {
  return std::make_unique<StoredReference>(make_rotate_half_scalar(), StorageType::fp16,
                                           "rotate_half_fp16/scalar");
}

}  // namespace ropecheck
