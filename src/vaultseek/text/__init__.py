"""Text into terms: the tokenising and key normalisation both the indexer and the search use."""
