// The multi-axis RoPE mutants (multi_axis_mutant.h), one bug of a vision-language port each.
#include <cmath>
#include <memory>

#include "impls/mutants/multi_axis_mutant.h"

namespace ropecheck {
namespace {

using mutants::MultiAxisMutant;

// mutant/mrope_section_off_by_one: the first section one pair too long (a `<=` for a `<` at the
// section end, or a cumulative sum started at 1).
class SectionOffByOne final : public MultiAxisMutant {
 public:
  std::string_view id() const override { return "mutant/mrope_section_off_by_one"; }
  std::string_view summary() const override {
    return "MRoPE with the first section one pair too long (pair s_t takes axis t)";
  }

 protected:
  std::vector<AxisMode> axis_modes() const override { return {AxisMode::none, AxisMode::mrope}; }
  std::vector<int> pair_axis(const RopeSpec& spec) const override {
    auto axis = pair_axes(spec.axes, spec.rotary_dim);
    const auto end = static_cast<std::size_t>(spec.axes.sections[0]);
    if (end < axis.size()) axis[end] = 0;  // BUG: i <= s_t takes t
    return axis;
  }
};

// mutant/mrope_axes_swapped: h and w read from each other's positions (a [3, tokens] tensor
// built as (t, w, h), or a grid's rows and columns transposed).
class AxesSwapped final : public MultiAxisMutant {
 public:
  std::string_view id() const override { return "mutant/mrope_axes_swapped"; }
  std::string_view summary() const override {
    return "MRoPE and interleaved MRoPE with the h and w positions swapped";
  }

 protected:
  std::vector<AxisMode> axis_modes() const override {
    return {AxisMode::none, AxisMode::mrope, AxisMode::imrope};
  }
  int position_of_axis(int a) const override { return a == 0 ? 0 : 3 - a; }  // BUG
};

// mutant/imrope_offset_wrong: the interleaving started one pair early (h on i mod 3 = 0, w on
// i mod 3 = 1), an off-by-one in Qwen3-VL's slice(offset, length, 3).
class InterleaveOffsetWrong final : public MultiAxisMutant {
 public:
  std::string_view id() const override { return "mutant/imrope_offset_wrong"; }
  std::string_view summary() const override {
    return "interleaved MRoPE with the h, w interleaving starting at pair 0 instead of 1";
  }

 protected:
  std::vector<AxisMode> axis_modes() const override { return {AxisMode::none, AxisMode::imrope}; }
  std::vector<int> pair_axis(const RopeSpec& spec) const override {
    if (spec.axes.mode != AxisMode::imrope) return pair_axes(spec.axes, spec.rotary_dim);
    const auto& s = spec.axes.sections;
    std::vector<int> axis(static_cast<std::size_t>(spec.rotary_dim / 2), 0);
    for (std::size_t i = 0; i < axis.size(); ++i) {
      const auto n = static_cast<int>(i);
      axis[i] = n % 3 == 0 && n < 3 * s[1] ? 1 : n % 3 == 1 && n < 3 * s[2] ? 2 : 0;  // BUG
    }
    return axis;
  }
};

// mutant/mrope_section_not_doubled: HF's cos.split(mrope_section * 2) written without the "* 2"
// (and the last section stretched to fill the features): the second half-split half takes its
// axes from the wrong sections, so a pair's two features rotate by different positions.
class SectionNotDoubled final : public MultiAxisMutant {
 public:
  std::string_view id() const override { return "mutant/mrope_section_not_doubled"; }
  std::string_view summary() const override {
    return "MRoPE splitting the rotary_dim features of cos/sin by mrope_section, not "
           "mrope_section * 2";
  }

 protected:
  std::vector<AxisMode> axis_modes() const override { return {AxisMode::none, AxisMode::mrope}; }
  std::vector<int> feature_axis(const RopeSpec& spec) const override {
    if (spec.axes.mode != AxisMode::mrope) return MultiAxisMutant::feature_axis(spec);
    const auto& s = spec.axes.sections;
    std::vector<int> axis(static_cast<std::size_t>(spec.rotary_dim));
    for (std::size_t f = 0; f < axis.size(); ++f) {  // BUG: features counted as pairs
      const auto n = static_cast<int>(f);
      axis[f] = n < s[0] ? 0 : n < s[0] + s[1] ? 1 : 2;
    }
    return axis;
  }
};

// mutant/mrope_frequencies_restarted: MRoPE given the vision tower's frequencies (each section
// from theta_0 again), the two rotary embeddings of a Qwen2-VL port mixed up.
class FrequenciesRestarted final : public MultiAxisMutant {
 public:
  std::string_view id() const override { return "mutant/mrope_frequencies_restarted"; }
  std::string_view summary() const override {
    return "MRoPE with each section's frequencies restarting at theta_0 (the vision tower's)";
  }

 protected:
  std::vector<AxisMode> axis_modes() const override { return {AxisMode::none, AxisMode::mrope}; }
  std::vector<double> frequencies(const RopeSpec& spec) const override {
    auto theta = inverse_frequencies(spec);
    if (spec.axes.mode != AxisMode::mrope) return theta;
    const auto& s = spec.axes.sections;
    const auto one_axis = inverse_frequencies([&] {
      RopeSpec plain = spec;
      plain.axes = {};
      return plain;
    }());
    for (std::size_t i = 0; i < theta.size(); ++i) {  // BUG: the index within the section
      const auto n = static_cast<int>(i);
      const int start = n < s[0] ? 0 : n < s[0] + s[1] ? s[0] : s[0] + s[1];
      theta[i] = one_axis[static_cast<std::size_t>(n - start)];
    }
    return theta;
  }
};

}  // namespace

std::unique_ptr<RopeImpl> make_mutant_mrope_section_off_by_one() { return std::make_unique<SectionOffByOne>(); }
std::unique_ptr<RopeImpl> make_mutant_mrope_axes_swapped() { return std::make_unique<AxesSwapped>(); }
std::unique_ptr<RopeImpl> make_mutant_imrope_offset_wrong() { return std::make_unique<InterleaveOffsetWrong>(); }
std::unique_ptr<RopeImpl> make_mutant_mrope_section_not_doubled() { return std::make_unique<SectionNotDoubled>(); }
std::unique_ptr<RopeImpl> make_mutant_mrope_frequencies_restarted() {
  return std::make_unique<FrequenciesRestarted>();
}

}  // namespace ropecheck
