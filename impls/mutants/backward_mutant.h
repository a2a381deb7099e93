// The base of the backward-pass mutants (spec.h, Pass): HF's rotate_half form, forward and
// backward both correct (impls/rope/rotate_half.cc), with one hook for the backward. Each mutant
// overrides it with a bug seen in real backward kernels, written apart from their forward ones;
// the forward stays right, so only the properties of the gradient can see it.
#pragma once

#include <memory>

#include "impls/registry.h"

namespace ropecheck {
std::unique_ptr<RopeImpl> make_rotate_half_scalar();
}

namespace ropecheck::mutants {

class BackwardMutant : public RopeImpl {
 public:
  BackwardMutant() : correct_(make_rotate_half_scalar()) {}
  RopeCapabilities capabilities() const override { return correct_->capabilities(); }

 protected:
  // The correct rotation of q and k (k without heads: the single-tensor form) for `spec`.
  void correct(const RopeSpec& spec, HeadTensor q, HeadTensor k, PositionIds positions) const {
    if (k.heads == 0) return correct_->apply(spec, q, positions);
    correct_->apply(spec, q, k, positions);
  }
  // The gradient dx from dy in q and k: the mutant's bug lives here.
  virtual void backward(const RopeSpec& spec, HeadTensor q, HeadTensor k,
                        PositionIds positions) const = 0;

  void rotate_qk(const RopeSpec& spec, HeadTensor q, HeadTensor k,
                 PositionIds positions) const override {
    if (spec.pass == Pass::forward) return correct(spec, q, k, positions);
    backward(spec, q, k, positions);
  }

 private:
  std::unique_ptr<RopeImpl> correct_;
};

}  // namespace ropecheck::mutants
