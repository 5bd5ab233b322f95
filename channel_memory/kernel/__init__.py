"""The shared bottom layer: the data model, times, settings, wire models, the caller's
principal, trust and roles, and the error answer every stage raises.

Nothing here imports another part of the package: the store, the stages and the
faces all build on it.
"""
