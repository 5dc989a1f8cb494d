"""The store's statements, written once for both engines over a small `Dialect`: SQLite and
PostgreSQL each keep only what truly differs (connection, schema and migrations, vectors,
full-text) and put these parts together with their own."""
