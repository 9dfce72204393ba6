"""The vault map: every note placed in two dimensions by meaning, in clusters named by their
words, with the bridges between them, the thin regions and islands, and the links that were
never made (``vaultseek map``; docs/map.md).

``features`` makes one vector per note and finds each note's nearest notes; ``layout`` places
them; ``clusters`` groups and names them; ``regions`` reads density, bridges, roles and
missing links; ``making`` builds and updates a map; ``kept`` keeps it in the index; ``views``
turns it into the records every surface shows.
"""
