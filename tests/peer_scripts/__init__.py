"""Scripts the harness tests run in a peer's own interpreter (or from a project directory)."""
