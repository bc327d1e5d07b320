"""The benchmark harness: portcheck against TorchFix, Fixit and ruff on pinned corpora (see README.md)."""
