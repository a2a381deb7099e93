# ropecheck's Python worker: runs in the user's interpreter, exec'd by ropecheck for
# `--python MODULE:FUNCTION` (plugins/host/python_process.cc), never by hand. It imports the
# function, says what it declares, then serves calls: q, k and positions are numpy views of the
# shared memory file ropecheck guards (no copy per call), one JSON message per request and reply
# on a SOCK_SEQPACKET socket. A backward call goes to the declared backward function, or through
# the function under torch.autograd. A function that declares "fused_cache" is a fused cache
# call instead: q, k, v, positions, slots and the two caches, as numpy views or as torch tensors
# on the device it declares (copied back after the call). One that declares "rope_form" is an
# engine's call form: q and k as strided views into one buffer, the positions, a cos/sin cache
# and a QK-norm's weights. The contract a function follows: docs/porting.md, "Python".
# Written for CPython >= 3.9 but parsed by older ones too, so that they can be told so.
import importlib
import importlib.util
import inspect
import json
import mmap
import os
import socket
import sys
import time
import traceback

MAX_MESSAGE = 1 << 20
KEYS = ("layouts", "scaling", "axes", "angles", "storage", "max_position", "max_head_dim", "partial_rotary",
        "backward", "autograd", "fused_cache", "tensors", "device", "rope_form")


def reply(channel, message):
    channel.send(json.dumps(message).encode("utf-8"))


def one_line(text, limit=600):
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[:limit] + "..."


def exception_text(error):
    return one_line("%s: %s" % (type(error).__name__, error))


def short_traceback(error):
    # The frames below the driver's own call: the user's code, last 3.
    frames = traceback.extract_tb(error.__traceback__)[1:][-3:]
    return "".join(traceback.format_list(frames))[-2000:]


def import_target(target):
    """The callable named MODULE:FUNCTION or path/to/file.py:FUNCTION, its name for the id, and its module."""
    if ":" not in target:
        raise LookupError("'%s' is not MODULE:FUNCTION (or path/to/file.py:FUNCTION)" % target)
    module_part, function_part = target.rsplit(":", 1)
    if not module_part or not function_part:
        raise LookupError("'%s' is not MODULE:FUNCTION (or path/to/file.py:FUNCTION)" % target)
    # The caller's directory first: `--python my_rope:apply` works from where the user stands.
    sys.path.insert(0, os.getcwd())
    if module_part.endswith(".py") or os.sep in module_part:
        path = os.path.abspath(module_part)
        if not os.path.isfile(path):
            raise LookupError("no such file: %s" % module_part)
        # its siblings import as they do when run there (where it really lies, behind a link)
        sys.path.insert(0, os.path.dirname(os.path.realpath(path)))
        name = os.path.splitext(os.path.basename(path))[0]
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    else:
        name = module_part
        if importlib.util.find_spec(module_part.split(".")[0]) is None:
            raise LookupError("no module named '%s' (searched the current directory and sys.path)" % module_part)
        module = importlib.import_module(module_part)
    function = module
    for attribute in function_part.split("."):
        if not hasattr(function, attribute):
            raise LookupError("module '%s' has no attribute '%s'" % (name, function_part))
        function = getattr(function, attribute)
    return function, "%s.%s" % (name, function_part), module


ROPE_ARGUMENTS = "fn(q, k, positions, spec)"
FUSED_ARGUMENTS = "fn(q, k, v, positions, slots, k_cache, v_cache, spec, cache)"
FORM_ARGUMENTS = "fn(q, k, positions, cos_sin_cache, norm, spec, form)"


def check_signature(function, label="", arguments=ROPE_ARGUMENTS):
    try:
        signature = inspect.signature(function)
    except (TypeError, ValueError):
        return  # a builtin or an extension without one: its first call will tell
    try:
        signature.bind(*([None] * arguments.count(",")), None)
    except TypeError as error:
        raise TypeError("%scannot be called as %s: signature %s (%s)" % (label, arguments, signature, error))


def check_tensors(declaration):
    """A fused call's "tensors" and "device": torch must import here and hold a tensor on the device,
    so that a device this machine lacks is said at load, not at the first call."""
    tensors = declaration.get("tensors", "numpy")
    if tensors != "torch":
        return  # "numpy" or a value the host refuses by name
    try:
        import torch
    except Exception as error:
        raise TypeError("its ropecheck declaration: 'tensors': 'torch' needs torch, which %s cannot import (%s)"
                        % (sys.executable, exception_text(error)))
    device = declaration.get("device", "cpu")
    if not isinstance(device, str):
        raise TypeError("its ropecheck declaration: 'device' must be a string such as \"cpu\" or \"cuda:0\", got %r"
                        % (device,))
    try:
        torch.empty(1, device=device)
    except Exception as error:  # an unknown name, a build without that backend, no such GPU
        raise TypeError("device '%s' is not available: %s" % (device, exception_text(error)))


def backward_of(declaration, module):
    """The function the declaration names for the backward pass, or None; raises TypeError saying why
    the declaration cannot stand. "backward" is replaced by its name (plain data for the hello);
    "autograd" imports torch here, so that a missing torch is said at load, not at the first call."""
    named, autograd = declaration.get("backward"), declaration.get("autograd", False)
    if not isinstance(autograd, bool):
        raise TypeError("its ropecheck declaration: 'autograd' must be True or False, got %r" % (autograd,))
    if named is not None and autograd:
        raise TypeError("its ropecheck declaration: 'backward' and 'autograd' both declared: the backward is "
                        "either the named function or torch.autograd through the forward, not both")
    if autograd and declaration.get("storage", "fp32") not in ("fp32", ["fp32"]):
        # bf16 crosses as uint16 bit patterns, which carry no gradient; fp16 waits for an example.
        raise TypeError("its ropecheck declaration: 'autograd' takes fp32 storage only, not %r"
                        % (declaration["storage"],))
    if autograd:
        try:
            import torch  # noqa: F401
        except Exception as error:
            raise TypeError("its ropecheck declaration: 'autograd' needs torch, which %s cannot import (%s)"
                            % (sys.executable, exception_text(error)))
    if named is None:
        return None
    function = getattr(module, named, None) if isinstance(named, str) else named
    if function is None:
        raise TypeError("its ropecheck declaration: 'backward' names '%s', which its module does not have" % named)
    if not callable(function):
        raise TypeError("its ropecheck declaration: 'backward' is a %s, not a function nor its name"
                        % type(function).__name__)
    check_signature(function, "its ropecheck declaration: 'backward' ")
    declaration["backward"] = named if isinstance(named, str) else getattr(named, "__qualname__", repr(named))
    return function


def load(target):
    """The hello message: what was loaded, or why not."""
    if sys.version_info < (3, 9):
        return None, {"ok": False, "error": "Python %d.%d at %s: ropecheck needs CPython >= 3.9"
                      % (sys.version_info[0], sys.version_info[1], sys.executable)}
    try:
        import numpy  # noqa: F401
    except Exception as error:  # ImportError, or a numpy that fails to import
        return None, {"ok": False, "error": "numpy cannot be imported by %s (Python %s): %s; install numpy "
                      "for that interpreter or name one that has it with --python-exe"
                      % (sys.executable, sys.version.split()[0], exception_text(error))}
    try:
        function, name, module = import_target(target)
    except LookupError as error:
        return None, {"ok": False, "error": str(error)}
    except BaseException as error:  # the module's own import failed: its exception, one line
        return None, {"ok": False, "error": "importing it raised %s" % exception_text(error)}
    if not callable(function):
        return None, {"ok": False, "error": "%s is a %s, not callable" % (name, type(function).__name__)}
    declaration = getattr(function, "ropecheck", None)
    if declaration is not None and not isinstance(declaration, dict):
        return None, {"ok": False, "error": "its ropecheck attribute is a %s; it must be a dict with keys %s"
                      % (type(declaration).__name__, ", ".join(KEYS))}
    form = declaration is not None and "rope_form" in declaration
    fused = declaration is not None and "fused_cache" in declaration and not form
    try:
        check_signature(function, arguments=FORM_ARGUMENTS if form else FUSED_ARGUMENTS if fused else ROPE_ARGUMENTS)
    except TypeError as error:
        return None, {"ok": False, "error": str(error)}
    backward = None
    if declaration is not None:
        declaration = dict(declaration)  # a copy: "backward" becomes a name below
        try:
            if fused or form:
                check_tensors(declaration)  # neither has a backward: the host refuses one by name
            else:
                backward = backward_of(declaration, module)
        except TypeError as error:
            return None, {"ok": False, "error": str(error)}
        try:
            json.dumps(declaration)
        except (TypeError, ValueError) as error:
            return None, {"ok": False, "error": "its ropecheck attribute is not plain data: %s" % error}
    doc = inspect.getdoc(function) or ""
    autograd = declaration is not None and declaration.get("autograd") is True
    if fused or form:
        torch_device = declaration.get("device", "cpu") if declaration.get("tensors") == "torch" else None
        subject = (FormCall if form else FusedCall)(function, torch_device)
    else:
        subject = Subject(function, backward, autograd)
    return subject, {
        "ok": True, "name": name, "summary": one_line(doc.splitlines()[0] if doc else "", 200),
        "python": sys.version.split()[0], "executable": sys.executable, "numpy": numpy.__version__,
        "declaration": declaration}


class Subject:
    """What serves the calls: the function, and its backward (a declared function, or autograd)."""

    def __init__(self, function, backward, autograd):
        self.function = function
        self.backward = backward
        self.autograd = autograd

    def __call__(self, q, k, positions, spec, backward_pass):
        if backward_pass and self.autograd:
            return autograd_gradient(self.function, q, k, positions, spec)
        if backward_pass:
            return self.backward(q, k, positions, spec)
        if self.autograd:  # a PyTorch function: tensors in both passes (views of q and k here)
            import torch
            return self.function(torch.from_numpy(q), torch.from_numpy(k), positions, spec)
        return self.function(q, k, positions, spec)


class Memory:
    """The shared memory file, mapped again whenever ropecheck grew it."""

    def __init__(self, fd):
        self.fd = fd
        self.size = 0
        self.map = None
        self.kept = []  # old mappings a function still holds views of (state kept across calls)

    def view(self, file_bytes):
        if file_bytes != self.size:
            if self.map is not None:
                try:
                    self.map.close()
                except BufferError:
                    self.kept.append(self.map)
            self.map = mmap.mmap(self.fd, file_bytes, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
            self.size = file_bytes
        return self.map


def as_numpy(value):
    """A returned array as numpy: torch tensors (any device) through .numpy()."""
    import numpy
    if hasattr(value, "detach") and hasattr(value, "cpu"):
        value = value.detach().cpu().numpy()
    return numpy.asarray(value)


def take_returned(result, q, k):
    """Accepts None (rotated in place) or a pair (q, k) of new arrays of the same shape and dtype."""
    import numpy
    if result is None:
        return None
    if not isinstance(result, (tuple, list)) or len(result) != 2:
        return "returned a %s: expected None (q and k rotated in place) or a pair (q, k)" % type(result).__name__
    for label, out, view in (("q", result[0], q), ("k", result[1], k)):
        if out is view:
            continue
        array = as_numpy(out)
        if array.shape != view.shape or array.dtype != view.dtype:
            return "returned %s of shape %s and dtype %s; expected shape %s and dtype %s" % (
                label, tuple(array.shape), array.dtype, tuple(view.shape), view.dtype)
        numpy.copyto(view, array)
    return None


class GraphBroken(Exception):
    """The forward gave torch.autograd no path from an input to its output: a reason, not a crash."""


# What torch raises where a forward breaks the graph, and what that means for the gradient.
TORCH_GRAPH_ERRORS = (
    ("Can't call numpy() on Tensor that requires grad",
     "the forward called numpy() on a tensor that requires grad: a numpy round trip breaks the graph"),
    ("a leaf Variable that requires grad is being used in an in-place operation",
     "the forward wrote q or k in place: under autograd they are leaves that require grad (return new tensors)"),
)


def autograd_gradient(forward, dy_q, dy_k, positions, spec):
    """The backward of a PyTorch forward: dL/dq and dL/dk for dL/dy = (dy_q, dy_k), by
    torch.autograd.grad(outputs, inputs, grad_outputs=dy). The forward runs on leaf copies of dy
    (RoPE is linear: its gradient does not depend on the input)."""
    import torch
    inputs = (torch.tensor(dy_q, requires_grad=True), torch.tensor(dy_k, requires_grad=True))
    try:
        outputs = forward(inputs[0], inputs[1], positions, spec)
    except RuntimeError as error:
        for torch_says, meaning in TORCH_GRAPH_ERRORS:
            if torch_says in str(error):
                raise GraphBroken("%s, so no gradient reaches q and k" % meaning) from error
        raise
    if not isinstance(outputs, (tuple, list)) or len(outputs) != 2:
        raise GraphBroken("the forward returned a %s; under autograd it must return the pair (q, k) "
                          "of tensors computed from its inputs" % type(outputs).__name__)
    # Only outputs that carry a graph enter autograd.grad; an empty k (no kv heads) needs none.
    used, given, wrt = [], [], []
    for label, out, dy, x in zip("qk", outputs, (dy_q, dy_k), inputs):
        if not isinstance(out, torch.Tensor):
            raise GraphBroken("the forward returned %s as a %s, not a torch tensor: the graph is broken "
                              "(a numpy round trip)" % (label, type(out).__name__))
        if tuple(out.shape) != dy.shape:
            raise GraphBroken("the forward returned %s of shape %s; expected %s"
                              % (label, tuple(out.shape), dy.shape))
        if dy.size == 0:
            continue
        if not out.requires_grad:
            raise GraphBroken("the forward's %s does not require grad: the graph from the input %s was "
                              "broken (a detach, a numpy round trip or a new tensor made from its values), so no "
                              "gradient reaches it" % (label, label))
        used.append(out)
        given.append(torch.from_numpy(dy).to(out.dtype))
        wrt.append(x)
    grads = torch.autograd.grad(used, wrt, grad_outputs=given, allow_unused=True) if used else ()
    for label, grad in zip("qk", grads):
        if grad is None:
            raise GraphBroken("the forward's %s does not depend on the input %s: the graph was broken, "
                              "so no gradient reaches it" % (label, label))
    results = [dy_q, dy_k]
    for x, grad in zip(wrt, grads):
        results[0 if x is inputs[0] else 1] = grad
    return results[0], results[1]


def serve(channel, memory, function):
    import numpy
    dtypes = {"fp32": numpy.float32, "fp16": numpy.float16, "bf16": numpy.uint16}
    while True:
        request = channel.recv(MAX_MESSAGE)
        if not request:
            return  # ropecheck closed the channel: done
        call = json.loads(request.decode("utf-8"))
        buffer = memory.view(call["file_bytes"])
        if call.get("call") in ("rope_cache", "rope_form"):
            reply(channel, function.serve(call, buffer))
            continue
        tokens, head_dim = call["tokens"], call["head_dim"]
        dtype = dtypes[call["dtype"]]
        q = numpy.ndarray((tokens, call["q_heads"], head_dim), dtype, buffer, call["q"])
        k = numpy.ndarray((tokens, call["k_heads"], head_dim), dtype, buffer, call["k"])
        # One axis: [tokens], as every function before multi-axis RoPE took it; several (a function
        # that declared "axes"): [tokens, axes], token-major as ropecheck stores them.
        axes = call.get("axes", 1)
        shape = (tokens,) if axes == 1 else (tokens, axes)
        positions = numpy.ndarray(shape, numpy.int64, buffer, call["positions"])
        positions.flags.writeable = False  # read-only; a write through another view is caught by ropecheck
        clock = time.thread_time_ns if call["threads"] == 1 else time.perf_counter_ns
        try:
            start = clock()
            result = function(q, k, positions, call["spec"], call.get("pass") == "backward")
            took = clock() - start
            problem = take_returned(result, q, k)
        except BaseException as error:  # SystemExit included: the function's fault, not the driver's
            if isinstance(error, KeyboardInterrupt):
                raise
            where = short_traceback(error)
            if isinstance(error, GraphBroken):  # the user's line where torch raised, else none of the driver's
                where = short_traceback(error.__cause__) if error.__cause__ is not None else ""
            reply(channel, {"status": "error", "error": exception_text(error), "traceback": where})
            continue
        finally:
            del q, k, positions  # no view may outlive a remap
        if problem is not None:
            reply(channel, {"status": "error", "error": problem, "traceback": ""})
        else:
            reply(channel, {"status": "ok", "ns": took})



# --- the fused cache call (docs/porting.md, "Python: the fused cache call") ---------------------

# A cache's element as numpy holds it: bf16 and FP8 as their bit patterns (numpy has neither).
CACHE_NUMPY = {"fp32": "float32", "fp16": "float16", "bf16": "uint16", "fp8_e4m3": "uint8", "fp8_e5m2": "uint8"}
# ... and as torch does: FP8 as its own dtype where this torch has one, else uint8 bit patterns.
CACHE_TORCH = {"fp32": "float32", "fp16": "float16", "bf16": "bfloat16", "fp8_e4m3": "float8_e4m3fn",
               "fp8_e5m2": "float8_e5m2"}


def cache_shape(cache):
    layout = cache["layout"]
    if layout == "nhd":
        return (cache["blocks"], cache["block_size"], cache["kv_heads"], cache["head_dim"])
    if layout == "hnd":
        return (cache["blocks"], cache["kv_heads"], cache["block_size"], cache["head_dim"])
    return (cache["blocks"], cache["block_size"], cache["latent_dim"] + cache["head_dim"])  # mla


def fused_views(call, buffer):
    """The call's arrays: numpy views of the shared memory, in the order the function takes them.
    v, positions and slots are read-only; k may be rotated in place (what it holds is not read)."""
    import numpy
    cache, tokens = call["cache"], call["tokens"]
    head_dim, kv_heads = cache["head_dim"], cache["kv_heads"]
    mla = cache["layout"] == "mla"
    v_dim = cache["latent_dim"] if mla else head_dim

    def view(shape, dtype, key, writeable=True):
        array = numpy.ndarray(shape, dtype, buffer, call[key])
        array.flags.writeable = writeable
        return array

    axes = call.get("axes", 1)
    cache_dtype = numpy.dtype(CACHE_NUMPY[cache["storage"]])
    return {"q": view((tokens, call["q_heads"], head_dim), numpy.float32, "q"),
            "k": view((tokens, kv_heads, head_dim), numpy.float32, "k"),
            "v": view((tokens, kv_heads, v_dim), numpy.float32, "v", False),
            "positions": view((tokens,) if axes == 1 else (tokens, axes), numpy.int64, "positions", False),
            "slots": view((tokens,), numpy.int64, "slots", False),
            "k_cache": view(cache_shape(cache), cache_dtype, "k_cache"),
            "v_cache": None if mla else view(cache_shape(cache), cache_dtype, "v_cache")}


def torch_cache_dtype(torch, storage):
    """The torch dtype a cache of `storage` is handed as: uint8 for FP8 on a torch without it."""
    return getattr(torch, CACHE_TORCH[storage], torch.uint8)


def to_torch(torch, array, storage, device):
    """A numpy view as a tensor on `device`: on the CPU the same memory (writable views) or a copy
    (read-only ones, which torch.from_numpy would warn about); elsewhere a copy there."""
    import numpy
    if not array.flags.writeable:
        array = array.copy()
    if storage == "bf16":  # this torch may not take numpy's uint16: the same bits as int16
        tensor = torch.from_numpy(array.view(numpy.int16)).view(torch.bfloat16)
    else:
        tensor = torch.from_numpy(array)
        if storage is not None and tensor.dtype != torch_cache_dtype(torch, storage):
            tensor = tensor.view(torch_cache_dtype(torch, storage))  # FP8 bit patterns as FP8
    return tensor if device == "cpu" else tensor.to(device)


def as_bits(torch, value, storage):
    """A tensor (any device) or array as numpy, cache elements as the bits numpy keeps them in."""
    import numpy
    if torch is not None and isinstance(value, torch.Tensor):
        value = value.detach().to("cpu")
        if value.dtype == torch.bfloat16:
            return value.view(torch.int16).numpy().view(numpy.uint16)
        if storage is not None and storage.startswith("fp8") and value.dtype != torch.uint8 and value.element_size() == 1:
            return value.view(torch.uint8).numpy()
        return value.numpy()
    return numpy.asarray(value)


def dtype_name(value):
    return str(getattr(value, "dtype", type(value).__name__)).replace("torch.", "")


class FusedCall:
    """Serves a fused cache call: the function, and the device its torch tensors go to (None: numpy)."""

    def __init__(self, function, torch_device):
        self.function = function
        self.device = torch_device

    def serve(self, call, buffer):
        views = fused_views(call, buffer)
        torch = None
        if self.device is not None:
            import torch
        storage = call["cache"]["storage"]
        # Per argument, what it is handed as and its storage (None: float32 or int64 as it is).
        kinds = {"q": None, "k": None, "v": None, "positions": None, "slots": None, "k_cache": storage,
                 "v_cache": storage}
        given = dict(views)
        if torch is not None:
            given = {name: None if view is None else to_torch(torch, view, kinds[name], self.device)
                     for name, view in views.items()}
        expected = {name: (None if value is None else (tuple(value.shape), value.dtype)) for name, value in given.items()}
        clock = time.thread_time_ns if call["threads"] == 1 else time.perf_counter_ns
        try:
            start = clock()
            result = self.function(given["q"], given["k"], given["v"], given["positions"], given["slots"],
                                   given["k_cache"], given["v_cache"], call["spec"], call["cache"])
            took = clock() - start
            problem = self.write_back(torch, result, given, expected, views, kinds)
        except BaseException as error:  # SystemExit included: the function's fault, not the driver's
            if isinstance(error, KeyboardInterrupt):
                raise
            return {"status": "error", "raised": True, "error": exception_text(error),
                    "traceback": short_traceback(error)}
        finally:
            del views, given  # no view may outlive a remap
        if problem is not None:
            return {"status": "error", "error": problem, "traceback": ""}
        return {"status": "ok", "ns": took}

    @staticmethod
    def write_back(torch, result, given, expected, views, kinds):
        """q and the caches into the shared memory: what the function left in the tensors it was
        given, or the new ones it returned, (q, k_cache, v_cache). A problem's text, or None."""
        import numpy
        outputs = {"q": given["q"], "k_cache": given["k_cache"], "v_cache": given["v_cache"]}
        verb = "left"
        if result is not None:
            if not isinstance(result, (tuple, list)) or len(result) != 3:
                return ("returned a %s: expected None (q and the caches written in place) or the triple "
                        "(q, k_cache, v_cache)" % type(result).__name__)
            outputs = dict(zip(("q", "k_cache", "v_cache"), result))
            verb = "returned"
        for name, value in outputs.items():
            if expected[name] is None:  # mla: no v cache
                if value is not None:
                    return "%s v_cache %s: an mla cache is one tensor, k_cache (v_cache is None)" % (
                        verb, dtype_name(value))
                continue
            shape, dtype = expected[name]
            got_shape = tuple(getattr(value, "shape", ()))
            if value is None or got_shape != shape or value.dtype != dtype:
                return "%s %s of shape %s and dtype %s; expected shape %s and dtype %s" % (
                    verb, name, got_shape, dtype_name(value), shape, str(dtype).replace("torch.", ""))
            if value is views[name]:
                continue  # numpy, written in place
            array = as_bits(torch, value, kinds[name])
            if array.ctypes.data != views[name].ctypes.data:  # not the shared memory itself (a CPU tensor's)
                numpy.copyto(views[name], array)
        return None


# --- the call forms (docs/porting.md, "Python: the call forms") -------------------------------

# The buffer's element as numpy holds it: bf16 as the uint16 top half of a float32 (numpy has none).
FORM_NUMPY = {"fp32": "float32", "fp16": "float16", "bf16": "uint16"}


def strided(base, view, tokens, head_dim, torch):
    """A HeadView (elements) of the flat buffer as [tokens, heads, head_dim]: torch.as_strided, or
    numpy's as_strided over the same memory; None for an absent k."""
    if view is None:
        return None
    shape = (tokens, view["heads"], head_dim)
    if torch is not None:
        return torch.as_strided(base, shape, (view["token_stride"], view["head_stride"], 1), view["offset"])
    import numpy
    item = base.itemsize
    return numpy.lib.stride_tricks.as_strided(
        base[view["offset"]:], shape, (view["token_stride"] * item, view["head_stride"] * item, item), writeable=True)


class FormCall:
    """Serves a call form: the function, and the device its torch tensors go to (None: numpy)."""

    def __init__(self, function, torch_device):
        self.function = function
        self.device = torch_device

    def serve(self, call, buffer):
        import numpy
        torch = None
        if self.device is not None:
            import torch
        storage, tokens, head_dim = call["storage"], call["tokens"], call["head_dim"]
        spec = call["spec"]

        def array(shape, dtype, key, writeable):
            # Read-only inputs: numpy refuses a write; torch gets the shared memory itself (a
            # from_numpy of a read-only array warns), and ropecheck compares them after the call.
            a = numpy.ndarray(shape, dtype, buffer, key)
            a.flags.writeable = writeable or torch is not None
            return a

        flat = array((call["elements"],), FORM_NUMPY[storage], call["buffer"], True)
        positions = array((tokens,), numpy.int64, call["positions"], False)
        cache = None
        if call["cos_sin_cache"] is not None:
            cache = array((call["cache_rows"], spec["rotary_dim"]), numpy.float32, call["cos_sin_cache"], False)
        norm = None
        if call["norm"] is not None:
            norm = dict(call["norm"])
            for name in ("q_weight", "k_weight"):
                if norm[name] is not None:
                    norm[name] = array((head_dim,), numpy.float32, norm[name], False)
        base = flat
        if torch is not None:
            base = to_torch(torch, flat, storage, self.device)  # the CPU: the same memory; else a copy there
            positions, cache = (None if a is None else to_torch(torch, a, None, self.device) for a in (positions, cache))
            if norm is not None:
                for name in ("q_weight", "k_weight"):
                    if norm[name] is not None:
                        norm[name] = to_torch(torch, norm[name], None, self.device)
        q = strided(base, call["q"], tokens, head_dim, torch)
        k = strided(base, call["k"], tokens, head_dim, torch)
        form = {"storage": storage, "angles": call["angles"], "tokens": tokens, "q_view": call["q"],
                "k_view": call["k"], "buffer": base}
        expected = {name: None if x is None else (tuple(x.shape), x.dtype) for name, x in (("q", q), ("k", k))}
        clock = time.thread_time_ns if call["threads"] == 1 else time.perf_counter_ns
        try:
            start = clock()
            result = self.function(q, k, positions, cache, norm, spec, form)
            took = clock() - start
            problem = self.write_back(result, {"q": q, "k": k}, expected)
            if problem is None and base is not flat and base.data_ptr() != flat.ctypes.data:
                numpy.copyto(flat, as_bits(torch, base, storage))  # the device's copy of the buffer
        except BaseException as error:  # SystemExit included: the function's fault, not the driver's
            if isinstance(error, KeyboardInterrupt):
                raise
            return {"status": "error", "raised": True, "error": exception_text(error),
                    "traceback": short_traceback(error)}
        finally:
            del flat, base, q, k, positions, cache, norm, form  # no view may outlive a remap
        if problem is not None:
            return {"status": "error", "error": problem, "traceback": ""}
        return {"status": "ok", "ns": took}

    @staticmethod
    def write_back(result, views, expected):
        """None (q and k written in place through the views) or the pair (q, k) of new arrays,
        copied into the views (k None when the call has none). A problem's text, or None."""
        if result is None:
            return None
        if not isinstance(result, (tuple, list)) or len(result) != 2:
            return ("returned a %s: expected None (q and k written in place through their views) or the pair (q, k)"
                    % type(result).__name__)
        for name, value in zip(("q", "k"), result):
            if expected[name] is None:
                if value is not None:
                    return "returned k %s: the call has no k (k is None)" % dtype_name(value)
                continue
            shape, dtype = expected[name]
            got_shape = tuple(getattr(value, "shape", ()))
            if value is None or got_shape != shape or value.dtype != dtype:
                return "returned %s of shape %s and dtype %s; expected shape %s and dtype %s" % (
                    name, got_shape, dtype_name(value), shape, str(dtype).replace("torch.", ""))
            if value is not views[name]:
                views[name][...] = value  # through the strided view: into the buffer
        return None


def main():
    arguments = sys.argv[1:]
    if len(arguments) != 3:
        sys.stderr.write("ropecheck_driver.py is started by ropecheck (--python), not by hand\n")
        return 2
    channel_fd, memory_fd, target = int(arguments[0]), int(arguments[1]), arguments[2]
    # The driver's own directory is not the user's: take it off the import path.
    if sys.path and os.path.abspath(sys.path[0] or ".") == os.path.dirname(os.path.abspath(__file__)):
        del sys.path[0]
    channel = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET, 0, channel_fd)
    subject, hello = load(target)
    reply(channel, hello)
    if subject is None:
        return 0
    serve(channel, Memory(memory_fd), subject)
    return 0


if __name__ == "__main__":
    sys.exit(main())
