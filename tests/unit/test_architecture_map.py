"""docs/architecture.md's module map stays in step with the code: every module of the
package's first levels is named in it, and every module it names exists."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "invincat_server"
# The folders whose every module and subpackage the map names one by one (deeper ones,
# such as runtime/memory/, are described as a whole there and mapped in their own docs).
MAPPED = ("", "runtime", "terminal", "warm", "acp", "lsp")


def _map_words() -> set[str]:
    text = (REPO / "docs" / "architecture.md").read_text(encoding="utf-8")
    found = re.search(r"```\n(.*?)```", text, re.S)
    assert found, "docs/architecture.md has no module map (a fenced block)"
    return set(re.findall(r"[\w.]+(?:\.py|/)", found.group(1)))


def _named(words: set[str], name: str) -> bool:
    return name in words or any(word.endswith("/" + name) for word in words)


def test_every_module_is_on_the_map() -> None:
    words = _map_words()
    missing = []
    for folder in MAPPED:
        for child in sorted((PACKAGE / folder).iterdir()):
            if child.name.startswith(("_", ".")):
                continue
            if child.is_dir() and any(child.glob("*.py")):
                name = child.name + "/"
            elif child.suffix == ".py":
                name = child.name
            else:
                continue
            if not _named(words, name):
                missing.append(str(child.relative_to(REPO)))
    assert not missing, f"add these to docs/architecture.md's map: {missing}"


def test_the_map_names_only_modules_that_exist() -> None:
    files = {path.name for path in PACKAGE.rglob("*.py")}
    files |= {path.name for path in (REPO / "tests").rglob("*.py")}
    stale = sorted(w for w in _map_words() if w.endswith(".py") and w.split("/")[-1] not in files)
    assert not stale, f"docs/architecture.md names modules that do not exist: {stale}"
