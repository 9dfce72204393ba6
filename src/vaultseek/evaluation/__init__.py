"""Retrieval quality: judged-set evaluation and its metrics."""
