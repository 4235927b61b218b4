"""What a candidate whose process died of a signal most likely did (feedback kind ``crash``).

The verdict of such a candidate is ``runtime_error`` (check ``crash``) with
the message ``the candidate process was killed by SIGSEGV`` and, on a public
test, the tail of its stderr (``output_tail``: Python's faulthandler prints
the stack there). The signal alone told a newcomer nothing (nc11: an
out-of-bounds Triton launch reported only SIGABRT), so this item says what
the signal usually means for a kernel, where in the candidate's file it
happened when its stderr shows it, and the end of that stderr.

A memory fault (``SIGSEGV``, ``SIGBUS``) is an access outside the process's
mapped memory; ``SIGABRT`` is a process ending itself, which glibc does when
a write past a buffer has corrupted its heap (``free(): invalid pointer``,
``malloc(): corrupted top size``) and the CUDA runtime after an illegal
address. Under Triton's CPU interpreter (``TRITON_INTERPRET=1``) a
``tl.load``/``tl.store`` reads and writes host memory at the computed
addresses, so an out-of-bounds access faults or corrupts the heap instead
of raising.
"""

from __future__ import annotations

import re
from typing import Any

#: signal -> (what it is, what a kernel most likely did)
CAUSES = {
    "SIGSEGV": ("a memory fault", "read or wrote through an out-of-bounds pointer (an illegal memory access)"),
    "SIGBUS": ("a memory fault", ("read or wrote through an out-of-bounds or misaligned pointer (an illegal "
                                  "memory access)")),
    "SIGABRT": ("the process aborting itself", ("wrote through an out-of-bounds pointer and corrupted the "
                                                "heap, which the allocator or the runtime found and aborted on "
                                                "(an illegal memory access), or failed an assertion")),
    "SIGFPE": ("an arithmetic fault", "divided an integer by zero (an index or size computed as 0)"),
    "SIGILL": ("an illegal instruction", ("ran code built for another CPU, or a compiler's trap for undefined "
                                          "behaviour (often an out-of-bounds access it could prove)")),
}
#: where an out-of-bounds pointer usually comes from in a kernel
POINTER_CHECKS = ("check the offsets and masks of every load and store: a mask that lets lanes past the end "
                  "through (`<=` for `<`), a row offset or stride that is off, a grid larger than the data, "
                  "an int32 offset that overflows at a large shape")
#: stderr lines that say what the runtime saw
_RUNTIME = re.compile(r"^.*(?:free\(\)|malloc\(\)|double free|corrupted|illegal memory access|"
                      r"misaligned address|Assertion|out of bounds|stack smashing).*$", re.MULTILINE | re.IGNORECASE)
#: a frame of the candidate's file in a faulthandler or traceback stack (written as cand_*.py by the harness)
_FRAME = re.compile(r'File "[^"]*?(cand_\w+\.py)",\s+line\s+(\d+)(?:,)?\s+in\s+(\S+)')
#: most characters of stderr the item quotes
TAIL_CHARS = 800


def _tail(text: str) -> str:
    """The end of a stderr tail without what the candidate did not write:
    faulthandler's list of extension modules and the stack frames of the
    harness, Python and libraries (the candidate file's frames stay)."""
    text = re.split(r"\n\s*Extension modules:", text)[0]
    lines = [ln for ln in text.splitlines() if ln.strip() and ('", line ' not in ln or _FRAME.search(ln))]
    text = "\n".join(lines)
    return text if len(text) <= TAIL_CHARS else "..." + text[-TAIL_CHARS:]


def crash_item(evidence: dict[str, Any], backend: str) -> dict[str, Any] | None:
    """The ``crash`` feedback item for a candidate killed by a signal, from its
    verdict's evidence (``message`` naming the signal, ``output_tail`` when
    captured); None when the message names no signal this module explains.

    Returns
    -------
    dict
        ``{"kind": "crash", "level": "source", "text", "data": {"signal",
        "frames", "runtime"}}`` (:func:`kstrata.verify.feedback.item`).
    """
    from kstrata.verify.feedback import item

    found = re.search(r"killed by (SIG[A-Z]+)", str(evidence.get("message", "")))
    if not found or found.group(1) not in CAUSES:
        return None
    sig = found.group(1)
    what, did = CAUSES[sig]
    text = f"the candidate's process died of {sig} ({what}) during a call: most likely its kernel {did}"
    if sig in ("SIGSEGV", "SIGBUS", "SIGABRT"):
        text += f"; {POINTER_CHECKS}"
        if backend.endswith("-interp"):
            text += (" (Triton's CPU interpreter loads and stores host memory at the computed addresses, so an "
                     "out-of-bounds access kills the process instead of raising)")
    tail = str(evidence.get("output_tail") or "")
    frames = [f"line {ln} in {fn}" for _, ln, fn in _FRAME.findall(tail)]
    runtime = [m.strip() for m in _RUNTIME.findall(tail)][:2]
    if frames:
        text += f"; the candidate file's frames on its stack, innermost first: {', '.join(frames[:4])}"
    if runtime:
        text += f"; its stderr says: {' | '.join(r[:200] for r in runtime)}"
    if _tail(tail):
        text += f"; the end of its stderr (other code's stack frames left out):\n{_tail(tail)}"
    else:
        text += "; no stderr of it was kept (none is shown for a hidden test)"
    return item("crash", "source", text, signal=sig, frames=frames[:8], runtime=runtime)
