"""The SQLite engine: one file (WAL), numbered migrations (`schema`), sqlite-vec for vectors
and FTS5 for keywords; one module per concern, put together as `engine.SQLiteStore`."""
