"""The Obsidian plugin, built (``obsidian-plugin/``, ``npm run build``) and shipped in
``plugin/``, and its installation into a vault (:mod:`.install`)."""
