// The plugin worker: runs in a child forked by plugin_process.cc, the only process that ever
// executes plugin code. Kept to system calls and the plugin's own functions: it is a fork of a
// possibly multi-threaded host (OpenBLAS), and it must die by the plugin's signal, not a handler's.
#include "plugins/host/plugin_worker.h"

#include <dlfcn.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <iterator>

#include "plugins/host/child_channel.h"
#include "plugins/host/plugin_protocol.h"
#include "plugins/host/probe_team.h"

namespace ropecheck {
namespace {

using plugin_protocol::CallMessage;
using plugin_protocol::LoadReport;
using plugin_protocol::LoadStage;
using plugin_protocol::ReplyMessage;

// Exit codes of a worker that ends on its own; the host names them in its message.
constexpr int kExitChannelBroken = 3;
constexpr int kExitBadMessage = 4;
constexpr int kExitMapFailed = 5;

// Copies at most cap bytes of a plugin's string (which may lack its terminator).
void copy_bounded(char* out, std::size_t cap, const char* in, std::uint32_t* truncated) {
  if (in == nullptr) return;
  const std::size_t n = strnlen(in, cap + 1);
  if (truncated != nullptr) *truncated = n > cap ? 1 : 0;
  std::memcpy(out, in, n > cap ? cap : n);
}

// The loaded plugin, whichever ABI it speaks (exactly one of v1, v2 is set: ABI 3 is v2's struct).
struct Plugin {
  const ropecheck_plugin_v1* v1 = nullptr;
  const ropecheck_plugin_v2* v2 = nullptr;
  bool multi_axis = false;  // ABI 3 and 4: the spec's axes and call->axes are the plugin's to read
  // ABI 4's backward entry, when it has one.
  std::int32_t (*apply_backward)(void*, const ropecheck_plugin_call*) = nullptr;
  // ABI 5's fused entry, when it has one.
  std::int32_t (*apply_rope_cache)(void*, const ropecheck_plugin_cache_call*) = nullptr;
  // ABI 6's form entry, when it has one.
  std::int32_t (*apply_rope_form)(void*, const ropecheck_plugin_form_call*) = nullptr;
  void* context = nullptr;  // what an ABI 2 init stored
};

// apply_fp16, or nullptr when the plugin's struct_size ends before it: nothing past struct_size
// is ever read (see plugin_protocol::kMinStructSize).
ropecheck_plugin_apply_fp16_fn apply_fp16_of(const ropecheck_plugin_v1& p) {
  const bool present = p.struct_size >= offsetof(ropecheck_plugin_v1, apply_fp16) + sizeof p.apply_fp16;
  return present ? p.apply_fp16 : nullptr;
}

LoadStage load_v1(const ropecheck_plugin_v1* p, LoadReport& report, Plugin& plugin) {
  if (p->struct_size < plugin_protocol::kMinStructSize || p->query_capabilities == nullptr) {
    return LoadStage::bad_struct;
  }
  copy_bounded(report.name, plugin_protocol::kMaxNameBytes, p->name, &report.name_truncated);
  copy_bounded(report.summary, plugin_protocol::kMaxSummaryBytes, p->summary, nullptr);
  report.has_apply_f32 = p->apply_f32 != nullptr;
  report.has_apply_bf16 = p->apply_bf16 != nullptr;
  report.has_apply_fp16 = apply_fp16_of(*p) != nullptr;
  ropecheck_plugin_capabilities caps{};
  caps.struct_size = sizeof caps;
  const std::int32_t status = p->query_capabilities(&caps);
  if (status != ROPECHECK_PLUGIN_OK) {
    std::snprintf(report.detail, sizeof report.detail, "query_capabilities returned %d",
                  static_cast<int>(status));
    return LoadStage::query_failed;
  }
  // ABI 1 has no scaling, axes nor position limit: what its reserved words hold means nothing.
  caps.scaling_kinds = 0;
  caps.axis_modes = 0;
  caps.max_position = 0;
  report.caps = caps;
  plugin.v1 = p;
  return LoadStage::loaded;
}

// Calls a plugin's init, when it has one (a RoPE plugin's and an attention plugin's take the same
// arguments), with report.description for its line. False, with the detail, when it fails.
bool call_init(std::int32_t (*init)(const ropecheck_plugin_init_args*, void**), int max_threads, void** context,
               LoadReport& report) {
  if (init == nullptr) return true;
  ropecheck_plugin_init_args args{};
  args.struct_size = sizeof args;
  args.max_threads = max_threads;
  args.description = report.description;
  args.description_bytes = sizeof report.description;
  const std::int32_t status = init(&args, context);
  report.description[sizeof report.description - 1] = '\0';  // whatever init wrote
  if (status == ROPECHECK_PLUGIN_OK) return true;
  std::snprintf(report.detail, sizeof report.detail, "init returned %d: %s", static_cast<int>(status),
                report.description);
  return false;
}

// ABI 6's forms entry (v5's last reserved pointer), when the struct holds one: both functions
// required; the capabilities queried into the report.
LoadStage load_forms(const ropecheck_plugin_v6* p, LoadReport& report, Plugin& plugin) {
  if (p->struct_size < offsetof(ropecheck_plugin_v6, forms) + sizeof p->forms || p->forms == nullptr) {
    return LoadStage::loaded;
  }
  const ropecheck_plugin_forms* forms = p->forms;
  if (forms->struct_size < offsetof(ropecheck_plugin_forms, reserved) || forms->query_form_capabilities == nullptr ||
      forms->apply_rope_form == nullptr) {
    return LoadStage::bad_struct;
  }
  ropecheck_plugin_form_capabilities caps{};
  caps.struct_size = sizeof caps;
  const std::int32_t status = forms->query_form_capabilities(plugin.context, &caps);
  if (status != ROPECHECK_PLUGIN_OK) {
    std::snprintf(report.detail, sizeof report.detail, "query_form_capabilities returned %d", static_cast<int>(status));
    return LoadStage::query_failed;
  }
  report.form_caps = caps;
  report.has_apply_rope_form = 1;
  plugin.apply_rope_form = forms->apply_rope_form;
  return LoadStage::loaded;
}

// ABI 2, 3, 4, 5 and 6 (one struct; abi_version says which).
LoadStage load_v2(const ropecheck_plugin_v2* p, int max_threads, LoadReport& report, Plugin& plugin) {
  if (p->struct_size < plugin_protocol::kMinStructSizeV2 || p->query_capabilities == nullptr ||
      p->apply == nullptr) {
    return LoadStage::bad_struct;
  }
  copy_bounded(report.name, plugin_protocol::kMaxNameBytes, p->name, &report.name_truncated);
  copy_bounded(report.summary, plugin_protocol::kMaxSummaryBytes, p->summary, nullptr);
  // One apply for every storage: which ones it serves is what the capabilities declare.
  report.has_apply_f32 = report.has_apply_bf16 = report.has_apply_fp16 = 1;
  if (!call_init(p->init, max_threads, &plugin.context, report)) return LoadStage::init_failed;
  ropecheck_plugin_capabilities caps{};
  caps.struct_size = sizeof caps;
  const std::int32_t status = p->query_capabilities(plugin.context, &caps);
  if (status != ROPECHECK_PLUGIN_OK) {
    std::snprintf(report.detail, sizeof report.detail, "query_capabilities returned %d",
                  static_cast<int>(status));
    return LoadStage::query_failed;
  }
  // axis_modes was ABI 2's reserved0: what an ABI 2 plugin leaves there means nothing.
  plugin.multi_axis = p->abi_version >= ROPECHECK_PLUGIN_ABI_V3;
  if (!plugin.multi_axis) caps.axis_modes = 0;
  // apply_backward is v2's reserved[0]: read only from an ABI 4 or 5 struct that holds it (the
  // same place in both).
  if (p->abi_version >= ROPECHECK_PLUGIN_ABI_V4) {
    const auto* v4 = reinterpret_cast<const ropecheck_plugin_v4*>(p);
    if (v4->struct_size >= offsetof(ropecheck_plugin_v4, apply_backward) + sizeof v4->apply_backward) {
      plugin.apply_backward = v4->apply_backward;
    }
  }
  report.has_apply_backward = plugin.apply_backward != nullptr;
  // apply_rope_cache and its query are v4's reserved[0] and [1]: read only from an ABI 5 or 6
  // struct that holds them; one without the other is malformed.
  if (p->abi_version >= ROPECHECK_PLUGIN_ABI_V5) {
    const auto* v5 = reinterpret_cast<const ropecheck_plugin_v5*>(p);
    if (v5->struct_size >= offsetof(ropecheck_plugin_v5, query_rope_cache_capabilities) +
                               sizeof v5->query_rope_cache_capabilities) {
      if ((v5->apply_rope_cache == nullptr) != (v5->query_rope_cache_capabilities == nullptr)) {
        return LoadStage::bad_struct;
      }
      if (v5->apply_rope_cache != nullptr) {
        ropecheck_plugin_cache_capabilities cache_caps{};
        cache_caps.struct_size = sizeof cache_caps;
        const std::int32_t cache_status = v5->query_rope_cache_capabilities(plugin.context, &cache_caps);
        if (cache_status != ROPECHECK_PLUGIN_OK) {
          std::snprintf(report.detail, sizeof report.detail, "query_rope_cache_capabilities returned %d",
                        static_cast<int>(cache_status));
          return LoadStage::query_failed;
        }
        report.cache_caps = cache_caps;
        plugin.apply_rope_cache = v5->apply_rope_cache;
      }
    }
  }
  report.has_apply_rope_cache = plugin.apply_rope_cache != nullptr;
  // forms is v5's reserved[0]: read only from an ABI 6 struct.
  if (p->abi_version == ROPECHECK_PLUGIN_ABI_V6) {
    const LoadStage forms = load_forms(reinterpret_cast<const ropecheck_plugin_v6*>(p), report, plugin);
    if (forms != LoadStage::loaded) return forms;
  }
  report.caps = caps;
  plugin.v2 = p;
  return LoadStage::loaded;
}

// An attention plugin (attention_plugin.h) tried out here, in the child: init, query and
// teardown, so that one that crashes or fails there is refused before the host loads it into its
// own process (attention_plugin_host.h).
LoadStage load_attention(const ropecheck_attention_plugin_v1* p, int max_threads, LoadReport& report) {
  if (p->struct_size < sizeof(ropecheck_attention_plugin_v1) - sizeof p->reserved ||
      p->query_capabilities == nullptr || p->attend == nullptr) {
    return LoadStage::bad_struct;
  }
  copy_bounded(report.name, plugin_protocol::kMaxNameBytes, p->name, &report.name_truncated);
  copy_bounded(report.summary, plugin_protocol::kMaxSummaryBytes, p->summary, nullptr);
  void* context = nullptr;
  if (!call_init(p->init, max_threads, &context, report)) return LoadStage::init_failed;
  ropecheck_attention_capabilities caps{};
  caps.struct_size = sizeof caps;
  const std::int32_t status = p->query_capabilities(context, &caps);
  if (p->teardown != nullptr) p->teardown(context);
  if (status != ROPECHECK_PLUGIN_OK) {
    std::snprintf(report.detail, sizeof report.detail, "query_capabilities returned %d", static_cast<int>(status));
    return LoadStage::query_failed;
  }
  report.attention_caps = caps;
  return LoadStage::attention_loaded;
}

LoadReport load(const char* path, int max_threads, Plugin& plugin) {
  LoadReport report;
  void* library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    report.stage = LoadStage::dlopen_failed;
    copy_bounded(report.detail, plugin_protocol::kMaxDetailBytes, dlerror(), nullptr);
    return report;
  }
  void* symbol = dlsym(library, ROPECHECK_PLUGIN_ENTRY_SYMBOL);
  if (symbol == nullptr) {
    symbol = dlsym(library, ROPECHECK_ATTENTION_PLUGIN_ENTRY_SYMBOL);
    report.attention = symbol != nullptr;
  }
  if (symbol == nullptr) {
    report.stage = LoadStage::no_entry;
    return report;
  }
  // The entry returns a pointer to a struct whose first two fields, in every version, are
  // abi_version and struct_size: nothing else is read before they say which version it is.
  using Entry = const void* (*)();
  Entry entry;
  static_assert(sizeof entry == sizeof symbol);
  std::memcpy(&entry, &symbol, sizeof entry);  // object pointer -> function pointer, POSIX's way
  const void* returned = entry();
  if (returned == nullptr) {
    report.stage = LoadStage::null_entry;
    return report;
  }
  const auto* header = static_cast<const std::uint32_t*>(returned);
  report.abi_version = header[0];
  report.struct_size = header[1];
  if (report.attention != 0) {
    report.stage = report.abi_version == ROPECHECK_ATTENTION_PLUGIN_ABI_V1
                       ? load_attention(static_cast<const ropecheck_attention_plugin_v1*>(returned), max_threads, report)
                       : LoadStage::wrong_abi;
    return report;
  }
  switch (report.abi_version) {
    case ROPECHECK_PLUGIN_ABI_V1:
      report.stage = load_v1(static_cast<const ropecheck_plugin_v1*>(returned), report, plugin);
      break;
    case ROPECHECK_PLUGIN_ABI_V2:
    case ROPECHECK_PLUGIN_ABI_V3:
    case ROPECHECK_PLUGIN_ABI_V4:
    case ROPECHECK_PLUGIN_ABI_V5:
    case ROPECHECK_PLUGIN_ABI_V6:
      report.stage =
          load_v2(static_cast<const ropecheck_plugin_v2*>(returned), max_threads, report, plugin);
      break;
    default:
      report.stage = LoadStage::wrong_abi;
  }
  return report;
}

template <typename Message>
bool send_message(int channel, const Message& message) {
  return send(channel, &message, sizeof message, MSG_NOSIGNAL) ==
         static_cast<ssize_t>(sizeof message);
}

// q and k: the call's, in the shared memory file, or a timed call's private copies (below).
struct Data {
  std::byte* q;
  std::byte* k;
};
Data shared_data(const CallMessage& call, std::byte* base) { return {base + call.q_offset, base + call.k_offset}; }

std::int32_t apply_v1(const ropecheck_plugin_v1& plugin, const CallMessage& call, std::byte* base, Data data) {
  ropecheck_plugin_spec spec = call.spec;  // a copy: the plugin cannot alter the host's
  spec.struct_size = offsetof(ropecheck_plugin_spec, factor);  // the fields ABI 1 has
  const auto* positions = reinterpret_cast<const std::int64_t*>(base + call.positions_offset);
  if (call.dtype == ROPECHECK_DTYPE_BF16 || call.dtype == ROPECHECK_DTYPE_FP16) {
    // Both 16-bit storages pass uint16_t bit patterns; only the function differs.
    const auto apply_16 = call.dtype == ROPECHECK_DTYPE_BF16 ? plugin.apply_bf16 : apply_fp16_of(plugin);
    if (apply_16 == nullptr) return ROPECHECK_PLUGIN_UNSUPPORTED;
    return apply_16(&spec, reinterpret_cast<std::uint16_t*>(data.q), call.q_heads,
                    reinterpret_cast<std::uint16_t*>(data.k), call.k_heads, positions, call.tokens);
  }
  if (plugin.apply_f32 == nullptr) return ROPECHECK_PLUGIN_UNSUPPORTED;
  return plugin.apply_f32(&spec, reinterpret_cast<float*>(data.q), call.q_heads,
                          reinterpret_cast<float*>(data.k), call.k_heads, positions, call.tokens);
}

std::int32_t apply_v2(const Plugin& plugin, const CallMessage& call, std::byte* base, Data data) {
  ropecheck_plugin_spec spec = call.spec;  // a copy: the plugin cannot alter the host's
  if (!plugin.multi_axis) {  // the spec ABI 2 was built with: the host never gives it axes
    spec.struct_size = plugin_protocol::kSpecSizeV2;
    spec.axis_mode = ROPECHECK_AXES_NONE;
    std::fill(std::begin(spec.sections), std::end(spec.sections), 0);
  }
  if (call.factors_count != 0) {
    const auto* factors = reinterpret_cast<const double*>(base + call.factors_offset);
    spec.short_factor = factors;
    spec.long_factor = factors + call.factors_count;
  }
  ropecheck_plugin_call c{};
  c.struct_size = sizeof c;
  c.dtype = call.dtype;
  c.spec = &spec;
  c.q = data.q;
  c.q_heads = call.q_heads;
  c.k = data.k;
  c.k_heads = call.k_heads;
  c.positions = reinterpret_cast<const std::int64_t*>(base + call.positions_offset);
  c.tokens = call.tokens;
  c.threads = call.threads;
  c.axes = plugin.multi_axis ? call.axes : 0;  // ABI 2's reserved0: zero
  if (call.backward != 0) {  // the host sends a backward call only where the report said so
    return plugin.apply_backward != nullptr ? plugin.apply_backward(plugin.context, &c)
                                            : ROPECHECK_PLUGIN_UNSUPPORTED;
  }
  return plugin.v2->apply(plugin.context, &c);
}

// ABI 5's fused call on the shared memory: every pointer into this worker's mapping (the spec and
// cache are copies: the plugin cannot alter the host's). The host sends it only to a plugin that
// has apply_rope_cache.
std::int32_t apply_rope_cache(const Plugin& plugin, const CallMessage& call, std::byte* base) {
  if (plugin.apply_rope_cache == nullptr) return ROPECHECK_PLUGIN_UNSUPPORTED;
  ropecheck_plugin_spec spec = call.spec;
  if (call.factors_count != 0) {
    const auto* factors = reinterpret_cast<const double*>(base + call.factors_offset);
    spec.short_factor = factors;
    spec.long_factor = factors + call.factors_count;
  }
  const plugin_protocol::CacheCallMessage& m = call.cache;
  ropecheck_plugin_cache cache = m.cache;
  const auto* scales = reinterpret_cast<const float*>(base + m.scales_offset);
  if (cache.k_scale_count != 0) cache.k_scale = scales;
  if (cache.v_scale_count != 0) cache.v_scale = scales + cache.k_scale_count;
  ropecheck_plugin_cache_call c{};
  c.struct_size = sizeof c;
  c.threads = call.threads;
  c.spec = &spec;
  c.cache = &cache;
  c.q = reinterpret_cast<float*>(base + call.q_offset);
  c.q_heads = call.q_heads;
  c.k = reinterpret_cast<const float*>(base + call.k_offset);
  c.v = reinterpret_cast<const float*>(base + m.v_offset);
  c.positions = reinterpret_cast<const std::int64_t*>(base + call.positions_offset);
  c.axes = call.axes;
  c.slots = reinterpret_cast<const std::int64_t*>(base + m.slots_offset);
  c.tokens = call.tokens;
  c.k_cache = base + m.k_cache_offset;
  c.v_cache = cache.layout == ROPECHECK_CACHE_MLA ? nullptr : base + m.v_cache_offset;
  return plugin.apply_rope_cache(plugin.context, &c);
}

// ABI 6's form call on the shared memory: the buffer, positions, cache and weights in this
// worker's mapping; the spec, views and norm are copies (the plugin cannot alter the host's). The
// host sends it only to a plugin that has apply_rope_form.
std::int32_t apply_rope_form(const Plugin& plugin, const CallMessage& call, std::byte* base) {
  if (plugin.apply_rope_form == nullptr) return ROPECHECK_PLUGIN_UNSUPPORTED;
  ropecheck_plugin_spec spec = call.spec;
  if (call.factors_count != 0) {
    const auto* factors = reinterpret_cast<const double*>(base + call.factors_offset);
    spec.short_factor = factors;
    spec.long_factor = factors + call.factors_count;
  }
  const plugin_protocol::FormCallMessage& m = call.form;
  const ropecheck_plugin_head_view q = m.q, k = m.k;
  ropecheck_plugin_qk_norm norm = m.norm;
  const auto* weights = reinterpret_cast<const float*>(base + m.weights_offset);
  norm.q_weight = weights;
  norm.k_weight = k.heads > 0 ? weights + spec.head_dim : nullptr;
  ropecheck_plugin_form_call c{};
  c.struct_size = sizeof c;
  c.dtype = call.dtype;
  c.spec = &spec;
  c.buffer = base + m.buffer_offset;
  c.elements = m.elements;
  c.tokens = call.tokens;
  c.q = &q;
  c.k = k.heads > 0 ? &k : nullptr;
  c.positions = reinterpret_cast<const std::int64_t*>(base + call.positions_offset);
  c.angle_source = m.angle_source;
  c.threads = call.threads;
  c.cos_sin_cache =
      m.angle_source == ROPECHECK_ANGLE_SOURCE_COS_SIN_CACHE ? reinterpret_cast<const float*>(base + m.cache_offset) : nullptr;
  c.cache_rows = m.cache_rows;
  c.norm = m.has_norm != 0 ? &norm : nullptr;
  return plugin.apply_rope_form(plugin.context, &c);
}

// A timed call's q and k: private copies of a stage's shared ones, in anonymous memory advised
// for transparent huge pages as the built-ins' buffers are (bench/aligned_buffer.h; the shared
// memory file gets none where shmem THP is off, its default): 2 MiB aligned, a PROT_NONE page
// before and after, so a write past either end kills the worker (a PluginFailure).
class PrivateCopy {
 public:
  ~PrivateCopy() { release(); }
  std::byte* data() const { return data_; }
  bool make(const std::byte* from, std::size_t bytes) {
    release();
    constexpr std::size_t kPage = 4096, kHuge = std::size_t{2} << 20;
    const std::size_t body = (bytes + kPage - 1) / kPage * kPage;
    mapping_bytes_ = 2 * kHuge + body + kPage;
    mapping_ = mmap(nullptr, mapping_bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mapping_ == MAP_FAILED) return false;
    const auto at = reinterpret_cast<std::uintptr_t>(mapping_) + kPage;
    data_ = reinterpret_cast<std::byte*>((at + kHuge - 1) / kHuge * kHuge);
    mprotect(data_ - kPage, kPage, PROT_NONE);
    mprotect(data_ + body, kPage, PROT_NONE);
    if (body >= kHuge) madvise(data_, body, MADV_HUGEPAGE);  // advice: nothing changes where THP is off
    if (bytes != 0) std::memcpy(data_, from, bytes);
    return true;
  }

 private:
  void release() {
    if (mapping_ != MAP_FAILED) munmap(mapping_, mapping_bytes_);
    mapping_ = MAP_FAILED;
    data_ = nullptr;
  }
  void* mapping_ = MAP_FAILED;
  std::size_t mapping_bytes_ = 0;
  std::byte* data_ = nullptr;
};

struct TimingCopies {
  std::uint64_t stage = 0;  // the stage they were copied from (CallMessage::stage)
  PrivateCopy q, k;
};

// A timed call (plugin_protocol.h): the apply, then the host's probe over the same bytes at the
// call's thread count (probe_team.h) for at least a quarter of the apply's time and
// kMinProbeSeconds. One thread: this thread's CPU time, as the built-ins are timed
// (bench/same_run_limit.h); more: the wall clock, where the plugin's other threads count too.
ReplyMessage timed_apply(const Plugin& plugin, const CallMessage& call, std::byte* base, TimingCopies& copies) {
  const std::size_t element = call.dtype == ROPECHECK_DTYPE_FP32 ? 4 : 2;
  const std::size_t row = static_cast<std::size_t>(call.spec.head_dim) * element * static_cast<std::size_t>(call.tokens);
  const std::size_t q_bytes = row * static_cast<std::size_t>(call.q_heads);
  const std::size_t k_bytes = row * static_cast<std::size_t>(call.k_heads);
  ReplyMessage reply;
  if (copies.stage != call.stage) {
    if (!copies.q.make(base + call.q_offset, q_bytes) || !copies.k.make(base + call.k_offset, k_bytes)) {
      copies.stage = 0;
      return reply;  // ERROR: no memory for the copies
    }
    copies.stage = call.stage;
  }
  const Data data{copies.q.data(), copies.k.data()};
  const clockid_t clock = call.threads > 1 ? CLOCK_MONOTONIC : CLOCK_THREAD_CPUTIME_ID;
  const double start = seconds_on(clock);
  reply.status = plugin.v2 != nullptr ? apply_v2(plugin, call, base, data) : apply_v1(*plugin.v1, call, base, data);
  reply.apply_seconds = seconds_on(clock) - start;
  if (reply.status != ROPECHECK_PLUGIN_OK) return reply;
  auto* q = reinterpret_cast<float*>(data.q);
  auto* k = reinterpret_cast<float*>(data.k);
  const std::size_t q_floats = q_bytes / 4, k_floats = k_bytes / 4;
  const ProbeTeamResult probed = run_probe_team(call.probe, q, q_floats, k, k_floats, call.tokens, call.threads,
                                                std::max(reply.apply_seconds / 4, kMinProbeSeconds));
  reply.probe_seconds = probed.seconds;
  reply.probe_passes = probed.passes;
  return reply;
}

[[noreturn]] void serve(int channel, int memory_fd, const Plugin& plugin) {
  void* mapping = MAP_FAILED;
  std::uint64_t mapped_bytes = 0;
  TimingCopies copies;
  for (;;) {
    CallMessage call;
    const ssize_t got = recv(channel, &call, sizeof call, 0);
    if (got == 0) {  // the host closed the channel: done
      if (plugin.v2 != nullptr && plugin.v2->teardown != nullptr) plugin.v2->teardown(plugin.context);
      _exit(0);
    }
    if (got < 0) _exit(kExitChannelBroken);
    if (got != static_cast<ssize_t>(sizeof call)) _exit(kExitBadMessage);
    if (call.file_bytes != mapped_bytes) {  // the host grew the file since the last call
      if (mapping != MAP_FAILED) munmap(mapping, mapped_bytes);
      mapping = mmap(nullptr, call.file_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, memory_fd, 0);
      if (mapping == MAP_FAILED) _exit(kExitMapFailed);
      mapped_bytes = call.file_bytes;
    }
    auto* base = static_cast<std::byte*>(mapping);
    ReplyMessage reply;
    if (call.rope_cache != 0) {
      reply.status = plugin.v2 != nullptr ? apply_rope_cache(plugin, call, base) : ROPECHECK_PLUGIN_UNSUPPORTED;
    } else if (call.rope_form != 0) {
      reply.status = plugin.v2 != nullptr ? apply_rope_form(plugin, call, base) : ROPECHECK_PLUGIN_UNSUPPORTED;
    } else if (call.probe != nullptr) {
      reply = timed_apply(plugin, call, base, copies);
    } else {
      const Data data = shared_data(call, base);
      reply.status = plugin.v2 != nullptr ? apply_v2(plugin, call, base, data) : apply_v1(*plugin.v1, call, base, data);
    }
    if (!send_message(channel, reply)) _exit(kExitChannelBroken);
  }
}

}  // namespace

void run_plugin_worker(int channel, int memory_fd, const char* path, int max_threads) {
  // Nothing here may return into the host's stack (this is a fork of it), so nothing throws.
  const pid_t host = getppid();
  prctl(PR_SET_PDEATHSIG, SIGKILL);  // a worker never outlives ropecheck
  if (getppid() != host) _exit(kExitChannelBroken);
  default_crash_signals();
  close_other_files(channel, memory_fd);
  dup2(STDERR_FILENO, STDOUT_FILENO);  // the plugin's prints must not mix into the result table
  Plugin plugin;
  const LoadReport report = load(path, max_threads, plugin);
  if (!send_message(channel, report)) _exit(kExitChannelBroken);
  if (report.stage != LoadStage::loaded) _exit(0);
  serve(channel, memory_fd, plugin);
}

}  // namespace ropecheck
