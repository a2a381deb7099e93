// property_catalogue(): every property family in one list, and the subject/run plumbing.
#include "properties/catalogue.h"

#include <fmt/format.h>

#include <chrono>
#include <vector>

#include "core/errors.h"
#include "impls/registry.h"

namespace ropecheck {

std::string_view to_string(Status status) {
  switch (status) {
    case Status::passed: return "PASSED";
    case Status::failed: return "FAILED";
    case Status::skipped: return "SKIPPED";
    case Status::mistrusted: return "MISTRUSTED";
    case Status::hang: return "HANG";
  }
  return "?";
}

std::string_view to_string(ModelShapeSet set) {
  switch (set) {
    case ModelShapeSet::all: return "all";
    case ModelShapeSet::short_calls: return "short";
    case ModelShapeSet::none: return "none";
  }
  return "?";
}

ModelShapeSet parse_model_shape_set(std::string_view text, std::string_view option) {
  for (const auto set : {ModelShapeSet::all, ModelShapeSet::short_calls, ModelShapeSet::none}) {
    if (text == to_string(set)) return set;
  }
  throw InvalidInput(fmt::format("{} must be all, short or none, got '{}'", option, text));
}

std::span<const Property> property_catalogue() {
  static const std::vector<Property> all = [] {
    std::vector<Property> v;
    for (const auto family :
         {pointwise_properties, boundary_properties, nonfinite_properties, call_history_properties, group_properties,
          layout_equivalence_properties, scaling_properties, long_range_decay_properties,
          multi_axis_properties, backward_properties,
          sinusoidal_properties, attention_properties, multi_head_properties, rope_cache_properties,
          rope_form_properties}) {
      for (const auto& p : family()) v.push_back(p);
    }
    return v;
  }();
  return all;
}

const Property* find_property(std::string_view id) {
  for (const auto& p : property_catalogue()) {
    if (p.id == id) return &p;
  }
  return nullptr;
}

std::vector<Subject> registry_subjects(bool mutants) {
  std::vector<Subject> subjects;
  for (const RopeImpl* impl : mutants ? rope_mutants() : rope_implementations()) {
    subjects.push_back({std::string(impl->id()), impl, nullptr, mutants});
  }
  for (const SinusoidalImpl* impl : mutants ? sinusoidal_mutants() : sinusoidal_implementations()) {
    subjects.push_back({std::string(impl->id()), nullptr, impl, mutants});
  }
  for (const AttentionImpl* impl : mutants ? attention_mutants() : attention_implementations()) {
    subjects.push_back({std::string(impl->id()), nullptr, nullptr, mutants, impl});
  }
  for (const RopeCacheImpl* impl : mutants ? rope_cache_mutants() : rope_cache_implementations()) {
    subjects.push_back({std::string(impl->id()), nullptr, nullptr, mutants, nullptr, impl});
  }
  for (const RopeFormImpl* impl : mutants ? rope_form_mutants() : rope_form_implementations()) {
    subjects.push_back({std::string(impl->id()), nullptr, nullptr, mutants, nullptr, nullptr, impl});
  }
  return subjects;
}

std::string_view to_string(SubjectKind kind) {
  switch (kind) {
    case SubjectKind::rope: return "rope";
    case SubjectKind::sinusoidal: return "sinusoidal";
    case SubjectKind::attention: return "attention";
    case SubjectKind::rope_cache: return "rope_cache";
    case SubjectKind::rope_form: return "rope_form";
  }
  return "?";
}

bool applies_to(const Property& property, const Subject& subject) {
  switch (property.kind) {
    case SubjectKind::rope: return subject.rope != nullptr;
    case SubjectKind::sinusoidal: return subject.sinusoidal != nullptr;
    case SubjectKind::attention: return subject.attention != nullptr;
    case SubjectKind::rope_cache: return subject.rope_cache != nullptr;
    case SubjectKind::rope_form: return subject.rope_form != nullptr;
  }
  return false;
}

PropertyResult skipped_result(const Subject& subject, std::string_view property,
                              std::string reason) {
  PropertyResult skipped;
  skipped.subject = subject.id;
  skipped.property = std::string(property);
  skipped.status = Status::skipped;
  skipped.message = std::move(reason);
  return skipped;
}

PropertyResult skipped_result(const Subject& subject, const RunConfig& config, std::string reason) {
  return skipped_result(subject, config.property_id, std::move(reason));
}

PropertyResult run_property(const Property& property, const Subject& subject,
                            const RunConfig& config) {
  if (!applies_to(property, subject)) {
    return skipped_result(subject, property.id,
                          fmt::format("not a {} implementation", to_string(property.kind)));
  }
  if (subject.rope != nullptr) {
    const auto caps = subject.rope->capabilities();
    if (!caps.available) {
      return skipped_result(subject, property.id,
                            fmt::format("not available on this CPU: {}", caps.unavailable_reason));
    }
  }
  if (std::string why; subject.attention != nullptr && !subject.attention->available(&why)) {
    return skipped_result(subject, property.id, fmt::format("not available on this CPU: {}", why));
  }
  if (std::string why; subject.rope_cache != nullptr && !subject.rope_cache->available(&why)) {
    return skipped_result(subject, property.id, fmt::format("not available on this CPU: {}", why));
  }
  if (std::string why; subject.rope_form != nullptr && !subject.rope_form->available(&why)) {
    return skipped_result(subject, property.id, fmt::format("not available on this CPU: {}", why));
  }
  RunConfig run_config = config;
  run_config.property_id = std::string(property.id);
  if (subject.mutant) run_config.shrink = false;
  const auto start = std::chrono::steady_clock::now();
  PropertyResult result = property.run(subject, run_config);
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

}  // namespace ropecheck
