"""The store: the schema, connections and every SQL query, in named functions.

One interface, two backends: SQLite (a path) and PostgreSQL (a ``postgresql://`` URL).
"""

from channel_memory.store.connection import Connection
from channel_memory.store.database import (
    DatabaseUnavailable,
    DatabaseUnreachable,
    DeriveHook,
    SchemaTooNew,
    StorageError,
    StorageFull,
    StorageLocked,
    StorageReadOnly,
    StorageUnavailable,
    Store,
    WriterBusy,
)

__all__ = [
    "Connection",
    "DatabaseUnavailable",
    "DatabaseUnreachable",
    "DeriveHook",
    "SchemaTooNew",
    "StorageError",
    "StorageFull",
    "StorageLocked",
    "StorageReadOnly",
    "StorageUnavailable",
    "Store",
    "WriterBusy",
]
