"""The demo: a synthetic busy desk driven through a real server (``channel-memory demo``)."""
