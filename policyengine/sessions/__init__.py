"""Where sessions live: in memory, in SQLite, in Redis (docs/sessions.md)."""

from policyengine.sessions.stores import (
    DEFAULT_TTL,
    MemoryStore,
    RedisStore,
    SqliteStore,
    open_store,
)

__all__ = ["DEFAULT_TTL", "MemoryStore", "RedisStore", "SqliteStore", "open_store"]
