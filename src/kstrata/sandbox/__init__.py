"""The trust boundary's candidate side: an OS sandbox (bubblewrap) and a
candidate process that builds and runs candidate code and returns raw output
bytes to the judge. See ``DESIGN.md`` (trust boundary)."""

from kstrata.sandbox.client import (CandidateDied, CandidateProcess, IsolatedCallError, call_isolated,
                                    default_memory_mb, sandbox_env)
from kstrata.sandbox.policy import SandboxStatus, SandboxUnavailable, status, unsafe_requested

__all__ = ["CandidateDied", "CandidateProcess", "IsolatedCallError", "SandboxStatus", "SandboxUnavailable",
           "call_isolated", "default_memory_mb", "sandbox_env", "status", "unsafe_requested"]
