"""The ``kstrata`` command's entry point (also ``python -m kstrata``, for a checkout
on ``PYTHONPATH`` that pip did not install).

:func:`main` turns a third-party package missing from the running interpreter
(torch, typer, ... when kstrata's requirements were not installed into it) into one
``error:`` line that names the package and the interpreter and says how to install
it, instead of an import traceback. A missing ``kstrata.*`` module is a bug and is
not hidden.
"""

from __future__ import annotations

import sys

#: import names whose pip distribution is named otherwise
DISTRIBUTIONS = {"tvm": "apache-tvm", "tvm_ffi": "apache-tvm-ffi", "yaml": "pyyaml",
                 "sklearn": "scikit-learn"}


def missing_dependency_message(e: ModuleNotFoundError) -> str | None:
    """The one-line message for ``e``, or ``None`` when ``e`` is not a third-party
    package missing from this interpreter (a ``kstrata`` module, or no name)."""
    top = (e.name or "").split(".")[0]
    if not top or top == "kstrata":
        return None
    dist = DISTRIBUTIONS.get(top, top)
    pip = f"{sys.executable} -m pip install"
    one = f"`{pip} torch==2.13.0` (on a GPU machine, its CUDA build)" if top == "torch" else f"`{pip} {dist}`"
    return (f"error: this Python ({sys.executable}) has no module {top!r}, which kstrata needs. Install "
            f"kstrata's requirements into it (from a clone: `pip install torch==2.13.0 -e .`, README, Quick "
            f"start), or this package alone: {one}; without network, from a folder of wheels made "
            f"elsewhere: `{pip} --no-index --find-links DIR {dist}`")


def main() -> None:
    """Run the ``kstrata`` command line; exit with status 2 and one message when a
    required third-party package is missing (see :func:`missing_dependency_message`)."""
    try:
        from kstrata.cli.main import app

        app(prog_name="kstrata")
    except ModuleNotFoundError as e:
        message = missing_dependency_message(e)
        if message is None:
            raise
        print(message, file=sys.stderr)
        raise SystemExit(2) from None


if __name__ == "__main__":
    main()
