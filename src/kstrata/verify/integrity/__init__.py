"""Integrity (reward-hack) checks: a registry of named static and dynamic
checks with ``strict`` and ``warn`` presets."""

from kstrata.verify.integrity.registry import CHECKS, PRESETS, Check, Finding, applies, preset
from kstrata.verify.integrity.static import static_findings

__all__ = ["CHECKS", "PRESETS", "Check", "Finding", "applies", "preset", "static_findings"]
