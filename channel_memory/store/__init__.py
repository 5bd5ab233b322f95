"""The store: SQLite schema, connections and every SQL query, in named functions."""

from channel_memory.store.database import SchemaTooNew, Store, WriterBusy

__all__ = ["SchemaTooNew", "Store", "WriterBusy"]
