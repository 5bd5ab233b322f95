"""The worker: derives recall blocks from dirty sources, deterministically or with a model."""
