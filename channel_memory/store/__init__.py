"""The store: SQLite schema, connections and every SQL query, in named functions."""

from channel_memory.store.database import (
    DeriveHook,
    SchemaTooNew,
    StorageError,
    StorageFull,
    StorageLocked,
    StorageReadOnly,
    Store,
    WriterBusy,
)

__all__ = [
    "DeriveHook",
    "SchemaTooNew",
    "StorageError",
    "StorageFull",
    "StorageLocked",
    "StorageReadOnly",
    "Store",
    "WriterBusy",
]
