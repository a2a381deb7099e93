// A Python callable as a RopeImpl with id `python/<module>.<function>` (`--python MODULE:FUNCTION`):
// the user's interpreter runs plugins/python/ropecheck_driver.py in a child process, which imports
// the function and applies it to numpy views of the same guarded shared memory a plugin gets
// (outside_rope.h). One that declares the fused cache call ("fused_cache") is a RopeCacheImpl
// with the same id instead (python_rope_cache.h), one that declares an engine's call form
// ("rope_form") a RopeFormImpl (python_rope_form.h). The contract a function follows is
// docs/porting.md's "Python" section.
#pragma once

#include <filesystem>
#include <memory>
#include <string>

#include "impls/fused/rope_cache_impl.h"
#include "impls/fused/rope_form_impl.h"
#include "impls/rope_impl.h"

namespace ropecheck {

struct PluginOptions;

// What the driver reported when it loaded the function (list --python shows it).
struct PythonInfo {
  std::string target;                  // as given: MODULE:FUNCTION or path/to/file.py:FUNCTION
  std::string name;                    // the id is "python/" + name
  std::filesystem::path interpreter;   // the executable that was started
  std::string python_version;          // "3.11.2"
  std::string numpy_version;
  std::string declaration;             // the function's `ropecheck` attribute as JSON, "" without one
};

// Starts the interpreter (options.python_exe: a name searched on PATH, or a path) on the driver,
// and judges what it reports. Throws InvalidInput (the CLI's exit 2) with a one-line reason: no
// such interpreter or driver, an interpreter older than 3.9 or without numpy, no such module or
// function, an import that raised, not callable, a signature that cannot take
// (q, k, positions, spec), a malformed declaration, a crash or hang while loading.
std::unique_ptr<RopeImpl> load_python(const std::string& target, const PluginOptions& options);

// What a Python callable is, as its declaration says: a RoPE function, a fused cache call (its
// `ropecheck` attribute has "fused_cache") or a call form ("rope_form"). Exactly one is set. Throws as load_python(), and
// for a malformed fused declaration or a declared device that torch cannot use there.
struct PythonSubject {
  std::unique_ptr<RopeImpl> rope;
  std::unique_ptr<RopeCacheImpl> rope_cache;
  std::unique_ptr<RopeFormImpl> rope_form;
};
PythonSubject load_python_subject(const std::string& target, const PluginOptions& options);

// load_python() refuses a fused cache call and a call form, load_python_rope_cache() and
// load_python_rope_form() every other kind (InvalidInput, saying which it is).
std::unique_ptr<RopeCacheImpl> load_python_rope_cache(const std::string& target, const PluginOptions& options);
std::unique_ptr<RopeFormImpl> load_python_rope_form(const std::string& target, const PluginOptions& options);

// The PythonInfo of an implementation made by load_python() (load_python_rope_cache()); nullptr
// for any other.
const PythonInfo* python_info(const RopeImpl& impl);
const PythonInfo* python_info(const RopeCacheImpl& impl);
const PythonInfo* python_info(const RopeFormImpl& impl);

// The driver script: $ROPECHECK_PYTHON_DRIVER when set, else next to the installed binary
// (<prefix>/share/ropecheck/python/), else where this build's source tree has it. Throws
// InvalidInput when none exists.
std::filesystem::path python_driver_path();

}  // namespace ropecheck
