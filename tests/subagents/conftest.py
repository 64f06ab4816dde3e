"""In-process sessions: `make_session` comes from tests/sessions.py (registered in
tests/conftest.py)."""
