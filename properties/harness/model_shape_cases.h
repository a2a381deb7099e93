// The cases at real model shapes (core/model_shapes.h): after its random cases, every RoPE property
// runs once at each shape its subject runs (check_rope_property), with the shape "in force" on
// this thread so that the case pickers (rope_cases.h) take its tokens, heads and head_dim instead
// of drawing small ones. The values of a tensor that large come from a drawn seed, not element by
// element (RapidCheck would keep a shrink tree per float); the token count starts at the shape's
// and shrinks towards 1 only while the case still fails, so a shrunk counterexample keeps the path
// that failed (a split's short chunk, a blocked path past a size).
#pragma once

#include <rapidcheck.h>

#include <cstdint>
#include <optional>
#include <ostream>
#include <vector>

#include "core/model_shapes.h"
#include "core/storage.h"

namespace ropecheck {

// The shape the case pickers take on this thread, nullptr outside a shape's case.
const ModelShape* model_shape_in_force();

// Puts `shape` in force on this thread for its lifetime.
class ModelShapeInForce {
 public:
  explicit ModelShapeInForce(const ModelShape& shape);
  ~ModelShapeInForce();
  ModelShapeInForce(const ModelShapeInForce&) = delete;
  ModelShapeInForce& operator=(const ModelShapeInForce&) = delete;

 private:
  const ModelShape* previous_;
};

// A shape's case is the only case of its RapidCheck run, which RapidCheck runs at size 0, where
// every size-scaled generator gives its simplest value (base 100, no scaling, position 0):
// the shape's draws are made at the full size instead.
template <typename T>
rc::Gen<T> at_full_size(rc::Gen<T> gen) {
  return rc::gen::resize(100, std::move(gen));
}

// `value` first, shrinking towards `target` (RapidCheck's integral shrink): a shape's size that a
// counterexample gives up only where a smaller one fails too.
rc::Gen<std::int64_t> starting_at(std::int64_t value, std::int64_t target);

// A shape's positions: a decode token at its first_position; a prefill of packed sequences (one to
// 16 documents, each counting from 0, the first at a drawn offset: prefix caching), shrinking
// towards one contiguous run from 0; a vision-language shape's (shape.axes), a prompt of text and
// an image, or a vision tower's patch grid. `limit` bounds every position.
rc::Gen<std::vector<std::int64_t>> model_positions(const ModelShape& shape, std::int64_t tokens,
                                                   std::int64_t limit);

// The seed a large tensor's values come from (shown in a counterexample by this type).
struct ValuesSeed {
  std::uint64_t seed = 0;
};
void showValue(ValuesSeed seed, std::ostream& os);

// Tensors up to this many elements are drawn element by element (each value shrinks); larger ones
// from a ValuesSeed.
inline constexpr std::size_t kShrinkableElements = 4096;

// `count` values as finite_float(min_exponent, max_exponent) draws them (generators.h): the same
// decades, signs and 1 in 7 zeros, from a counter-based hash of the seed (fast: a prefill's 33
// million floats in a few hundredths of a second).
std::vector<float> seeded_floats(std::size_t count, int min_exponent, int max_exponent, ValuesSeed seed);

// Inside a property: `count` such values, drawn element by element (each value shrinks) up to
// kShrinkableElements, else from a drawn ValuesSeed; `name` is what a counterexample calls them.
std::vector<float> pick_floats(std::size_t count, int min_exponent, int max_exponent,
                               const std::string& name);

// A model shape's case allocates and frees hundreds of MB: this process's malloc keeps such
// blocks rather than handing them back to the kernel and faulting them in again on the next case
// (a quarter of such a case's time). Called by `verify` and before a property's first model shape.
void keep_large_blocks_mapped();

}  // namespace ropecheck
