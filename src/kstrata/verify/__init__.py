"""The verifier: correctness protocol, integrity checks, located feedback (issue #3).

Entry point: :func:`verify_candidate` -> :class:`Evaluation`.
"""

from kstrata.verify.api import VerifierError, verify_candidate
from kstrata.verify.result import Evaluation

__all__ = ["Evaluation", "VerifierError", "verify_candidate"]
