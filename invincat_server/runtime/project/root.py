"""project_root(): which project a folder belongs to, without opening it.

Its own module so that what only needs the root (git's merge driver, started for every
merge) does not import the registry and with it Project, asyncio and the data readers.
"""

from __future__ import annotations

import os
from pathlib import Path


def project_root(folder: Path) -> Path:
    """The project root of `folder` (config.find_project_root), symlinks resolved: two
    spellings of one folder are one Project."""
    from invincat_server.runtime.config import find_project_root

    return Path(os.path.realpath(find_project_root(folder)))
