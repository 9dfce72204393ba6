"""``python -m vaultseek.cli``: the command line, as the ``vaultseek`` script runs it."""

from .main import main

raise SystemExit(main())
