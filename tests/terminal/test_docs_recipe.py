"""The docs a newcomer reads hold: docs/fake-openai.md's "Try Invincat against the fake"
recipe runs as written (its shell block, in a real shell) and chats with the fake; README
names every page of docs/ and the Python it needs; no doc links a page that is missing."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from tests.deadlines import DEADLINE

ROOT = Path(__file__).resolve().parents[2]


def _recipe() -> str:
    text = (ROOT / "docs" / "fake-openai.md").read_text(encoding="utf-8")
    section = text.split("## Try Invincat against the fake", 1)[1]
    return section.split("```sh\n", 1)[1].split("\n```", 1)[0]


def test_the_fake_openai_recipe_runs_as_written_and_chats() -> None:
    # The user's environment, minus Invincat's and OpenAI's settings the recipe sets.
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("INVINCAT_", "OPENAI_")) and k not in ("HTTP_PROXY", "HTTPS_PROXY")
    }
    env["BIN"] = str(Path(sys.executable).parent)  # the recipe's default: ./.venv/bin
    done = subprocess.run(
        ["sh", "-e", "-c", _recipe()],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=DEADLINE * 2,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "Hello from the fake model!" in done.stdout
    assert "Wrote hello.txt." in done.stdout
    assert done.stdout.rstrip().endswith("hi"), done.stdout  # `cat hello.txt`
    assert "no step" not in done.stderr.lower(), done.stderr  # every request was scripted


def test_readme_lists_every_doc_and_the_python_it_needs() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for page in sorted((ROOT / "docs").glob("*.md")):
        assert f"(docs/{page.name})" in readme, page.name
    assert "Python ≥ 3.11" in readme or "Python >= 3.11" in readme
    # Exactly its two set-up commands: the install-and-run line and ./scripts/test.
    setup = readme.split("## Set up", 1)[1].split("\n## ", 1)[0]
    assert len(re.findall(r"```sh\n", setup)) == 2


def test_no_doc_links_a_page_that_is_not_there() -> None:
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        text = page.read_text(encoding="utf-8")
        for target in re.findall(r"\]\(([^)#\s]+\.md)(?:#[^)]*)?\)", text):
            if "://" in target:
                continue
            assert (page.parent / target).resolve().exists(), f"{page.name} links {target}"
        # A page named in backticks as a doc must be there too (memory.md cited a spec
        # that was only in another folder).
        for named in re.findall(r"`([a-z-]+\.md)`", text):
            assert (ROOT / "docs" / named).exists() or (page.parent / named).exists(), (
                f"{page.name} names {named}"
            )
