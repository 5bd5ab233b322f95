"""channel-memory: a memory sidecar for LLM agents that share chat channels."""

__version__ = "0.1.0"
