"""The command line: argument parsing, commands, terminal output, the launcher."""
