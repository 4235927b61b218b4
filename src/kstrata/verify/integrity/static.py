"""AST-based integrity checks of a candidate's source (never regexes, which
``__import__``/``getattr`` tricks defeat; KernelAgent issue #62).

Names are resolved through the file's imports (``import torch.nn.functional
as F`` makes ``F.relu`` mean ``torch.nn.functional.relu``), and code inside
``@triton.jit`` functions is DSL code, not host code.

Libraries the task's reference imports (issue #23)
--------------------------------------------------
The reference is the task's definition: the judge runs it and never checks
it. A candidate is checked, and the reference's own text run as a candidate
(KernelBench's self-check, ``ModelNew = Model``) must pass. So a library the
reference imports is the task's dependency, and a candidate importing it is
not ``no_foreign_libraries`` (``from einops import rearrange`` in Mamba2,
``import numpy as np`` in SwinTransformerV2); every other check on it stays
(a reference importing ``os`` does not let a candidate read files).

NumPy stays compute outside the backend wherever it runs per call: a NumPy
name in any function body but ``__init__``'s own statements (``forward``, a
helper, a lambda, a function nested in ``__init__``) is
``no_foreign_libraries`` in every mode, whether the reference imports NumPy
or not. At module level and in ``__init__`` it builds constants and
parameters once (SwinTransformerV2's ``/ np.log2(8)``); there it may be
called, or be a plain constant (``np.pi``) or an argument of a NumPy call
(``dtype=np.float32``), but not be kept as a value a later call could use
(``self.np = np``, ``self.f = np.exp``). Not caught statically: an ndarray
built in ``__init__`` and kept on the module, then combined with a tensor
in ``forward`` (NumPy's operator runs); KernelBench's references do not do
this.
"""

from __future__ import annotations

import ast
import re
import sys
from collections.abc import Iterator

from kstrata.pysyntax import parse_module
from kstrata.verify.integrity.registry import Finding

#: modules a candidate may import (prefix match on the dotted name)
ALLOWED_MODULES = ("torch", "triton", "tvm", "tilelang", "math", "typing", "__future__", "functools",
                   "dataclasses", "itertools", "operator", "numbers", "enum", "collections", "time")
MODULE_CHECKS = {
    "no_file_io": ("os", "pathlib", "shutil", "io", "tempfile", "glob", "fileinput", "mmap"),
    "no_network": ("socket", "urllib", "http", "requests", "ftplib", "ssl", "httpx", "aiohttp"),
    "no_subprocess": ("subprocess", "multiprocessing", "pty", "popen2"),
    "no_threads": ("threading", "_thread", "concurrent", "asyncio", "sched"),
    "no_introspection": ("gc", "inspect", "ctypes", "sys", "builtins", "importlib", "types",
                         "marshal", "pickle", "dill", "cloudpickle", "code", "dis", "weakref"),
    "no_reference_call": ("kstrata",),
}
#: torch.* callables that only allocate, view or describe (allowed in DSL host code)
TORCH_ALLOW = {
    "empty", "empty_like", "empty_strided", "zeros", "zeros_like", "ones", "ones_like", "full",
    "full_like", "arange", "tensor", "as_tensor", "as_strided", "device", "Size", "is_tensor",
    "numel", "finfo", "iinfo", "get_default_dtype", "no_grad", "inference_mode", "is_floating_point",
    "reshape", "view", "transpose", "permute", "flatten", "unsqueeze", "squeeze", "narrow", "t",
    "chunk", "split", "unbind", "broadcast_to", "Generator", "manual_seed", "set_grad_enabled",
    "cuda.current_device", "cuda.synchronize", "cuda.is_available", "cuda.device", "cuda.current_stream",
    "cuda.get_device_properties", "cuda.device_count", "nn.Parameter", "nn.Module", "nn.ParameterList",
    "nn.ModuleList", "nn.init", "empty_strided", "dtype", "float32", "Tensor",
}
#: tensor methods that compute (flagged in DSL host code outside __init__)
TENSOR_COMPUTE = {
    "sum", "mean", "exp", "exp2", "log", "log2", "log1p", "softmax", "log_softmax", "matmul", "mm", "bmm",
    "addmm", "baddbmm", "einsum", "relu", "sigmoid", "tanh", "gelu", "silu", "max", "min", "amax",
    "amin", "argmax", "argmin", "cumsum", "cumprod", "norm", "sqrt", "rsqrt", "pow", "mul", "add",
    "sub", "div", "var", "std", "topk", "sort", "clamp", "clip", "where", "masked_fill", "abs", "neg",
    "logsumexp", "prod", "erf", "mul_", "add_", "sub_", "div_", "exp_", "relu_", "clamp_", "pow_",
    "square", "reciprocal", "sign", "floor", "ceil", "round", "dot", "mv", "outer", "conv1d",
    "conv2d", "linear", "layer_norm", "rms_norm", "cross_entropy", "nll_loss", "gather", "scatter",
    "scatter_add", "index_add", "lerp", "addcmul", "addcdiv", "maximum", "minimum", "fmod", "remainder",
    "scaled_dot_product_attention", "cos", "sin", "tril", "triu", "max_pool2d", "avg_pool2d",
    "sigmoid_", "tanh_", "normalize", "dropout", "argsort", "mode", "median", "kthvalue", "any", "all",
    # a Python function applied per element on the host (red-team 2026-12-04: a "kernel" that only
    # copied, with the ReLU in Tensor.apply_, passed as a Triton kernel)
    "apply_", "map_", "map2_",
}
#: a string that selects plain TF32 (``"tf32"``, ``"TF32"``; not ``"tf32x3"``)
_PLAIN_TF32 = re.compile(r"(?i)tf32")
PATCH_ROOTS = ("torch", "triton", "time", "math", "kstrata", "builtins", "functools")
DUNDER_TRICKS = {"__dict__", "__globals__", "__builtins__", "__subclasses__", "__code__", "__closure__",
                 "__getattribute__", "__class__", "__bases__", "__mro__", "__import__", "__loader__",
                 "__spec__", "f_back", "f_globals", "f_locals", "f_builtins", "_getframe", "gi_frame",
                 "tb_frame", "modules", "__torch_function__", "__torch_dispatch__", "cr_frame", "ag_frame",
                 "f_code", "tb_next", "gi_yieldfrom", "cr_await", "ag_await", "f_trace", "__setattr__",
                 "__delattr__", "__annotations__", "__annotate__", "__type_params__"}
#: the same names as strings (``getattr(gen, "gi_frame")``, ``attrgetter("f_back")``): a way to the
#: judge's harness through interpreter frames (red-team round of 2026-12-03 replaced its handlers so)
INTROSPECTION_NAMES = (DUNDER_TRICKS - {"modules"}) | {"__self__", "__func__", "__wrapped__", "__defaults__",
                                                       "__kwdefaults__", "__getattr__"}
#: ways out of torch into NumPy (or any library that takes the buffer protocol):
#: tensor attributes, and torch functions that build tensors from NumPy arrays.
#: In DSL host code they are compute outside the DSL, like importing numpy.
ESCAPE_ATTRS = {"numpy", "__array__", "__array_interface__", "__array_struct__", "__array_wrap__",
                "__array_priority__", "tolist", "__dlpack__", "__cuda_array_interface__"}
ESCAPE_TORCH = {"torch.from_numpy", "torch.utils.dlpack.from_dlpack", "torch.utils.dlpack.to_dlpack",
                "torch.from_dlpack", "torch.frombuffer"}
#: library functions that evaluate text as Python (string annotations): eval() by another name
#: (red-team round of 2026-12-03: typing.get_type_hints on a function whose annotation was
#: "__import__('sys')._getframe(0)" reached frames and replaced a recorder)
EVAL_LIKE = {"typing.get_type_hints", "typing.ForwardRef", "typing.evaluate_forward_ref",
             "annotationlib.get_annotations", "annotationlib.call_evaluate_function",
             "typing_extensions.get_type_hints", "typing_extensions.evaluate_forward_ref"}
INTROSPECTION_CALLS = {"__import__", "eval", "exec", "compile", "globals", "locals", "vars",
                       "breakpoint", "memoryview"}
#: torch's own ways to run work on another thread (its inter-op pool): a call that returns
#: ``torch.jit.fork(...)``'s future unwaited leaves the rest of its work running after it returned,
#: which no harness check of Python threads sees (red team rt79:
#: benchmarks/results/redteam_rt79_timing/rt79_fork_left_running.py read correct, no_threads_left passed)
THREAD_APIS = {"torch.jit.fork", "torch.jit._fork", "torch._C._jit_fork", "torch.futures", "torch._C.Future",
               "torch.jit.Future", "torch.jit._wait", "torch.jit.wait", "torch.set_num_interop_threads"}
#: What the harness sets around a checked call and not around a timed one (deterministic
#: algorithms with uninitialized-memory fill, the op recorder's dispatch mode): a candidate
#: that reads them can compute one way when checked and another when timed (red-team round 3:
#: a TileLang kernel in checked calls, PyTorch in timed ones, read correct and faster).
MODE_PROBES = {"torch.are_deterministic_algorithms_enabled", "torch.is_deterministic_algorithms_warn_only_enabled",
               "torch.get_deterministic_debug_mode", "torch.utils.deterministic",
               "torch.utils._python_dispatch", "torch.overrides._get_current_function_mode",
               "torch.overrides._get_current_function_mode_stack", "torch._C._len_torch_dispatch_stack"}
#: Top-level modules that are never reached through another module's attribute by honest
#: code (``torch.cuda.os``, ``torch._dynamo.utils.gc``): where a path's root is not imported
#: here (TVM, TileLang), such a component is read as that module.
REACHABLE_MODULES = tuple(sorted({m for mods in MODULE_CHECKS.values() for m in mods} | {"numpy", "torch",
                                                                                          "triton"}))
#: host libraries that compute on their own arrays: named per call, they are compute outside the backend
ARRAY_LIBRARIES = ("numpy",)
REDUCED_DTYPES = {"float16", "half", "bfloat16", "float8_e4m3fn", "float8_e5m2"}
#: a reduced dtype as text (TileLang's and TVM's spelling: ``"float16"``, ``"bf16"``, ``"float8_e4m3"``)
REDUCED_DTYPE_TEXTS = REDUCED_DTYPES | {"fp16", "bf16", "float8_e4m3", "float8_e5m2fnuz", "float8_e4m3fnuz",
                                        "e4m3_float8", "e5m2_float8", "fp8"}
JIT_DECORATORS = ("triton.jit", "triton.autotune", "triton.heuristics", "triton.language.jit")


def _private(part: str) -> bool:
    """A private name by Python's convention: one leading underscore, not a dunder."""
    return len(part) > 1 and part.startswith("_") and not (part.startswith("__") and part.endswith("__"))


_PRIVATE_PART = re.compile(r"_[A-Za-z0-9]\w*")
_WORD = re.compile(r"\w+")
_HEAD = re.compile(r"[A-Za-z_]\w*")


def _private_text(text: str) -> bool:
    """Whether a string constant names something private: one name ``_x``, or
    a dotted name (``torch._C._x``, ``a.b._c.d``) with a private part after
    its first. Read part by part, in time linear in the string: the one
    pattern this replaced backtracked over the dots, so a 200 KB literal
    ``"a._a._a._...!"`` in a candidate held the judge's static check for
    minutes (red team rt51)."""
    parts = text.split(".")
    if not all(_WORD.fullmatch(p) for p in parts):
        return False
    if len(parts) == 1:
        return _PRIVATE_PART.fullmatch(text) is not None
    return _HEAD.fullmatch(parts[0]) is not None and any(_PRIVATE_PART.fullmatch(p) for p in parts[1:])


def _canonical(name: str) -> tuple[str, str] | int | None:
    """Where dotted ``name`` leads, read from the modules already imported here
    (nothing is imported, no module ``__getattr__`` runs): ``(module, rest)``
    when it passes through an attribute that is another package's module or
    one of its own package's enclosing modules (``torch.cuda.os`` ->
    ``("os", "")``, ``torch.nn.functional.torch.relu`` -> ``("torch",
    "relu")``); the index of the first part it cannot read (a root not
    imported here, an attribute not in a module's namespace); else None."""
    import sys
    import types

    parts = name.split(".")
    obj = sys.modules.get(parts[0])
    if obj is None:
        return 1
    for i, part in enumerate(parts[1:], 1):
        if not isinstance(obj, types.ModuleType):
            return None
        nxt = vars(obj).get(part)
        if nxt is None:
            nxt = sys.modules.get(f"{obj.__name__}.{part}")
        if nxt is None:
            return i
        if isinstance(nxt, types.ModuleType):
            real, here = getattr(nxt, "__name__", ""), ".".join(parts[:i])
            if isinstance(real, str) and (real.split(".")[0] != parts[0] or here == real
                                          or here.startswith(real + ".")):
                return real, ".".join(parts[i + 1:])
        obj = nxt
    return None


def _collect_aliases(tree: ast.Module) -> dict[str, str]:
    """Names bound to an imported module or one of its attributes anywhere in
    the file: imports, and plain assignments of such a name (``_t =
    torch._dynamo.utils.torch``; ``t = torch``), followed through chains."""
    aliases: dict[str, str] = {}
    assigns = []
    for n in ast.walk(tree):
        if isinstance(n, ast.Import):
            for a in n.names:
                aliases[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
        elif isinstance(n, ast.ImportFrom) and not n.level and n.module:
            for a in n.names:
                if a.name != "*":
                    aliases[a.asname or a.name] = f"{n.module}.{a.name}"
        elif isinstance(n, (ast.Assign, ast.AnnAssign, ast.NamedExpr)) and n.value is not None:
            targets = n.targets if isinstance(n, ast.Assign) else [n.target]
            for t in targets:
                if isinstance(t, ast.Name) and isinstance(n.value, (ast.Name, ast.Attribute)):
                    assigns.append((t.id, n.value))
    for _ in range(4):  # chains of assignments, in any order in the file
        changed = False
        for target, value in assigns:
            parts = []
            node = value
            while isinstance(node, ast.Attribute):
                parts.append(node.attr)
                node = node.value
            if isinstance(node, ast.Name) and node.id in aliases and node.id != target:
                full = ".".join([aliases[node.id]] + parts[::-1])
                if aliases.get(target) != full and target not in aliases:
                    aliases[target] = full
                    changed = True
        if not changed:
            break
    return aliases


def _defined_private(tree: ast.Module) -> set[str]:
    """Private names the file defines itself (attributes it assigns, functions,
    classes, variables, parameters, keywords): ``self._cache`` is its own."""
    out: set[str] = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Store):
            out.add(n.attr)
        elif isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
            out.add(n.id)
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(n.name)
        elif isinstance(n, ast.arg):
            out.add(n.arg)
        elif isinstance(n, ast.keyword) and n.arg:
            out.add(n.arg)
    return {x for x in out if _private(x)}


def _docstrings(tree: ast.Module) -> set[int]:
    """ids of the string constants that are docstrings or parts of f-strings."""
    out = set()
    for n in ast.walk(tree):
        if isinstance(n, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and n.body:
            first = n.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                out.add(id(first.value))
        elif isinstance(n, ast.JoinedStr):
            out.update(id(v) for v in n.values)
    return out


def imported_roots(source: str) -> set[str]:
    """Top-level names of the modules ``source`` imports (absolute imports
    only): ``import numpy as np`` and ``from einops import rearrange`` give
    ``{"numpy", "einops"}``; an unparsable source gives none."""
    try:
        tree = parse_module(source)
    except SyntaxError:
        return set()
    out = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.Import):
            out.update(a.name.split(".")[0] for a in n.names)
        elif isinstance(n, ast.ImportFrom) and not n.level and n.module:
            out.add(n.module.split(".")[0])
    return out


def _array_constant(name: str) -> bool:
    """Whether dotted ``name`` (``numpy.pi``) is, in the installed library, a
    plain value: not a module, class or callable (read from ``sys.modules``;
    a library not imported here reads as not a constant)."""
    import sys
    import types

    parts = name.split(".")
    obj: object = sys.modules.get(parts[0])
    for part in parts[1:]:
        if obj is None or not isinstance(obj, types.ModuleType):
            return False
        obj = vars(obj).get(part)
    return obj is not None and not isinstance(obj, (types.ModuleType, type)) and not callable(obj)


class _Visitor(ast.NodeVisitor):
    def __init__(self, dsl: bool, dtype: str, allow_tf32: bool, allow_reduced: bool):
        self.dsl, self.dtype = dsl, dtype
        self.task_modules: set[str] = set()  # roots the reference imports (its dependencies)
        self.scope: list[str] = []  # enclosing function names, innermost last ("<lambda>" for a lambda)
        self.array_args: set[int] = set()  # ids of direct arguments of array-library calls
        self.allow_tf32, self.allow_reduced = allow_tf32, allow_reduced
        self.aliases: dict[str, str] = {}
        self.defined: set[str] = set()
        self.findings: list[Finding] = []
        self.in_jit = 0
        self.in_init = 0
        self.called: set[int] = set()  # ids of the nodes called (a Call's func)
        self.own_private: set[str] = set()  # private names the file defines (_defined_private)
        self.docstrings: set[int] = set()
        self.inner: set[int] = set()  # ids of attribute chains' inner links

    def private(self, name: str, node: ast.AST, what: str = "reaches") -> None:
        self.add("no_private_api", node, f"{what} {name}: private machinery of a library (a name with a "
                 "leading underscore, a module reached through another module's attribute, "
                 "or a string naming one) can switch off what kstrata records of a candidate's calls")

    def _path(self, name: str, node: ast.AST) -> None:
        """Checks of a dotted name rooted in an import (an attribute chain or
        an imported name): a private component, or another package's module
        reached through an attribute (read as importing it)."""
        parts = name.split(".")
        first = next((i for i, p in enumerate(parts) if _private(p)), None)
        if first is not None and not (first == 0 and len(parts) == 1):
            self.private(".".join(parts[:first + 1]), node)
        canon = _canonical(name)
        if isinstance(canon, tuple):
            module, rest = canon
            self._reached(module, name, node)
            if rest:
                self._path(f"{module}.{rest}", node)
        elif isinstance(canon, int):  # not readable here (TVM, TileLang; a lazy attribute): by name
            for i, p in enumerate(parts[canon:], canon):
                if p in REACHABLE_MODULES and p != parts[0]:
                    self._reached(p, ".".join(parts[:i + 1]), node)
                    break

    def _reached(self, module: str, through: str, node: ast.AST) -> None:
        before = len(self.findings)
        self._module_import(module, node)
        if len(self.findings) > before:
            f = self.findings[-1]
            f.message = f.message.replace(f"imports {module}", f"reaches module {module} as {through}")
        if module.split(".")[0] in ("torch", "triton", "tvm", "tilelang") or len(self.findings) == before:
            self.private(f"module {module} as {through}", node)

    # -- helpers --------------------------------------------------------
    def add(self, check: str, node: ast.AST, message: str) -> None:
        line = getattr(node, "lineno", 0)
        self.findings.append(Finding(check, f"line {line}: {message}",
                                     {"line": line, "code": ast.unparse(node)[:160]}))

    def dotted(self, node: ast.AST) -> str | None:
        """``F.relu`` -> ``torch.nn.functional.relu`` (None if not rooted in an import)."""
        parts = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if isinstance(node, ast.Name) and node.id in self.aliases:
            return ".".join([self.aliases[node.id]] + parts[::-1])
        return None

    def _module_import(self, name: str, node: ast.AST) -> None:
        for check, mods in MODULE_CHECKS.items():
            if any(name == m or name.startswith(m + ".") for m in mods):
                self.add(check, node, f"imports {name}")
                return
        if not any(name == m or name.startswith(m + ".") for m in ALLOWED_MODULES) \
                and name.split(".")[0] not in self.task_modules:
            self.add("no_foreign_libraries", node, f"imports {name}")

    def _array_use(self, name: str, node: ast.AST) -> None:
        """A name rooted in an array library (:data:`ARRAY_LIBRARIES`), the
        whole chain once: per call it is compute outside the backend; in
        setup code (module level, ``__init__``'s own statements) it may be
        called, a plain constant, or an argument of such a call, not kept as
        a module or function value (see the module docstring)."""
        if name.split(".")[0] not in ARRAY_LIBRARIES:
            return
        if self.scope and self.scope[-1] != "__init__":
            self.add("no_foreign_libraries", node, f"uses {name} in {self.scope[-1]} (NumPy computes outside "
                     "the backend on every call; only module level and __init__ may build constants with it)")
        elif id(node) not in self.called and id(node) not in self.array_args and not _array_constant(name):
            self.add("no_foreign_libraries", node, f"keeps {name} as a value (a later call could compute with "
                     "it outside the backend)")

    # -- imports --------------------------------------------------------
    def visit_Import(self, node: ast.Import) -> None:
        for a in node.names:
            self._module_import(a.name, node)
            self._path(a.name, node)
            if any(a.name == p or a.name.startswith(p + ".") for p in MODE_PROBES | THREAD_APIS):
                self._reference(a.name, node)
            if a.asname:
                self.aliases[a.asname] = a.name
            else:
                root = a.name.split(".")[0]
                self.aliases[root] = root

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        mod = "." * node.level + (node.module or "")
        if node.level:
            self.add("no_reference_call", node, f"relative import from {mod!r}")
            return
        self._module_import(mod, node)
        for a in node.names:
            self._path(f"{mod}.{a.name}" if a.name != "*" else mod, node)
            self.aliases[a.asname or a.name] = f"{mod}.{a.name}"
            if any(f"{mod}.{a.name}" == p or f"{mod}.{a.name}".startswith(p + ".") or mod == p
                   for p in MODE_PROBES | THREAD_APIS):
                self._reference(f"{mod}.{a.name}", node)
            if a.name == "*":
                self.add("no_introspection", node, f"star import from {mod}")

    # -- definitions ----------------------------------------------------
    def _is_jit(self, fn: ast.FunctionDef) -> bool:
        for d in fn.decorator_list:
            target = d.func if isinstance(d, ast.Call) else d
            name = self.dotted(target) or ""
            if name in JIT_DECORATORS or name.endswith(".jit"):
                return True
        return False

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        jit, init = self._is_jit(node), node.name == "__init__"
        for d in node.decorator_list:
            self.visit(d)
        # defaults and annotations run where the def is, outside the body: a default value or annotation
        # went unread by every check (`def f(x, g=__import__("os"))`, a TileLang accumulator dtype default)
        self.visit(node.args)
        if node.returns is not None:
            self.visit(node.returns)
        self.in_jit += jit
        self.in_init += init
        self.scope.append(node.name)
        for stmt in node.body:
            self.visit(stmt)
        self.scope.pop()
        self.in_jit -= jit
        self.in_init -= init

    visit_AsyncFunctionDef = visit_FunctionDef  # type: ignore[assignment]

    def visit_Lambda(self, node: ast.Lambda) -> None:
        self.visit(node.args)
        self.scope.append("<lambda>")
        self.visit(node.body)
        self.scope.pop()

    def visit_Try(self, node: ast.Try) -> None:
        if node.handlers:
            self.add("no_exception_fallback", node.handlers[0],
                     "try/except around candidate code (a failure must surface, not fall back)")
        self.generic_visit(node)

    visit_TryStar = visit_Try  # type: ignore[assignment]

    # -- names and attributes --------------------------------------------
    def _reference(self, name: str, node: ast.AST) -> None:
        """A mode probe read (called or not), and in DSL host code a torch
        compute function named without being called here: an alias
        (``_f = torch.addcmul``, ``self.f = torch.relu``) that host code calls
        later, which :meth:`_compute_call` does not see."""
        if any(name == p or name.startswith(p + ".") for p in THREAD_APIS):
            self.add("no_threads", node, f"uses {name}: work on torch's inter-op threads can go on after the call "
                     "returns, out of the judge's sight and clock")
        if any(name == p or name.startswith(p + ".") for p in MODE_PROBES):
            self.add("no_mode_probe", node, f"reads {name}: what the harness sets around checked calls, "
                     "so the candidate can behave differently when it is checked and when it is timed")
        elif self.dsl and not self.in_jit and id(node) not in self.called and name.startswith("torch.") \
                and _torch_compute_function(name):
            self.add("no_torch_compute", node, f"refers to {name} in host code (an alias of a torch compute "
                     "function)")

    def visit_Name(self, node: ast.Name) -> None:
        if isinstance(node.ctx, ast.Load) and node.id in self.aliases and node.id != self.aliases[node.id]:
            self._reference(self.aliases[node.id], node)  # from torch import are_deterministic... as probe
        if isinstance(node.ctx, ast.Load) and node.id == "Model" and "Model" not in self.defined:
            self.add("no_reference_call", node, "uses the reference class Model")
        if node.id in ("__builtins__", "__loader__", "__spec__"):
            self.add("no_introspection", node, f"uses {node.id}")
        if isinstance(node.ctx, ast.Load) and self.aliases.get(node.id) in EVAL_LIKE:
            self.add("no_introspection", node, f"uses {self.aliases[node.id]} (it evaluates text as code, as eval "
                     "does)")
        if isinstance(node.ctx, ast.Load) and node.id in ("getattr", "setattr", "delattr") \
                and id(node) not in self.called and node.id not in self.defined:
            self.add("no_introspection", node, f"passes {node.id} as a value (functools.reduce({node.id}, ...), "
                     "map): an attribute reached by a name the check cannot read")
        if isinstance(node.ctx, ast.Load) and node.id in self.aliases and id(node) not in self.inner:
            self._array_use(self.aliases[node.id], node)

    def visit_MatchClass(self, node: ast.MatchClass) -> None:
        # ``case object(gi_frame=fr)`` reads an attribute with no Attribute node or string (red-team
        # round of 2026-12-03: a frame walk written as class patterns)
        for attr in node.kwd_attrs:
            if attr in INTROSPECTION_NAMES:
                self.add("no_introspection", node, f"reads .{attr} in a class pattern")
            elif _private(attr) and attr not in self.own_private:
                self.private(f".{attr}", node, "reads")
        self.generic_visit(node)

    def visit_Constant(self, node: ast.Constant) -> None:
        if isinstance(node.value, str) and id(node) not in self.docstrings \
                and any(part in INTROSPECTION_NAMES for part in node.value.split(".")):
            self.add("no_introspection", node, f"names {node.value!r} (getattr/attrgetter into interpreter "
                     "frames or objects' internals, the way to the judge's harness in the candidate's process)")
        if isinstance(node.value, str) and id(node) not in self.docstrings and _private_text(node.value) \
                and node.value not in self.own_private:
            self.private(repr(node.value), node, "names")  # getattr/attrgetter/import_module by a string
        if isinstance(node.value, str) and any(node.value == p.rsplit(".", 1)[1] for p in MODE_PROBES):
            self.add("no_mode_probe", node, f"names {node.value!r} (getattr/attrgetter into the harness's "
                     "checked-call state)")
        if isinstance(node.value, str) and id(node) not in self.docstrings and self.dtype == "float32" \
                and not self.allow_tf32 and _PLAIN_TF32.fullmatch(node.value.strip()):
            # passed on through a variable or a constexpr (input_precision=PRECISION), the keyword check
            # alone missed it (red-team 2026-12-04); 'tf32x3' (three TF32 products) stays allowed
            self.add("no_precision_downgrade", node, f"names precision {node.value!r} (plain TF32, 10-bit "
                     "mantissa inputs) on a float32 task; use input_precision='ieee' or 'tf32x3'")
        if isinstance(node.value, str) and id(node) not in self.docstrings and self.dtype == "float32" \
                and not self.allow_reduced and node.value.strip().lower() in REDUCED_DTYPE_TEXTS:
            # TileLang names its dtypes as text (T.alloc_fragment(..., "float16"), accum_dtype="float16"): a
            # float16 row sum on a float32 task went unflagged where Triton's tl.float16 was (queue round rt58)
            self.add("no_precision_downgrade", node, f"names dtype {node.value!r} on a float32 task (a buffer, "
                     "accumulator or cast in fewer bits than the task's)")
        if self.dsl and not self.in_jit and isinstance(node.value, str) and node.value in ESCAPE_ATTRS:
            self.add("no_foreign_libraries", node, f"names tensor attribute {node.value!r} in host code "
                     "(getattr/attrgetter/methodcaller into NumPy or a Python list)")

    def visit_Attribute(self, node: ast.Attribute) -> None:
        name = self.dotted(node) or ""
        if name in EVAL_LIKE:
            self.add("no_introspection", node, f"uses {name} (it evaluates text as code, as eval does)")
        self._reference(name, node)
        if id(node) not in self.inner:  # the whole chain, once (its inner links are visited next)
            if name:
                self._path(name, node)
                self._array_use(name, node)
            else:
                link: ast.AST = node
                while isinstance(link, ast.Attribute):
                    if _private(link.attr) and link.attr not in self.own_private:
                        self.private(f".{link.attr}", link, "accesses")
                        break
                    link = link.value
        self.inner.add(id(node.value))
        # obj.modules() on no module path is nn.Module.modules() (KernelBench's weight init loops), not sys.modules
        module_method = node.attr == "modules" and id(node) in self.called and not name
        if node.attr in DUNDER_TRICKS and name not in ("torch.nn.modules",) and not module_method:
            self.add("no_introspection", node, f"accesses .{node.attr}")
        if node.attr == "Model" or name.endswith(".Model"):
            self.add("no_reference_call", node, "uses the reference class Model")
        if self.dtype == "float32" and not self.allow_reduced and node.attr in REDUCED_DTYPES and name:
            self.add("no_precision_downgrade", node, f"uses {name} on a float32 task")
        if name.startswith("torch.ops") or name.startswith("torch._C") or name.startswith("torch._ops"):
            self.add("no_torch_compute" if self.dsl else "no_introspection", node, f"uses {name}")
        if name.startswith("torch.cuda.Stream") or name in ("torch.cuda.stream", "torch.cuda.set_stream") \
                or node.attr == "record_stream":
            self.add("no_side_streams", node, f"uses {name or node.attr}")
        if self.dsl and not self.in_jit and (node.attr in ESCAPE_ATTRS or name in ESCAPE_TORCH):
            self.add("no_foreign_libraries", node, f"uses {name or '.' + node.attr} in host code (work done "
                     "on a NumPy view or Python list of a tensor is compute outside the DSL)")
        self.generic_visit(node)

    # -- assignments (monkey-patching, TF32 switches) ----------------------
    def _target(self, target: ast.AST, value: ast.AST | None, node: ast.AST) -> None:
        if isinstance(target, (ast.Tuple, ast.List)):
            for t in target.elts:
                self._target(t, None, node)
            return
        if not isinstance(target, ast.Attribute):
            return
        name = self.dotted(target) or ""
        if "allow_tf32" in name or "allow_fp16_reduced" in name or "allow_bf16_reduced" in name:
            if not self.allow_tf32:
                self.add("no_precision_downgrade", node, f"sets {name}")
            return
        root = name.split(".")[0]
        if root in PATCH_ROOTS:
            self.add("no_monkey_patching", node, f"assigns to {name}")

    def visit_Assign(self, node: ast.Assign) -> None:
        for t in node.targets:
            self._target(t, node.value, node)
        self.generic_visit(node)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self._target(node.target, node.value, node)
        self.generic_visit(node)

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self.generic_visit(node)
        for base in node.bases:
            if (self.dotted(base) or "") == "torch.Tensor":
                self.add("output_type", node, f"class {node.name} subclasses torch.Tensor")

    def visit_BinOp(self, node: ast.BinOp) -> None:
        if isinstance(node.op, ast.MatMult) and self.dsl and not self.in_jit and not self.in_init:
            self.add("no_torch_compute", node, "matrix product with @ in host code")
        self.generic_visit(node)

    # -- calls ----------------------------------------------------------
    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        self.called.add(id(func))
        name = self.dotted(func) or ""
        if name.split(".")[0] in ARRAY_LIBRARIES:
            self.array_args.update(id(a.value if isinstance(a, ast.Starred) else a) for a in node.args)
            self.array_args.update(id(k.value) for k in node.keywords)
        if name in ("operator.attrgetter", "operator.methodcaller") and not (
                node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)
                and all(isinstance(a, ast.Constant) for a in node.args[1:] if name.endswith("attrgetter"))):
            # red-team round of 2026-12-03: attrgetter('gi' + '_frame') walked to the judge's harness
            self.add("no_introspection", node, f"calls {name}() with a computed name (e.g. attrgetter('gi' + "
                     "'_frame'), which can reach the judge's harness); name attributes with literal strings")
        if isinstance(func, ast.Name):
            if func.id in INTROSPECTION_CALLS:
                self.add("no_introspection", node, f"calls {func.id}()")
            elif func.id == "open":
                self.add("no_file_io", node, "calls open()")
            elif func.id in ("getattr", "setattr", "delattr", "hasattr") and node.args:
                self._getattr(func.id, node)
        self._precision_call(name, node)
        if self.dsl and not self.in_jit and not self.in_init:
            self._compute_call(name, func, node)
        self.generic_visit(node)

    def _getattr(self, fn: str, node: ast.Call) -> None:
        obj = node.args[0]
        on_module = (self.dotted(obj) or "") != "" or (isinstance(obj, ast.Name) and obj.id in self.aliases)
        literal = len(node.args) > 1 and isinstance(node.args[1], ast.Constant)
        if fn in ("setattr", "delattr") and on_module:
            self.add("no_monkey_patching", node, f"{fn}() on module {ast.unparse(obj)}")
        elif on_module or not literal:
            self.add("no_introspection", node, f"{fn}() on {ast.unparse(obj)} with "
                     f"{'a computed name' if not literal else 'a module'}")

    def _precision_call(self, name: str, node: ast.Call) -> None:
        if self.dtype != "float32":
            return
        kw = {k.arg: k.value for k in node.keywords if k.arg}
        if not self.allow_tf32:
            if name.endswith("set_float32_matmul_precision"):
                arg = node.args[0] if node.args else None
                if not (isinstance(arg, ast.Constant) and arg.value == "highest"):
                    self.add("no_precision_downgrade", node, "lowers float32 matmul precision")
            if isinstance(kw.get("allow_tf32"), ast.Constant) and kw["allow_tf32"].value is True:
                self.add("no_precision_downgrade", node, "allow_tf32=True on a float32 task")
            ip = kw.get("input_precision")
            # plain TF32 only: 'tf32x3' (three TF32 products) is allowed written here as through a constexpr
            # (queue round rt75: the literal was rejected while the shipped GEMMs pass it by a constexpr)
            if isinstance(ip, ast.Constant) and isinstance(ip.value, str) and _PLAIN_TF32.fullmatch(ip.value.strip()):
                self.add("no_precision_downgrade", node, f"input_precision={ip.value!r} on a float32 task")
            # None is the default too (rt47: input_precision=None passed the check and ran TF32 on GPUs)
            given = {k for k, v in kw.items() if not (isinstance(v, ast.Constant) and v.value is None)}
            if name == "triton.language.dot" and "input_precision" not in given and "allow_tf32" not in given:
                self.add("no_precision_downgrade", node,
                         "tl.dot defaults to TF32 on GPUs; pass input_precision='ieee' or 'tf32x3' on a float32 "
                         "task")
        if not self.allow_reduced and isinstance(node.func, ast.Attribute) and \
                node.func.attr in ("half", "bfloat16") and not node.args:
            self.add("no_precision_downgrade", node, f".{node.func.attr}() on a float32 task")

    def _compute_call(self, name: str, func: ast.AST, node: ast.Call) -> None:
        if name.startswith("triton") or name.startswith("math.") or name.startswith("typing"):
            return
        if name.startswith("torch."):
            short = name[len("torch."):]
            if short.startswith("nn.functional") or not (
                short in TORCH_ALLOW or short.split(".")[0] in ("float16", "float32", "bfloat16")
                or short.startswith(("nn.init", "cuda.", "nn.")) and not short.startswith("nn.functional")
            ):
                self.add("no_torch_compute", node, f"calls {name} in host code")
            return
        if isinstance(func, ast.Attribute) and not name and func.attr in TENSOR_COMPUTE:
            self.add("no_torch_compute", node, f"calls tensor method .{func.attr}() in host code")


def _torch_compute_function(name: str) -> bool:
    """Whether dotted ``name`` (``torch.addcmul``) is a torch function or
    builtin that computes: not a module, class, dtype or other value, and not
    one of :data:`TORCH_ALLOW` (allocation, views, metadata)."""
    import inspect

    import torch

    short = name[len("torch."):]
    if short in TORCH_ALLOW or short.startswith(("cuda.", "nn.init", "nn.Module", "nn.Parameter")):
        return False
    obj: object = torch
    for part in short.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            return False
    return not inspect.isclass(obj) and (inspect.isfunction(obj) or inspect.isbuiltin(obj)
                                         or type(obj).__name__ in ("builtin_function_or_method", "OpOverloadPacket"))


def _defined_names(tree: ast.Module) -> set[str]:
    return {n.name for n in ast.walk(tree) if isinstance(n, (ast.ClassDef, ast.FunctionDef))}


def static_findings(source: str, *, dsl: bool, dtype: str = "float32", allow_tf32: bool = False,
                    allow_reduced_precision: bool = False, reference: str = "",
                    provided: dict[str, str] | None = None) -> list[Finding]:
    """Run every static check on ``source``.

    Parameters
    ----------
    source:
        The candidate module's text.
    dsl:
        True when torch compute is not the candidate's DSL (every backend but
        ``pytorch``); enables ``no_torch_compute``.
    dtype, allow_tf32, allow_reduced_precision:
        From the task metadata; precision checks fire only on float32 tasks
        that forbid the shortcut.
    reference:
        The task reference's text: the libraries it imports are the task's
        dependencies, not foreign to a candidate (module docstring).
    provided:
        Names the text runs with already bound (name -> dotted module path,
        :attr:`kstrata.backends.base.Backend.level_globals`), read as if
        imported; an import or assignment in the text takes precedence.

    Raises
    ------
    SyntaxError
        If ``source`` does not parse (the caller reports ``compile_error``),
        or nests deeper than the checks can walk even with
        :data:`CHECK_RECURSION_LIMIT` Python frames.
    """
    tree = parse_module(source)
    # the walks recurse a few Python frames per level of the tree: a legal sum of 1000 terms (a left-deep
    # BinOp chain; the parser takes ~3000) ended the judge in a RecursionError traceback at the default
    # 1000 (red-team round of 2026-12-04). Python-to-Python calls use no C stack on 3.11, so the higher
    # limit costs nothing; a tree deeper still is the candidate's syntax error
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, CHECK_RECURSION_LIMIT))
    try:
        return _walk(tree, dsl, dtype, allow_tf32, allow_reduced_precision, reference, provided)
    except RecursionError:
        raise SyntaxError("nested too deeply for kstrata's static checks", ("<candidate>", None, None, None)) from None
    finally:
        sys.setrecursionlimit(limit)


#: Python frames :func:`static_findings` may use: enough to walk the deepest
#: tree the parser builds (a sum of about 3000 terms) three frames a level.
CHECK_RECURSION_LIMIT = 30000


def _walk(tree: ast.Module, dsl: bool, dtype: str, allow_tf32: bool, allow_reduced_precision: bool,
          reference: str, provided: dict[str, str] | None) -> list[Finding]:
    v = _Visitor(dsl, dtype, allow_tf32, allow_reduced_precision)
    v.defined = _defined_names(tree)
    v.own_private = _defined_private(tree)
    v.docstrings = _docstrings(tree)
    v.aliases.update({**(provided or {}), **_collect_aliases(tree)})
    v.task_modules = imported_roots(reference) - {m for mods in MODULE_CHECKS.values() for m in mods}
    v.visit(tree)
    return v.findings


def iter_static_checks(findings: list[Finding]) -> Iterator[str]:
    """Names of the checks that fired, each once, in order of first finding."""
    seen: set[str] = set()
    for f in findings:
        if f.check not in seen:
            seen.add(f.check)
            yield f.check


#: C/CUDA/OpenCL/LLVM identifiers a kernel has no business calling: processes,
#: files, sockets, dynamic loading, threads (whole words; LLVM's ``@name`` too).
NATIVE_FORBIDDEN = {
    "no_subprocess": ("system", "popen", "fork", "vfork", "execl", "execlp", "execle", "execv",
                      "execvp", "execve", "posix_spawn"),
    "no_file_io": ("fopen", "open", "openat", "creat", "unlink", "remove", "rename", "mmap"),
    "no_network": ("socket", "connect", "bind", "listen", "accept", "send", "sendto", "recv"),
    "no_introspection": ("dlopen", "dlsym", "getenv", "setenv"),
    "no_threads": ("pthread_create", "clone"),
}
#: vendor libraries that would replace the kernel instead of implementing it
VENDOR_LIBRARIES = ("cblas", "cublas", "cublaslt", "cudnn", "mkl", "dnnl", "onednn", "rocblas",
                    "miopen", "tvm.contrib", "call_dps_packed", "call_packed", "extern")


def native_findings(source: str) -> list[Finding]:
    """Integrity findings for native source text (C, CUDA C, OpenCL C, LLVM IR).

    A word-level scan (not a parser): calls of process, file, network,
    dynamic-loading or thread functions, and vendor-library calls. Comments
    are not stripped, so an honest kernel should not name these functions.
    """
    import re

    out: list[Finding] = []
    for check, names in NATIVE_FORBIDDEN.items():
        for name in names:
            m = re.search(rf"(?<![\w.$])@?{name}\s*\(", source)
            if m:
                line = source.count("\n", 0, m.start()) + 1
                out.append(Finding(check, f"line {line}: calls {name}() in native code",
                                   {"line": line, "name": name}))
    out += vendor_findings(source)
    return out


def vendor_findings(source: str) -> list[Finding]:
    """``no_foreign_libraries`` findings for vendor-library calls (BLAS, cuDNN,
    packed functions) in IR or native text: the kernel must be implemented,
    not delegated."""
    import re

    out = []
    for name in VENDOR_LIBRARIES:
        m = re.search(rf"(?<![\w]){re.escape(name)}(?![\w])", source, flags=re.IGNORECASE)
        if m:
            line = source.count("\n", 0, m.start()) + 1
            out.append(Finding("no_foreign_libraries", f"line {line}: uses {name} (a vendor library "
                               "or external call instead of the kernel)", {"line": line, "name": name}))
    return out
