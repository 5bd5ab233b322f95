"""Serving: the peer digest now; the budgeted channel-awareness feed later. Never calls an LLM."""
