"""Invincat: AI coding assistant backend with governed memory and controlled execution."""

__version__ = "0.1.0"
