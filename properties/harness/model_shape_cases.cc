// Real model shapes in the property cases (model_shape_cases.h).
#include "properties/harness/model_shape_cases.h"

#include <algorithm>
#include <bit>
#include <cmath>

#include "properties/harness/generators.h"

namespace ropecheck {
namespace {

thread_local const ModelShape* in_force = nullptr;

// splitmix64's finaliser: a well-mixed 64-bit value from a counter, so that any element's value
// depends on the seed and its index alone.
std::uint64_t mix(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

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

rc::Gen<std::vector<std::int64_t>> model_positions(const ModelShape& shape, std::int64_t tokens,
                                                   std::int64_t limit) {
  using Positions = std::vector<std::int64_t>;
  if (shape.first_position > 0) {  // decode: the position the shape names, each token after it
    Positions p(static_cast<std::size_t>(tokens));
    const std::int64_t first = std::min(shape.first_position, std::max<std::int64_t>(limit - tokens, 0));
    for (std::int64_t t = 0; t < tokens; ++t) p[static_cast<std::size_t>(t)] = first + t;
    return rc::gen::just(p);
  }
  return rc::gen::exec([=] {
    const auto documents = *rc::gen::inRange<std::int64_t>(1, 17);
    auto starts = *rc::gen::container<Positions>(static_cast<std::size_t>(documents - 1),
                                                 rc::gen::inRange<std::int64_t>(1, std::max<std::int64_t>(tokens, 2)));
    std::sort(starts.begin(), starts.end());
    const auto offset = *rc::gen::inRange<std::int64_t>(0, std::max<std::int64_t>(limit - tokens, 0) + 1);
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

void showValue(ValuesSeed seed, std::ostream& os) { os << "values from seed " << seed.seed; }

std::vector<float> seeded_storage_floats(std::size_t count, StorageType storage, ValuesSeed seed) {
  const int lo = storage == StorageType::fp16 ? kFp16MinExponent : -40;
  const int hi = storage == StorageType::fp16 ? kFp16MaxExponent : 40;
  std::vector<float> x(count);
  const std::uint64_t key = mix(seed.seed + 0x9e3779b97f4a7c15ull);
  for (std::size_t i = 0; i < count; ++i) {
    const std::uint64_t r = mix(key ^ (i * 0x9e3779b97f4a7c15ull));
    // Separate bits for each choice, ranges by multiply-shift rather than division (a hundred
    // million values a run): bits 0-15 zero or not, 16-38 the fraction, 39-62 the exponent, 63
    // the sign.
    const auto sign = static_cast<std::uint32_t>(r >> 63) << 31;
    if ((((r & 0xffffu) * 14) >> 16) < 2) {  // finite_float(): 1 in 14 each of +0 and -0
      x[i] = std::bit_cast<float>(sign);
      continue;
    }
    // The float's fields directly: every exponent drawn is a normal one (fp32's bias 127).
    const auto fraction = static_cast<std::uint32_t>(r >> 16) & 0x7fffffu;
    const auto span = static_cast<std::uint64_t>(hi - lo + 1);
    const auto exponent = static_cast<std::uint32_t>(
        lo + static_cast<int>((((r >> 39) & 0xffffffu) * span) >> 24) + 127);
    x[i] = std::bit_cast<float>(sign | exponent << 23 | fraction);
  }
  return x;
}

}  // namespace ropecheck
