"""Shared pytest configuration."""

pytest_plugins = ["invincat_server.testing.fixtures", "tests.sessions"]
