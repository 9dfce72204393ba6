"""The one object every surface uses: open an index, sync it, search it, read from it.

    with open_index("~/vault", create=True) as index:
        index.sync()
        for note in index.search("rotate oauth tokens").notes:
            print(note.path, note.title, [section.label for section in note.sections])

The CLI, the MCP server, hooks, the daemon and the web app are thin adapters over
:class:`Index`. Its parts:

    index.py      Index and open_index: open · sync · search · read · status · close
    backend.py    where the index lives: the store opened on SQLite or PostgreSQL, database
                  errors named, the one-writer lock, size and description
    paths.py      the paths it is given (shown or real, on disk or vault-relative) and gives back
    searching.py  a request set up against the settings: the pipeline's parameters, the reranker
                  and query expansion
    graph.py      the link graph, links, related notes, the vault map and missing links
    deep.py       the deep tier's job and status
    status.py     the ``status`` report
"""

from __future__ import annotations

from .index import Index, open_index

__all__ = ["Index", "open_index"]
