"""Retrieval: the native tools and the peer reads that get back to exact sources."""
