// The call forms' cases in manifest.json (format ropecheck.vectors/6): the call's full
// description, "call" (storage, buffer size, q's and k's views, the angle source and the cache's
// rows, the QK-norm's eps, weight convention and precision, the named regions nothing may touch),
// and its reading back, validated as RopeFormImpl::apply validates a call.
//   ropecheck vectors --out /tmp/golden && python3 -m json.tool /tmp/golden/manifest.json
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>

#include "core/spec.h"
#include "vectors/rope_form_golden_cases.h"

namespace ropecheck {

// {storage, buffer_elements, indexing, q, k (null: absent), angles, cos_sin_cache (null or {rows,
// layout}), qk_norm (null or {eps, weight, precision, formula}), regions, untouched}.
nlohmann::ordered_json form_call_json(const FormCall& call, const RopeSpec& spec);

// The inverse, checked against the case's tokens and spec: throws InvalidInput for an unknown
// name, a view or region outside the buffer or overlapping, q and k sharing an element, an eps
// that is not finite and > 0, no cache rows with the cache form.
FormCall form_call_from_json(const nlohmann::ordered_json& json, std::int64_t tokens, const RopeSpec& spec);

// "storage bf16, 4096 elements; q heads 4 at offset 0, token stride 1024, head stride 128; k ...;
// angles from the cos_sin_cache (256 rows); qk_norm eps=1e-06 weight=plain precision=fp32":
// what a failure names, so that the call can be made again.
std::string form_call_text(const FormCall& call);

}  // namespace ropecheck
