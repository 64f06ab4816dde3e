"""LSP features: one small function per method, named after it (registered in server.py)."""
