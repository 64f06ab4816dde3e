"""HTML → readable markdown-flavoured text for `web_fetch`, with the standard library only.

Not a full renderer: it keeps what a model needs to read a page (title, headings,
paragraphs, lists, links, code blocks, simple tables) and drops scripts, styles, forms and
navigation chrome's markup. Whitespace is collapsed except inside `<pre>`.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser
from urllib.parse import urljoin

_SKIP = frozenset(
    {"script", "style", "noscript", "template", "svg", "canvas", "iframe", "object", "select"}
)
_BLOCK = frozenset(
    {
        "p", "div", "section", "article", "main", "header", "footer", "nav", "aside", "form",
        "table", "dl", "dt", "dd", "figure", "figcaption", "details", "summary",
        "address", "fieldset",
    }
)  # fmt: skip
_HEADINGS = {"h1": 1, "h2": 2, "h3": 3, "h4": 4, "h5": 5, "h6": 6}
# Nested-list indentation is written as this placeholder so the whitespace clean-up below
# cannot strip it; it becomes spaces at the very end.
_INDENT = "\x01"
_SPACES = re.compile(r"[ \t\r\n\f\v]+")
_BLANKS = re.compile(r"\n{3,}")


class _Converter(HTMLParser):
    def __init__(self, base_url: str | None) -> None:
        super().__init__(convert_charrefs=True)
        self.base_url = base_url
        self.out: list[str] = []
        self.title: list[str] = []
        # Inside a skipped element we only count nesting of that same tag: stray or
        # unclosed tags within it (common in real pages) cannot unbalance the skip.
        self.skip_tag: str | None = None
        self.skip_nest = 0
        self.in_title = False
        self.pre_depth = 0
        self.lists: list[list[int]] = []  # one [counter] per open list; -1 for bullets
        self.links: list[tuple[str | None, int]] = []  # (href, position in out)
        self.quote_depth = 0
        self.row_cells = 0

    # output helpers ----------------------------------------------------------------
    def _text(self, text: str) -> None:
        self.out.append(text)

    def _break(self, blank: bool = True) -> None:
        self.out.append("\n\n" if blank else "\n")

    def _prefix(self) -> str:
        return "> " * self.quote_depth

    # parser callbacks ----------------------------------------------------------------
    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "title" and not self.title:
            self.in_title = True
        if self.skip_tag is not None:
            self.skip_nest += tag == self.skip_tag
            return
        if tag in _SKIP:
            self.skip_tag, self.skip_nest = tag, 1
            return
        if not self._open_block(tag):
            self._open_inline(tag, dict(attrs))

    def _open_block(self, tag: str) -> bool:
        """Start a block-level element; False if `tag` is not one."""
        if tag in _HEADINGS:
            self._break()
            self._text(self._prefix() + "#" * _HEADINGS[tag] + " ")
        elif tag in _BLOCK:
            self._break()
        elif tag == "br":
            self._text("\n" + self._prefix())
        elif tag == "hr":
            self._break()
            self._text("---")
            self._break()
        elif tag == "pre":
            self._break()
            self._text("```\n")
            self.pre_depth += 1
        elif tag in ("ul", "ol"):
            if not self.lists:
                self._break()
            self.lists.append([0 if tag == "ol" else -1])
        elif tag == "li":
            self._list_item()
        elif tag == "blockquote":
            self.quote_depth += 1
            self._break()
            self._text(self._prefix())
        elif tag == "tr":
            self.row_cells = 0
            self._break(blank=False)
        else:
            return False
        return True

    def _list_item(self) -> None:
        indent = _INDENT * 2 * max(0, len(self.lists) - 1)
        counter = self.lists[-1] if self.lists else [-1]
        if counter[0] >= 0:
            counter[0] += 1
            marker = f"{counter[0]}. "
        else:
            marker = "- "
        self._text(f"\n{self._prefix()}{indent}{marker}")

    def _open_inline(self, tag: str, attr: dict[str, str | None]) -> None:
        if tag == "code" and not self.pre_depth:
            self._text("`")
        elif tag == "a":
            self.links.append((attr.get("href"), len(self.out)))
        elif tag in ("strong", "b"):
            self._text("**")
        elif tag in ("em", "i"):
            self._text("*")
        elif tag == "img" and attr.get("alt"):
            self._text(f"[image: {attr['alt']}]")
        elif tag in ("td", "th"):
            self._text(" | " if self.row_cells else "| ")
            self.row_cells += 1

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self.in_title = False
        if self.skip_tag is not None:
            if tag == self.skip_tag:
                self.skip_nest -= 1
                if not self.skip_nest:
                    self.skip_tag = None
            return
        if not self._close_block(tag):
            self._close_inline(tag)

    def _close_block(self, tag: str) -> bool:
        """End a block-level element; False if `tag` is not one (or not open)."""
        if tag in _HEADINGS or tag in _BLOCK:
            self._break()
        elif tag == "pre" and self.pre_depth:
            self.pre_depth -= 1
            self._text("\n```")
            self._break()
        elif tag in ("ul", "ol") and self.lists:
            self.lists.pop()
            if not self.lists:
                self._break()
        elif tag == "blockquote" and self.quote_depth:
            self.quote_depth -= 1
            self._break()
        else:
            return False
        return True

    def _close_inline(self, tag: str) -> None:
        if tag == "code" and not self.pre_depth:
            self._text("`")
        elif tag == "a" and self.links:
            self._close_link()
        elif tag in ("strong", "b"):
            self._text("**")
        elif tag in ("em", "i"):
            self._text("*")
        elif tag == "tr":
            self._text(" |" if self.row_cells else "")

    def _close_link(self) -> None:
        """`[label](url)` for a link with a label, `<url>` for one without."""
        href, start = self.links.pop()
        label = "".join(self.out[start:]).strip()
        if href and not href.startswith(("#", "javascript:")):
            target = urljoin(self.base_url, href) if self.base_url else href
            if label and label != target:
                del self.out[start:]
                self._text(f"[{label}]({target})")
            elif not label:
                self._text(f"<{target}>")

    def handle_data(self, data: str) -> None:
        if self.in_title:
            self.title.append(data)
        if self.skip_tag is not None or self.in_title:
            return
        if self.pre_depth:
            self._text(data)
            return
        text = _SPACES.sub(" ", data)
        if self.quote_depth:
            text = text.replace("\n", "\n" + self._prefix())
        self._text(text)


def _tidy(text: str) -> str:
    lines = []
    in_code = False
    for line in text.split("\n"):
        if line.strip() == "```":
            in_code = not in_code
        lines.append(line.rstrip() if in_code else _SPACES.sub(" ", line).strip())
    return _BLANKS.sub("\n\n", "\n".join(lines)).strip().replace(_INDENT, " ")


def html_to_text(html: str, base_url: str | None = None) -> str:
    """Readable text of an HTML document; the `<title>` becomes a first `# ` line when the
    page has no heading of its own. Relative links are resolved against `base_url`."""
    converter = _Converter(base_url)
    converter.feed(html.replace(_INDENT, ""))
    converter.close()
    body = _tidy("".join(converter.out))
    title = _SPACES.sub(" ", "".join(converter.title)).strip()
    if title and not body.startswith("#"):
        body = f"# {title}\n\n{body}" if body else f"# {title}"
    return body
