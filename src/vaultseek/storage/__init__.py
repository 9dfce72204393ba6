"""The index file: the SQLite connection, its schema and migrations, all SQL, the vector matrix."""
