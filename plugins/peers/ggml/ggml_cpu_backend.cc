// CpuBackend (ggml_cpu_backend.h): load the CPU backend variant, make the thread pool, say what
// was chosen. Only ggml's public API: the loader (ggml-backend.h) and the CPU backend's functions
// it exports by name (ggml_backend_reg_get_proc_address), as llama.cpp itself reaches them when
// the backends are loaded at run time.
#include "ggml_cpu_backend.h"

#include <dlfcn.h>
#include <link.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>

namespace ropecheck_ggml_peer {
namespace {

// ggml's INFO lines ("load_backend: loaded CPU backend from ...") would repeat in every worker's
// stderr; warnings and errors still show.
void quiet_log(ggml_log_level level, const char* text, void*) {
  if (level == GGML_LOG_LEVEL_WARN || level == GGML_LOG_LEVEL_ERROR) std::fputs(text, stderr);
}

// The directory of the libggml-base.so this plugin was linked against (its RUNPATH): the CPU
// variants of the same release lie beside it.
std::string ggml_library_dir() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&ggml_init), &info) == 0 || info.dli_fname == nullptr) return "";
  return std::filesystem::path(info.dli_fname).parent_path().string();
}

// The file name of the libggml-cpu-<level>.so now loaded in this process, "" for none.
std::string loaded_cpu_variant() {
  std::string found;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* out) {
        const char* name = info->dlpi_name != nullptr ? std::strrchr(info->dlpi_name, '/') : nullptr;
        if (name != nullptr && std::strncmp(name + 1, "libggml-cpu-", 12) == 0) {
          *static_cast<std::string*>(out) = name + 1;
          return 1;
        }
        return 0;
      },
      &found);
  return found;
}

template <typename Function>
Function proc(ggml_backend_reg_t reg, const char* name) {
  return reinterpret_cast<Function>(ggml_backend_reg_get_proc_address(reg, name));
}

}  // namespace

CpuBackend::CpuBackend(int max_threads) {
  ggml_log_set(quiet_log, nullptr);
  const std::string dir = ggml_library_dir();
  if (dir.empty()) {
    error_ = "cannot find the directory of libggml-base.so (dladdr failed)";
    return;
  }
  if (const char* level = std::getenv("ROPECHECK_GGML_CPU"); level != nullptr && *level != '\0') {
    const std::string path = dir + "/libggml-cpu-" + level + ".so";
    if (ggml_backend_load(path.c_str()) == nullptr) {
      error_ = "ROPECHECK_GGML_CPU=" + std::string(level) + ": " + path +
               " does not load or does not run on this CPU";
      return;
    }
  } else {
    ggml_backend_load_all_from_path(dir.c_str());  // scores every variant, loads the best
  }
  backend_ = ggml_backend_init_by_type(GGML_BACKEND_DEVICE_TYPE_CPU, nullptr);
  if (backend_ == nullptr) {
    error_ = "no ggml CPU backend in " + dir + " runs on this CPU";
    return;
  }
  ggml_backend_dev_t device = ggml_backend_get_device(backend_);
  ggml_backend_reg_t reg = ggml_backend_dev_backend_reg(device);
  set_n_threads_ = proc<ggml_backend_set_n_threads_t>(reg, "ggml_backend_set_n_threads");
  const auto threadpool_new = proc<ggml_threadpool_t (*)(ggml_threadpool_params*)>(reg, "ggml_threadpool_new");
  threadpool_free_ = proc<void (*)(ggml_threadpool_t)>(reg, "ggml_threadpool_free");
  const auto set_threadpool = proc<void (*)(ggml_backend_t, ggml_threadpool_t)>(reg, "ggml_backend_cpu_set_threadpool");
  if (set_n_threads_ == nullptr) {
    error_ = "the CPU backend exports no ggml_backend_set_n_threads";
    return;
  }
  // One pool for the worker's life, as an application that computes many graphs keeps one:
  // without it every graph_compute makes and frees a pool (its threads, and its bookkeeping
  // even at one thread: about 4 us, most of a decode-sized rope).
  if (threadpool_new != nullptr && threadpool_free_ != nullptr && set_threadpool != nullptr) {
    ggml_threadpool_params params = ggml_threadpool_params_default(max_threads);
    pool_ = threadpool_new(&params);
    if (pool_ != nullptr) set_threadpool(backend_, pool_);
  }
  set_threads(1);

  std::string features;
  if (const auto get_features = proc<ggml_backend_get_features_t>(reg, "ggml_backend_get_features")) {
    for (const ggml_backend_feature* f = get_features(reg); f != nullptr && f->name != nullptr; ++f) {
      if (std::strcmp(f->value, "1") == 0) features += (features.empty() ? "" : " ") + std::string(f->name);
    }
  }
  const std::string variant = loaded_cpu_variant();
  description_ = "ggml " + std::string(ggml_version()) + " (" + ggml_commit() + ") CPU backend " +
                 (variant.empty() ? std::string("built in") : variant) + " [" + features + "], " +
                 (pool_ != nullptr ? "pool of " + std::to_string(max_threads) + " thread" + (max_threads > 1 ? "s" : "")
                                   : "no pool (one per graph)");
}

CpuBackend::~CpuBackend() {
  if (backend_ != nullptr) ggml_backend_free(backend_);
  if (pool_ != nullptr) threadpool_free_(pool_);
}

void CpuBackend::set_threads(int threads) {
  if (threads == threads_) return;
  set_n_threads_(backend_, threads);
  threads_ = threads;
}

}  // namespace ropecheck_ggml_peer
