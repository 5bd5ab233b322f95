"""Serving: the budgeted channel-awareness feed and the peer digest. Never calls an LLM."""
