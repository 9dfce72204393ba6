"""Hybrid search: BM25 and vector lists, fusion, filters, ranking signals, query handling."""
