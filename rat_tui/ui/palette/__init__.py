"""The command palette Providers."""
