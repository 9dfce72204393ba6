"""The PostgreSQL + pgvector backend: connections and errors, schema, and the store."""
