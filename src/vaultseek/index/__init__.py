"""Keeping the index in step with the vault: file discovery, scrubbing, incremental sync,
the deep tier's job."""
