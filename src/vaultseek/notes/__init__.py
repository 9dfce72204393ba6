"""Markdown notes: frontmatter, links, headings and heading-aware chunks."""
