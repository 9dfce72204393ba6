"""Intake: score every incoming item on relevance, actionability, depth and authority, and
route it — into one of the vault's domain folders, the review queue, or the discard folder.

    items.py     an incoming file or snippet → :class:`Item` (documents via the registry)
    scoring.py   actionability, depth, authority: counted signals, saturating curves, reasons
    routing.py   domains as vectors from the index → the domain, and relevance; domain names checked
    filing.py    the crash-safe move (journal, atomic writes, recovery, one intake at a time),
                 destinations checked to stay in the vault, the assessments kept beside notes
    pipeline.py  :class:`Intake`: assess · take · take_inbox · queue · accept · discard
"""

from __future__ import annotations

from .items import Item, item_from_text, read_item
from .pipeline import Assessment, Intake, Outcome, QueuedItem
from .scoring import Dimension

__all__ = [
    "Assessment",
    "Dimension",
    "Intake",
    "Item",
    "Outcome",
    "QueuedItem",
    "item_from_text",
    "read_item",
]
