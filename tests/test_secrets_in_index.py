"""No planted secret may survive anywhere in the index file's bytes."""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path

from fake_secrets import B64, DASHES, fake_secrets
from vaultseek import open_index
from vaultseek.index.credentials import PATTERN_NAMES


def test_planted_secrets_never_reach_the_database(vault: Path, write: Callable[..., Path], tmp_path: Path) -> None:
    samples = fake_secrets()
    assert {s.pattern for s in samples} == set(PATTERN_NAMES)  # every pattern is planted
    # Secrets in the body, in frontmatter, in a heading, inside a code block, in a title.
    lines = "\n\n".join(f"Config line {i}: {s.line}" for i, s in enumerate(samples))
    write("ops/deploy.md", f"""---
title: Deploy notes
api_token: {samples[0].secret}
---
# Deploy

## Keys for {samples[1].secret}

{lines}

```bash
export TOKEN={samples[2].secret}
{samples[3].line}
```
""")
    write("ops/plain.md", "# Plain\n\nNothing secret lives in this note, only prose about deploys.")
    db = tmp_path / "index.db"
    with open_index(vault, db=db, create=True) as index:
        report = index.sync()
        assert sum(report.redactions.values()) >= len(samples)
        assert set(report.redactions) >= {s.pattern for s in samples}
        index.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        hits = index.search("REDACTED", mode="bm25").results
        assert hits and hits[0].path == "ops/deploy.md"
    raw = b"".join(p.read_bytes() for p in tmp_path.glob("index.db*"))
    survivors = [s.pattern for s in samples if s.secret.encode() in raw]
    assert survivors == []
    assert b"[REDACTED:" in raw


def test_private_key_split_over_two_pdf_pages_never_reaches_the_database(vault: Path, tmp_path: Path) -> None:
    from tests.support import docgen

    rng = random.Random(11)
    body = ["".join(rng.choice(B64) for _ in range(64)) for _ in range(11)]
    body.append("".join(rng.choice(B64) for _ in range(22)) + "==")
    first = f"Server notes\n{DASHES}BEGIN RSA PRIVATE KEY{DASHES}\n" + "\n".join(body[:6])
    second = "\n".join(body[6:]) + f"\n{DASHES}END RSA PRIVATE KEY{DASHES}\nInstalled on the build host."
    docgen.text_pdf(vault / "ops" / "server.pdf", [first, second])
    db = tmp_path / "index.db"
    with open_index(vault, db=db, create=True) as index:
        report = index.sync()
        assert report.redactions.get("private-key-block") == 2  # one per page
        index.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    raw = b"".join(p.read_bytes() for p in tmp_path.glob("index.db*"))
    assert [line for line in body if line.encode() in raw] == []
    assert b"Installed on the build host." in raw and b"Server notes" in raw
