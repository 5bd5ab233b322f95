"""Ingest: native and peer events validated, turned into write commands, stored as versions."""
