// PythonProcess (python_process.h): exec of the user's interpreter on the driver, the JSON of a
// call (the spec as a dict with HF's rope_scaling and mrope_section names), and a timed call's
// probe in the host.
#include "plugins/host/python_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <algorithm>
#include <array>

#include "core/position_axes.h"
#include "core/scaling.h"
#include "plugins/host/plugin_host.h"
#include "plugins/host/probe_team.h"
#include "ropecheck/plugin.h"

namespace ropecheck {
namespace {

using Json = nlohmann::json;

// Where the child finds its two descriptors (the driver's argv says so).
constexpr int kChildChannelFd = 3;
constexpr int kChildMemoryFd = 4;
constexpr int kExitExecFailed = 127;  // as a shell says "command not found"
constexpr std::size_t kMaxMessage = 1 << 20;

// HF transformers' rope_scaling["rope_type"] of each kind (static NTK has none there: "ntk").
std::string_view rope_type(ScalingKind kind) {
  switch (kind) {
    case ScalingKind::none: return "default";
    case ScalingKind::linear: return "linear";
    case ScalingKind::ntk: return "ntk";
    case ScalingKind::dynamic_ntk: return "dynamic";
    case ScalingKind::yarn: return "yarn";
    case ScalingKind::llama3: return "llama3";
    case ScalingKind::longrope: return "longrope";
  }
  return "default";
}

}  // namespace

Json python_spec(const ropecheck_plugin_spec& s, std::span<const double> factors) {
  const auto kind = static_cast<ScalingKind>(s.scaling_kind);
  Json spec = {{"head_dim", s.head_dim},
               {"rotary_dim", s.rotary_dim},
               {"base", s.base},
               {"layout", s.layout == ROPECHECK_LAYOUT_INTERLEAVED ? "interleaved" : "half_split"},
               {"angles", s.angle_precision == ROPECHECK_ANGLES_FP64   ? "fp64"
                          : s.angle_precision == ROPECHECK_ANGLES_FP32 ? "fp32"
                                                                       : "fp32_recurrence"},
               {"rope_scaling", nullptr}};
  // Multi-axis RoPE as HF's Qwen2-VL config names it: the sections of the rotary pairs per axis
  // (t, h, w; row, column), one entry per axis, "mrope_section" whatever the mode (HF's vision
  // tower has no name for its two halves). None with one axis.
  const auto mode = static_cast<AxisMode>(s.axis_mode);
  spec["axes"] = to_string(mode);
  spec["mrope_section"] = nullptr;
  if (mode != AxisMode::none) {
    spec["mrope_section"] = std::vector<int>(s.sections, s.sections + axis_count(mode));
  }
  if (kind == ScalingKind::none) return spec;
  Json scaling = {{"rope_type", rope_type(kind)}, {"factor", s.factor}, {"attention_factor", s.attention_factor}};
  if (s.original_max_position != 0) scaling["original_max_position_embeddings"] = s.original_max_position;
  if (s.sequence_length != 0) scaling["sequence_length"] = s.sequence_length;
  if (kind == ScalingKind::yarn) {
    scaling["beta_fast"] = s.beta_fast;
    scaling["beta_slow"] = s.beta_slow;
    scaling["truncate"] = s.yarn_truncate != 0;
  }
  if (kind == ScalingKind::llama3) {
    scaling["low_freq_factor"] = s.low_freq_factor;
    scaling["high_freq_factor"] = s.high_freq_factor;
  }
  if (!factors.empty()) {
    const std::size_t n = factors.size() / 2;
    scaling["short_factor"] = std::vector<double>(factors.begin(), factors.begin() + static_cast<std::ptrdiff_t>(n));
    scaling["long_factor"] = std::vector<double>(factors.begin() + static_cast<std::ptrdiff_t>(n), factors.end());
  }
  spec["rope_scaling"] = std::move(scaling);
  return spec;
}

namespace {

// The spec dict of a RoPE call: LongRoPE's factor lists from the shared memory, where the call
// staged them.
Json spec_json(const plugin_protocol::CallMessage& call, const GuardedBuffers& memory) {
  const auto* factors = reinterpret_cast<const double*>(memory.data(GuardedBuffers::factors));
  return python_spec(call.spec, std::span<const double>(factors, 2 * call.factors_count));
}

}  // namespace

void PythonProcess::run(int channel, const void* self_pointer) {
  const auto& self = *static_cast<const PythonProcess*>(self_pointer);
  // Nothing here may allocate or return into the host's stack (this is a fork of it).
  const pid_t host = getppid();
  prctl(PR_SET_PDEATHSIG, SIGKILL);  // a worker never outlives ropecheck
  if (getppid() != host) _exit(kExitExecFailed);
  default_crash_signals();
  // The two descriptors to fixed numbers, without close-on-exec (dup2 clears it): first out of
  // the way, as either may already sit on the other's number.
  const int channel_high = fcntl(channel, F_DUPFD, 100);
  const int memory_high = fcntl(self.memory_fd_, F_DUPFD, 100);
  if (channel_high < 0 || memory_high < 0) _exit(kExitExecFailed);
  if (dup2(channel_high, kChildChannelFd) < 0 || dup2(memory_high, kChildMemoryFd) < 0) _exit(kExitExecFailed);
  close_other_files(kChildChannelFd, kChildMemoryFd);
  dup2(STDERR_FILENO, STDOUT_FILENO);  // the function's prints must not mix into the result table
  execv(self.argv_[0], self.argv_.data());
  _exit(kExitExecFailed);
}

PythonProcess::PythonProcess(const PythonStart& start, const GuardedBuffers& memory, double timeout_seconds)
    : args_{start.interpreter, "-B",  // -B: no __pycache__ beside the user's module
            start.driver, std::to_string(kChildChannelFd), std::to_string(kChildMemoryFd), start.target},
      argv_([this] {
        std::vector<char*> argv;
        for (auto& arg : args_) argv.push_back(arg.data());
        argv.push_back(nullptr);
        return argv;
      }()),
      memory_fd_(memory.fd()),
      memory_(memory),
      child_(&PythonProcess::run, this, "Python function", timeout_seconds) {
  hello_ = receive_json("loading", std::max(timeout_seconds, kLoadTimeoutSeconds));
}

Json PythonProcess::receive_json(std::string_view during, double seconds) {
  buffer_.resize(kMaxMessage);  // once: a call's reply is small, the buffer is kept
  const std::size_t got = child_.receive(buffer_.data(), buffer_.size(), during, seconds);
  Json message = Json::parse(std::string_view(buffer_).substr(0, got), nullptr, false);
  if (message.is_discarded() || !message.is_object()) {
    child_.reap(true);
    throw PluginFailure(std::string("Python worker sent a malformed message (") + std::string(during) + ")");
  }
  return message;
}

Json PythonProcess::request(const plugin_protocol::CallMessage& m) const {
  return {{"file_bytes", m.file_bytes},
          {"q", m.q_offset},
          {"k", m.k_offset},
          {"positions", m.positions_offset},
          {"tokens", m.tokens},
          {"axes", axis_count(static_cast<AxisMode>(m.spec.axis_mode))},  // positions per token
          {"q_heads", m.q_heads},
          {"k_heads", m.k_heads},
          {"head_dim", m.spec.head_dim},
          {"dtype", m.dtype == ROPECHECK_DTYPE_FP32 ? "fp32" : m.dtype == ROPECHECK_DTYPE_BF16 ? "bf16" : "fp16"},
          {"threads", m.threads},
          {"pass", m.backward != 0 ? "backward" : "forward"},  // the backward: the declared one (python_host.cc)
          {"spec", spec_json(m, memory_)}};
}

Json PythonProcess::call(const Json& request, std::string_view function, double seconds) {
  const std::string text = request.dump();
  child_.send(text.data(), text.size(), function);
  Json answer = receive_json(function, seconds);
  error_.clear();
  if (answer.value("status", "") != "ok") {
    error_ = answer.value("error", std::string("an error it did not describe"));
    if (const std::string where = answer.value("traceback", std::string()); !where.empty()) {
      // The last frame's "File ..., line N, in f": where in the user's code.
      const auto line_start = where.rfind("  File ");
      if (line_start != std::string::npos) {
        const auto line_end = where.find('\n', line_start);
        error_ += " at " + where.substr(line_start + 2, line_end == std::string::npos ? std::string::npos
                                                                                        : line_end - line_start - 2);
      }
    }
  }
  return answer;
}

plugin_protocol::ReplyMessage PythonProcess::exchange(const plugin_protocol::CallMessage& message,
                                                      std::string_view function, double seconds) {
  const Json answer = call(request(message), function, seconds);
  plugin_protocol::ReplyMessage reply;
  if (answer.value("status", "") != "ok") {
    reply.status = ROPECHECK_PLUGIN_ERROR;
    return reply;
  }
  reply.status = ROPECHECK_PLUGIN_OK;
  reply.apply_seconds = 1e-9 * answer.value("ns", 0.0);
  if (message.probe != nullptr) {
    // The probe over the same shared q and k the function just rotated, here (the interpreter
    // cannot run the host's code), at the call's thread count: one thread's CPU time at one, the
    // clock the driver timed the function on.
    const std::size_t element = message.dtype == ROPECHECK_DTYPE_FP32 ? 4 : 2;
    const auto row = static_cast<std::size_t>(message.spec.head_dim * message.tokens) * element;
    const ProbeTeamResult probed = run_probe_team(
        message.probe, reinterpret_cast<float*>(memory_.data(GuardedBuffers::q)),
        row * static_cast<std::size_t>(message.q_heads) / 4, reinterpret_cast<float*>(memory_.data(GuardedBuffers::k)),
        row * static_cast<std::size_t>(message.k_heads) / 4, message.tokens, message.threads,
        std::max(reply.apply_seconds / 4, kMinProbeSeconds));
    reply.probe_seconds = probed.seconds;
    reply.probe_passes = probed.passes;
  }
  return reply;
}

}  // namespace ropecheck
