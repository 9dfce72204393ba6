"""``python -m vaultseek``: the console script (how a detached deep-tier worker is started)."""

from .cli.launcher import main

raise SystemExit(main())
