"""Agent surfaces: Claude Code hooks, the resident daemon, the watcher, the MCP server."""
