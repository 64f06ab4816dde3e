"""Skills: folders with a `SKILL.md` (YAML front matter `name`, `description`).

Discovered when the session opens, in precedence order (the first folder that defines a
name wins; later ones with the same name are shadowed):

1. `$INVINCAT_HOME/skills` — the user's own skills. They win so that a repository you
   just cloned cannot silently replace a skill you installed and trust.
2. `<project>/.invincat/skills`
3. `<project>/.agents/skills`

Only names and descriptions go into the system prompt; the body is sent to the model when
it calls `load_skill(name)`, which also lists the skill folder's files and can read them
(`load_skill(name, file=...)`), so skills outside the workspace work although `read_file`
is confined to it. A `SKILL.md` whose front matter is missing or malformed is skipped
with a notice; discovery never raises.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from langchain_core.tools import BaseTool, ToolException
from pydantic import BaseModel, Field

from invincat_server.runtime.tools.files import make_tool

if TYPE_CHECKING:
    from invincat_server.runtime.extensions import ExtensionContext, Extensions

SKILL_FILE = "SKILL.md"
NAME_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
MAX_DESCRIPTION_CHARS = 1024
MAX_LISTED_FILES = 200
MAX_FILE_CHARS = 100_000
MAX_SKILLS = 200
"""More than this many skills would crowd the system prompt; the rest are skipped."""


class SkillFormatError(ValueError):
    """A SKILL.md that cannot be used; the message says what to fix."""


@dataclass(frozen=True)
class Skill:
    name: str
    description: str
    path: Path
    """The SKILL.md file."""
    source: str
    """Where it was found: `user`, `project (.invincat/skills)`, `project (.agents/skills)`."""
    shadowed: tuple[Path, ...] = ()
    """SKILL.md files with the same name that this one hides (lower precedence)."""

    @property
    def folder(self) -> Path:
        return self.path.parent

    def to_json_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "description": self.description,
            "path": str(self.path),
            "source": self.source,
            "shadowed": [str(p) for p in self.shadowed],
        }


@dataclass
class SkillScan:
    """The skills found, and one sentence per SKILL.md that was skipped."""

    skills: list[Skill] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    def get(self, name: str) -> Skill | None:
        return next((s for s in self.skills if s.name == name), None)


def skill_roots(home: Path, project_root: Path) -> list[tuple[str, Path]]:
    """The folders searched, highest precedence first."""
    return [
        ("user", home / "skills"),
        ("project (.invincat/skills)", project_root / ".invincat" / "skills"),
        ("project (.agents/skills)", project_root / ".agents" / "skills"),
    ]


def parse_skill_file(text: str) -> tuple[dict[str, Any], str]:
    """Split a SKILL.md into (front matter, body). Raises SkillFormatError."""
    import yaml

    text = text.removeprefix("\ufeff")
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].strip() != "---":
        raise SkillFormatError("it does not start with a `---` front matter block")
    end = next((i for i in range(1, len(lines)) if lines[i].strip() == "---"), None)
    if end is None:
        raise SkillFormatError("its front matter has no closing `---` line")
    try:
        meta = yaml.safe_load("".join(lines[1:end]))
    except yaml.YAMLError as exc:
        first = str(exc).splitlines()[0] if str(exc) else "invalid YAML"
        raise SkillFormatError(f"its front matter is not valid YAML ({first})") from exc
    if not isinstance(meta, dict):
        raise SkillFormatError("its front matter is not a mapping of `key: value` lines")
    name, description = meta.get("name"), meta.get("description")
    if not isinstance(name, str) or not NAME_PATTERN.match(name.strip()):
        raise SkillFormatError(
            "`name` must be 1-64 letters, digits, `.`, `_` or `-` (starting with a letter or "
            f"digit), got {name!r}"
        )
    if not isinstance(description, str) or not description.strip():
        raise SkillFormatError("`description` is missing or empty")
    if len(description) > MAX_DESCRIPTION_CHARS:
        raise SkillFormatError(f"`description` is longer than {MAX_DESCRIPTION_CHARS} characters")
    meta = {**meta, "name": name.strip(), "description": " ".join(description.split())}
    return meta, "".join(lines[end + 1 :]).lstrip("\n")


def discover_skills(home: Path, project_root: Path) -> SkillScan:
    """Every usable skill (precedence applied) and a notice for each skipped SKILL.md."""
    scan = SkillScan()
    found: dict[str, Skill] = {}
    for source, root in skill_roots(home, project_root):
        try:
            folders = sorted(p for p in root.iterdir() if p.is_dir())
        except OSError:
            continue  # a missing skills folder is the normal case
        for folder in folders:
            path = folder / SKILL_FILE
            if not path.is_file():
                continue
            try:
                meta, _ = parse_skill_file(path.read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError) as exc:
                scan.problems.append(f"Skill {path} skipped: it cannot be read ({exc}).")
                continue
            except SkillFormatError as exc:
                scan.problems.append(f"Skill {path} skipped: {exc}.")
                continue
            name = meta["name"]
            if name in found:
                winner = found[name]
                found[name] = Skill(
                    winner.name,
                    winner.description,
                    winner.path,
                    winner.source,
                    (*winner.shadowed, path),
                )
                continue
            if len(found) >= MAX_SKILLS:
                scan.problems.append(f"Skill {path} skipped: more than {MAX_SKILLS} skills.")
                continue
            found[name] = Skill(name, meta["description"], path, source)
    scan.skills = list(found.values())
    return scan


def _list_files(folder: Path) -> list[str]:
    files: list[str] = []
    for dirpath, dirnames, filenames in os.walk(folder):
        # Hidden folders (.git, caches) are noise for the model.
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for name in sorted(filenames):
            files.append(str((Path(dirpath) / name).relative_to(folder)))
            if len(files) >= MAX_LISTED_FILES:
                return files
    return files


def _read_skill_file(skill: Skill, file: str) -> str:
    folder = Path(os.path.realpath(skill.folder))
    target = Path(os.path.realpath(folder / file))
    # Resolved (symlinks followed), so a link inside the skill cannot lead elsewhere.
    if not target.is_relative_to(folder) or target == folder:
        raise ToolException(f"{file!r} is not a file inside the skill folder {skill.folder}.")
    if not target.is_file():
        raise ToolException(
            f"No file {file!r} in skill {skill.name}; call load_skill({skill.name!r}) to list "
            "its files."
        )
    data = target.read_bytes()
    if b"\0" in data[:8192]:
        raise ToolException(f"{file} is a binary file; it cannot be shown as text.")
    text = data.decode("utf-8", errors="replace")
    if len(text) > MAX_FILE_CHARS:
        text = text[:MAX_FILE_CHARS] + f"\n… [cut at {MAX_FILE_CHARS} characters]"
    return text


def load_skill_text(skill: Skill, workspace_root: Path) -> str:
    """What `load_skill(name)` returns: the instructions and the folder's files."""
    try:
        _, body = parse_skill_file(skill.path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, SkillFormatError) as exc:
        raise ToolException(f"Skill {skill.name} can no longer be read: {exc}") from exc
    files = _list_files(skill.folder)
    where = str(skill.folder)
    folder = Path(os.path.realpath(skill.folder))
    if folder.is_relative_to(workspace_root):
        where += f" (in the project: {folder.relative_to(workspace_root)})"
    listing = "\n".join(f"- {f}" for f in files) or "(none)"
    if len(files) >= MAX_LISTED_FILES:
        listing += f"\n… (only the first {MAX_LISTED_FILES} files are listed)"
    return (
        f"# Skill: {skill.name}\nFolder: {where}\n\n{body.rstrip()}\n\n"
        f"Files in the skill folder:\n{listing}\n\n"
        f'Read one with load_skill("{skill.name}", file="<path from the list>").'
    )


class LoadSkillArgs(BaseModel):
    name: str = Field(description="The skill's name, as listed under Skills.")
    file: str | None = Field(
        default=None,
        description="A file of the skill folder to read (path from the listing); omit it to "
        "get the skill's instructions and file list.",
    )


def make_load_skill(scan: SkillScan, workspace_root: Path) -> BaseTool:
    async def load_skill(name: str, file: str | None = None) -> str:
        skill = scan.get(name)
        if skill is None:
            known = ", ".join(s.name for s in scan.skills) or "(none)"
            raise ToolException(f"No skill named {name!r}. Available skills: {known}.")
        try:
            if file:
                return _read_skill_file(skill, file)
            return load_skill_text(skill, workspace_root)
        except OSError as exc:
            raise ToolException(f"Cannot read skill {name}: {exc.strerror or exc}") from exc

    return make_tool(
        "load_skill",
        "Load a skill's instructions (and the list of files in its folder) before doing a "
        "task it covers; with `file`, read one of those files.",
        LoadSkillArgs,
        load_skill,
    )


def prompt_section(scan: SkillScan) -> str:
    listed = "\n".join(f"- {s.name}: {s.description}" for s in scan.skills)
    return (
        "## Skills\n"
        "Skills are instructions for particular tasks. When a task matches a skill below, "
        "call load_skill(name) first and follow what it says.\n" + listed
    )


async def skills_provider(ctx: ExtensionContext, ext: Extensions) -> None:
    """Lists the discovered skills to the model and adds `load_skill`."""
    scan = discover_skills(ctx.settings.home, ctx.workspace.root)
    for problem in scan.problems:
        ctx.notify(problem)
    if not scan.skills:
        return
    ext.tools.append(make_load_skill(scan, ctx.workspace.root))
    ext.prompt_sections.append(prompt_section(scan))
