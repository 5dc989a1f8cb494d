"""The PostgreSQL engine (pgvector, tsvector): several server processes on one database."""
