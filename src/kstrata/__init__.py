"""kstrata: LLM-driven kernel optimization with a verifier and timer you can trust."""

__version__ = "0.1.0"
