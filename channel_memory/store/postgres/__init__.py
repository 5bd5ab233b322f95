"""The PostgreSQL backend: the schema, the statement rewrite and the store (ADR 0030)."""
