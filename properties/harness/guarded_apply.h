// How the properties call an implementation: every output buffer is followed by guard bytes that
// are checked after the call (ggml test-backend-ops style), so a built-in that writes past the
// end fails the case in every build, not only under AddressSanitizer (a plugin's buffers are
// guarded in its worker process: plugins/host/plugin_guarded_buffers.h). Each call also counts as
// evidence, or not: a property that passes on cases that cannot show a bug proves nothing
// (benchdnn's MISTRUSTED), and check_property() reports it so.
#pragma once

#include <cstdint>
#include <ostream>
#include <span>
#include <string>
#include <vector>

#include <rapidcheck.h>

#include "impls/rope_impl.h"

namespace ropecheck {

// What a call must have to be able to show a bug. `rotation`: a rotary part (rotary_dim > 0),
// a non-zero rotary input and a non-zero position; `input`: the position may be 0 (a property
// about R_0 itself).
enum class Evidence { rotation, input };

// impl.apply(spec, q, k, positions, threads) on q and k in place ([tokens][heads][head_dim] each; k may
// be empty), each inside a buffer with guard bytes after it, and `shift` guard floats before it
// (0 by default: a property can move the tensors to other addresses and alignments). RC_FAILs
// (inside a property) when a guard byte changed, naming the tensor and how far past its end (or
// before its start) the write went. `threads` is drawn (CallThreads) when k has heads and the
// limit is above 1; the single-tensor form runs on one thread.
void apply_guarded(const RopeImpl& impl, const RopeSpec& spec, std::vector<float>& q,
                   std::int64_t q_heads, std::vector<float>& k, std::int64_t k_heads,
                   std::span<const std::int64_t> positions, Evidence evidence = Evidence::rotation,
                   std::size_t shift = 0);

// The thread count of one call (RopeImpl::apply's `threads`, an attention team's size), drawn
// from 1 to the subject's max_threads, at most the run's call_threads_limit: a kernel's split
// with a short last chunk is a path of its own. Correctness does not need the threads to run at
// once, so the counts go past the machine's CPUs (a split into 13 chunks on 2 cores finds what
// it finds on 32). Its own type, so that a counterexample names it.
struct CallThreads {
  int count = 1;
};
void showValue(CallThreads threads, std::ostream& os);

// Every count from 1 to this is drawn three times in four (the remainders of every split a short
// call can have); past it, one of the larger counts (odd ones, powers of two and their
// neighbours: a 32-core server's 31, 32, 33) up to `limit` the fourth time.
inline constexpr int kEveryThreadCountUpTo = 8;
rc::Gen<CallThreads> call_threads(int limit);
// One draw of call_threads(call_threads_limit) named "threads" (1 without a draw when the limit
// is 1): what apply_guarded and the attention properties give a call.
CallThreads pick_call_threads();

// The most threads apply_guarded draws on this thread (check_rope_property sets it from the run's
// --threads and the subject's max_threads; 1 until then).
void set_call_threads_limit(int threads);
// The limit for one property's run on this thread, back to 1 after it: a call made outside a
// property draws nothing.
struct CallThreadsInForce {
  explicit CallThreadsInForce(int threads) { set_call_threads_limit(threads); }
  ~CallThreadsInForce() { set_call_threads_limit(1); }
  CallThreadsInForce(const CallThreadsInForce&) = delete;
  CallThreadsInForce& operator=(const CallThreadsInForce&) = delete;
};

// The evidence of the calls made on this thread since the last reset (check_property() resets
// it before a property and reads it after).
struct EvidenceCount {
  int calls = 0;        // calls through apply_guarded()
  int informative = 0;  // of which could show a bug
  std::string first_vacuous;  // why the first uninformative call was (for the message)
};
void reset_evidence();
EvidenceCount evidence();

}  // namespace ropecheck
