// load_attention_plugin_here() (attention_plugin_host.h): the library dlopen()ed into this process
// and kept there (never dlclose()d: a backend's threads or atexit handlers may still point into it).
#include "plugins/host/attention_plugin_host.h"

#include <dlfcn.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cstring>
#include <mutex>

#include "core/errors.h"
#include "impls/attention/attention.h"
#include "plugins/host/plugin_host.h"
#include "ropecheck/attention_plugin.h"

namespace ropecheck {
namespace {

// The team sizes a call may ask for are attention's (kMaxAttentionThreads): init is told so, and
// the plugin sizes its pool to what it can run (the ggml peer: the CPUs).
constexpr int kInitMaxThreads = kMaxAttentionThreads;

class PluginAttention final : public AttentionImpl {
 public:
  PluginAttention(const ropecheck_attention_plugin_v1* plugin, AttentionPluginInfo info, std::string summary)
      : plugin_(plugin), info_(std::move(info)), id_("plugin/" + info_.name), summary_(std::move(summary)) {}
  ~PluginAttention() override {
    // Only the process that made the context frees it: a fork's copy belongs to its parent.
    if (context_pid_ == getpid() && plugin_->teardown != nullptr) plugin_->teardown(context_);
  }

  std::string_view id() const override { return id_; }
  std::string_view summary() const override { return summary_; }
  StorageType kv_storage() const override { return info_.kv_storage; }
  const AttentionPluginInfo& info() const { return info_; }

 protected:
  void attend(const AttentionShape& shape, std::span<const float> q, std::span<const float> k,
              std::span<const float> v, std::span<float> out, int threads) const override {
    if (info_.max_head_dim != 0 && shape.head_dim > info_.max_head_dim) {
      throw UnsupportedCase(fmt::format("{} handles head_dim up to {}, not {}", id_, info_.max_head_dim, shape.head_dim));
    }
    const std::lock_guard lock(mutex_);
    ropecheck_attention_call call{};
    call.struct_size = sizeof call;
    call.threads = threads;
    call.tokens = shape.tokens;
    call.q_heads = shape.q_heads;
    call.kv_heads = shape.kv_heads;
    call.head_dim = shape.head_dim;
    call.causal = shape.causal ? 1 : 0;
    call.q = q.data();
    call.k = k.data();
    call.v = v.data();
    call.out = out.data();
    const std::int32_t status = plugin_->attend(context_here(), &call);
    if (status == ROPECHECK_PLUGIN_UNSUPPORTED) {
      throw UnsupportedCase(fmt::format("{} reported unsupported for {} tokens, {} q / {} kv heads, head_dim {}", id_,
                                        shape.tokens, shape.q_heads, shape.kv_heads, shape.head_dim));
    }
    if (status != ROPECHECK_PLUGIN_OK) {
      throw PluginFailure(fmt::format("{} returned {} (ROPECHECK_PLUGIN_ERROR or unknown) for {} tokens, {} q / {} kv "
                                      "heads, head_dim {}, threads {}",
                                      id_, status, shape.tokens, shape.q_heads, shape.kv_heads, shape.head_dim, threads));
    }
  }

 private:
  // This process's context, made on its first call (attention_plugin.h: init once per process).
  void* context_here() const {
    if (context_pid_ == getpid()) return context_;
    context_ = nullptr;  // a fork's copy of the parent's: its threads did not come along
    if (plugin_->init != nullptr) {
      char description[plugin_protocol::kMaxDescriptionBytes + 1] = {};
      ropecheck_plugin_init_args args{};
      args.struct_size = sizeof args;
      args.max_threads = kInitMaxThreads;
      args.description = description;
      args.description_bytes = sizeof description;
      const std::int32_t status = plugin_->init(&args, &context_);
      description[sizeof description - 1] = '\0';
      if (status != ROPECHECK_PLUGIN_OK) {
        throw PluginFailure(fmt::format("{}: init returned {} in process {}: {}", id_, status, getpid(), description));
      }
    }
    context_pid_ = getpid();
    return context_;
  }

  const ropecheck_attention_plugin_v1* plugin_;
  AttentionPluginInfo info_;
  std::string id_, summary_;
  mutable std::mutex mutex_;
  mutable void* context_ = nullptr;
  mutable pid_t context_pid_ = -1;
};

}  // namespace

std::unique_ptr<AttentionImpl> load_attention_plugin_here(const std::filesystem::path& absolute,
                                                          const plugin_protocol::LoadReport& tried) {
  void* library = dlopen(absolute.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    throw InvalidInput(fmt::format("attention plugin '{}' loaded in its worker but not here: {}", absolute.string(),
                                   dlerror()));
  }
  void* symbol = dlsym(library, ROPECHECK_ATTENTION_PLUGIN_ENTRY_SYMBOL);
  using Entry = const ropecheck_attention_plugin_v1* (*)();
  Entry entry = nullptr;
  static_assert(sizeof entry == sizeof symbol);
  std::memcpy(&entry, &symbol, sizeof entry);  // object pointer -> function pointer, POSIX's way
  const ropecheck_attention_plugin_v1* plugin = entry != nullptr ? entry() : nullptr;
  // The worker judged this very struct; a library that answers otherwise here is not one.
  if (plugin == nullptr || plugin->abi_version != tried.abi_version || plugin->struct_size != tried.struct_size ||
      plugin->attend == nullptr || plugin->query_capabilities == nullptr || plugin->name == nullptr ||
      std::strcmp(plugin->name, tried.name) != 0) {
    throw InvalidInput(fmt::format("attention plugin '{}' answers differently here than in its worker",
                                   absolute.string()));
  }
  AttentionPluginInfo info;
  info.path = absolute;
  info.name = tried.name;
  info.kv_storage = tried.attention_caps.kv_dtype == ROPECHECK_DTYPE_FP16 ? StorageType::fp16 : StorageType::fp32;
  info.max_head_dim = tried.attention_caps.max_head_dim;
  info.description = tried.description;
  std::string summary = tried.summary[0] != '\0' ? std::string(tried.summary)
                                                  : fmt::format("attention plugin {}", absolute.string());
  return std::make_unique<PluginAttention>(plugin, std::move(info), std::move(summary));
}

const AttentionPluginInfo* attention_plugin_info(const AttentionImpl& impl) {
  const auto* plugin = dynamic_cast<const PluginAttention*>(&impl);
  return plugin != nullptr ? &plugin->info() : nullptr;
}

}  // namespace ropecheck
