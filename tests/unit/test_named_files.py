"""Which words of a prompt name a workspace file to attach (runtime/mentions.py)."""

from __future__ import annotations

from pathlib import Path

from invincat_server.runtime.mentions import MAX_NAMED_FILES, find_named_files
from invincat_server.runtime.policy.workspace import Workspace


def _workspace(tmp_path: Path, *names: str) -> Workspace:
    root = tmp_path / "project"
    for name in names:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("x\n")
    root.mkdir(exist_ok=True)
    return Workspace(root)


def _named(prompt: str, workspace: Workspace) -> list[str]:
    return [m.text for m in find_named_files(prompt, workspace, set())]


def test_names_in_prose_quotes_and_brackets_are_found_once(tmp_path: Path) -> None:
    ws = _workspace(tmp_path, "calc.py", "src/app.py", "notes.md")
    prompt = 'Fix calc.py, then "src/app.py" and (notes.md)! Again: `calc.py`.'
    assert _named(prompt, ws) == ["calc.py", "src/app.py", "notes.md"]


def test_mentions_code_urls_missing_files_and_dotted_names_are_not_names(tmp_path: Path) -> None:
    ws = _workspace(tmp_path, "calc.py", "app.route")
    prompt = (
        "@calc.py https://x.org/calc.py app.route functools.wraps hello.txt src/\n"
        "```\nopen('calc.py')\n```"
    )
    assert _named(prompt, ws) == []


def test_taken_files_are_not_attached_twice(tmp_path: Path) -> None:
    ws = _workspace(tmp_path, "calc.py")
    taken = {(ws.root / "calc.py").resolve()}
    assert find_named_files("fix calc.py", ws, taken) == []


def test_bad_words_cost_only_themselves(tmp_path: Path) -> None:
    ws = _workspace(tmp_path, "calc.py")
    prompt = "a\x00b.py " + "y" * 200_000 + ".py ../../etc/passwd.txt /etc/hosts.txt calc.py"
    assert _named(prompt, ws) == ["calc.py"]


def test_at_most_a_few_files_are_attached(tmp_path: Path) -> None:
    names = [f"m{n}.py" for n in range(MAX_NAMED_FILES + 3)]
    ws = _workspace(tmp_path, *names)
    assert _named(" ".join(names), ws) == names[:MAX_NAMED_FILES]
