"""Retrieval: getting back to exact sources (peer reads now; native tools later)."""
