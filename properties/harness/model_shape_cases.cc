// Real model shapes in the property cases (model_shape_cases.h).
#include "properties/harness/model_shape_cases.h"

#include <malloc.h>

#include <algorithm>
#include <cmath>

#include "properties/harness/axis_generators.h"
#include "properties/harness/generators.h"

namespace ropecheck {
namespace {

thread_local const ModelShape* in_force = nullptr;

}  // namespace

const ModelShape* model_shape_in_force() { return in_force; }

ModelShapeInForce::ModelShapeInForce(const ModelShape& shape) : previous_(in_force) {
  in_force = &shape;
}
ModelShapeInForce::~ModelShapeInForce() { in_force = previous_; }

rc::Gen<std::int64_t> starting_at(std::int64_t value, std::int64_t target) {
  return rc::Gen<std::int64_t>([=](const rc::Random&, int) {
    return rc::shrinkable::shrinkRecur(value, [=](std::int64_t v) {
      return rc::shrink::towards(v, target);
    });
  });
}

namespace {

// A vision-language prompt as Qwen2-VL's get_rope_index positions it: text (every axis at its
// index), an image (t fixed at the next index, h and w its rows and columns from there), text
// again from one past the image's largest position.
rc::Gen<std::vector<std::int64_t>> prompt_with_image(std::int64_t tokens) {
  return rc::gen::exec([=] {
    const auto before = *rc::gen::inRange<std::int64_t>(0, tokens / 4 + 1).as("text tokens before the image");
    const auto after = *rc::gen::inRange<std::int64_t>(0, tokens / 4 + 1).as("text tokens after it");
    const auto width = *rc::gen::element<std::int64_t>(16, 24, 32).as("image patches to a row");
    const std::int64_t patches = std::max<std::int64_t>(tokens - before - after, 0);
    std::vector<std::int64_t> p;
    p.reserve(static_cast<std::size_t>(3 * tokens));
    for (std::int64_t t = 0; t < before; ++t) p.insert(p.end(), 3, t);
    const auto image = grid_positions(3, static_cast<std::size_t>(patches), width, before);
    p.insert(p.end(), image.begin(), image.end());
    std::int64_t next = before;
    for (const std::int64_t m : image) next = std::max(next, m + 1);
    while (static_cast<std::int64_t>(p.size()) < 3 * tokens) p.insert(p.end(), 3, next++);
    return p;
  });
}

}  // namespace

rc::Gen<std::vector<std::int64_t>> model_positions(const ModelShape& shape, std::int64_t tokens,
                                                   std::int64_t limit) {
  using Positions = std::vector<std::int64_t>;
  if (shape.axes.mode == AxisMode::vision) {  // the patches of one image, 32 to a row
    return rc::gen::just(grid_positions(2, static_cast<std::size_t>(tokens), 32, 0));
  }
  if (shape.axes.mode != AxisMode::none) return prompt_with_image(tokens);
  if (shape.first_position > 0) {  // decode: the position the shape names, each token after it
    Positions p(static_cast<std::size_t>(tokens));
    const std::int64_t first = std::min(shape.first_position, std::max<std::int64_t>(limit - tokens, 0));
    for (std::int64_t t = 0; t < tokens; ++t) p[static_cast<std::size_t>(t)] = first + t;
    return rc::gen::just(p);
  }
  return rc::gen::exec([=] {
    const auto documents = *rc::gen::inRange<std::int64_t>(1, 17).as("packed documents");
    auto starts = *rc::gen::container<Positions>(static_cast<std::size_t>(documents - 1),
                                                 rc::gen::inRange<std::int64_t>(1, std::max<std::int64_t>(tokens, 2)))
                       .as("documents' first tokens");
    std::sort(starts.begin(), starts.end());
    const auto offset =
        *rc::gen::inRange<std::int64_t>(0, std::max<std::int64_t>(limit - tokens, 0) + 1).as("first position");
    Positions p(static_cast<std::size_t>(tokens));
    std::int64_t next = offset;
    std::size_t s = 0;
    for (std::int64_t t = 0; t < tokens; ++t) {
      while (s < starts.size() && starts[s] == t) {  // a document starts here
        next = 0;
        ++s;
      }
      p[static_cast<std::size_t>(t)] = next++;
    }
    return p;
  });
}

void showValue(ValuesSeed seed, std::ostream& os) { os << "from seed " << seed.seed; }

std::vector<float> pick_floats(std::size_t count, int min_exponent, int max_exponent,
                               const std::string& name) {
  if (count <= kShrinkableElements) {
    return *rc::gen::container<std::vector<float>>(count, finite_float(min_exponent, max_exponent)).as(name);
  }
  const auto seed = *at_full_size(rc::gen::map(rc::gen::arbitrary<std::uint64_t>(),
                                               [](std::uint64_t s) { return ValuesSeed{s}; })).as(name);
  return seeded_floats(count, min_exponent, max_exponent, seed);
}

void keep_large_blocks_mapped() {
  static const bool kept = [] {
    mallopt(M_MMAP_THRESHOLD, 1 << 30);
    mallopt(M_TRIM_THRESHOLD, 1 << 30);
    return true;
  }();
  (void)kept;
}

}  // namespace ropecheck
