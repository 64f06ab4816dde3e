"""`web_fetch(url)`: read a web page as text, without becoming a door into the local network.

Every hop (the first URL and each redirect) is checked before anything is sent:
http(s) only, no credentials in the URL, and the host's DNS answers must all be public
addresses (no loopback, private, link-local, CGNAT, multicast or reserved ranges). The
request then goes to the very address that was checked (the URL's host becomes the `Host`
header and the TLS server name), so a DNS answer that changes between check and connect
(DNS rebinding) cannot redirect it. Redirects are followed by hand for the same reason.
Proxy variables and .netrc are ignored (`trust_env=False`): a proxy would make the
address check meaningless, and .netrc would add credentials.

Tests may allow loopback addresses, for all ports or a given set (`LoopbackAllowance`);
private and link-local addresses are never allowed.
"""

from __future__ import annotations

import asyncio
import codecs
import ipaddress
import socket
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import httpx
from langchain_core.tools import BaseTool, StructuredTool, ToolException
from pydantic import BaseModel, Field

from invincat_server.runtime.tools.html_text import html_to_text

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
_REDIRECTS = frozenset({301, 302, 303, 307, 308})
_HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
_TEXT_TYPES = frozenset(
    {"application/json", "application/xml", "application/javascript", "application/x-yaml",
     "application/yaml", "application/toml", "application/x-sh", "application/ld+json"}
)  # fmt: skip
USER_AGENT = "Invincat-web_fetch/0.1 (+https://github.com/invincat)"


@dataclass(frozen=True)
class FetchLimits:
    """Bounds on one `web_fetch` call."""

    max_bytes: int = 2_000_000
    """Body bytes read (after decompression); the rest is not downloaded."""
    max_chars: int = 100_000
    """Characters of converted text returned to the model."""
    timeout: float = 30.0
    """Seconds for the whole call: DNS, connects, redirects and body."""
    max_redirects: int = 5


@dataclass(frozen=True)
class LoopbackAllowance:
    """Which loopback targets a test may fetch: every port (`any_port`) or only `ports`."""

    any_port: bool = False
    ports: frozenset[int] = field(default_factory=frozenset)

    @classmethod
    def parse(cls, value: object) -> LoopbackAllowance:
        """`True`/`"1"`/`"true"` → any port; ints or `"8080,8081"` → those ports; else none."""
        if value is None or value is False:
            return cls()
        if value is True:
            return cls(any_port=True)
        if isinstance(value, int):
            return cls(ports=frozenset({value}))
        if isinstance(value, str):
            text = value.strip().lower()
            if text in ("1", "true", "yes", "on", "*"):
                return cls(any_port=True)
            if text in ("", "0", "false", "no", "off"):
                return cls()
            return cls(ports=frozenset(int(p) for p in text.split(",") if p.strip()))
        if isinstance(value, Iterable):
            return cls(ports=frozenset(int(p) for p in value))
        raise ValueError(f"cannot read a loopback allowance from {value!r}")

    def allows(self, address: IPAddress, port: int) -> bool:
        return address.is_loopback and (self.any_port or port in self.ports)


class FetchRefused(ToolException):
    """The URL or a redirect target is not allowed; nothing was sent to it."""


def _category(address: IPAddress) -> str | None:
    """Why an address is not a public internet address, or None if it is."""
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    if address.is_loopback:
        return "loopback"
    if address.is_link_local:
        return "link-local (e.g. cloud metadata)"
    if address.is_unspecified:
        return "unspecified"
    if address.is_multicast:
        return "multicast"
    if address.is_private:
        return "private"
    if not address.is_global:
        return "reserved or shared"
    return None


async def _resolve(host: str, port: int) -> list[IPAddress]:
    try:
        return [ipaddress.ip_address(host)]
    except ValueError:
        pass
    try:
        infos = await asyncio.get_running_loop().getaddrinfo(
            host, port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP
        )
    except socket.gaierror as exc:
        raise ToolException(f"Cannot resolve host {host!r}: {exc.strerror or exc}.") from exc
    # Scope ids (fe80::1%eth0) are dropped: link-local is refused anyway.
    found = [ipaddress.ip_address(str(info[4][0]).split("%")[0]) for info in infos]
    return list(dict.fromkeys(found))


async def check_url(url: httpx.URL, allow: LoopbackAllowance) -> IPAddress:
    """The address to connect to for `url`, or FetchRefused saying why not."""
    if url.scheme not in ("http", "https"):
        raise FetchRefused(
            f"Refused {url}: web_fetch only fetches http:// and https:// URLs "
            f"(got {url.scheme or 'no'} scheme)."
        )
    if url.userinfo:
        raise FetchRefused(
            "Refused a URL with credentials (user:password@host): web_fetch never sends "
            "credentials. Use a public URL without them."
        )
    if not url.host:
        raise FetchRefused(f"Refused {url}: the URL has no host.")
    port = url.port or (443 if url.scheme == "https" else 80)
    addresses = await _resolve(url.host, port)
    if not addresses:
        raise ToolException(f"Host {url.host!r} has no addresses.")
    for address in addresses:
        reason = _category(address)
        if reason and not allow.allows(address, port):
            raise FetchRefused(
                f"Refused {url}: {url.host} resolves to {address}, a {reason} address. "
                "web_fetch only reaches public internet addresses."
            )
    return addresses[0]


@dataclass
class Page:
    url: str
    status: int
    content_type: str
    body: bytes
    charset: str | None
    truncated: bool
    redirects: list[str]


async def _get(
    client: httpx.AsyncClient, url: httpx.URL, address: IPAddress, limits: FetchLimits
) -> tuple[httpx.Response, bytes, bool]:
    """One request to the checked address; reads at most `max_bytes` of the body."""
    headers = {"Host": url.netloc.decode("ascii")}
    extensions: dict[str, Any] = {}
    if url.scheme == "https":
        # TLS must still name (and verify the certificate of) the URL's host.
        extensions["sni_hostname"] = url.host
    request = client.build_request(
        "GET", url.copy_with(host=str(address)), headers=headers, extensions=extensions
    )
    response = await client.send(request, stream=True)
    chunks: list[bytes] = []
    size = 0
    truncated = False
    try:
        if response.status_code not in _REDIRECTS:
            async for chunk in response.aiter_bytes():
                chunks.append(chunk)
                size += len(chunk)
                if size > limits.max_bytes:
                    # Stop downloading: closing the response drops the connection.
                    truncated = True
                    break
    finally:
        await response.aclose()
    return response, b"".join(chunks)[: limits.max_bytes], truncated


async def fetch_page(url: str, limits: FetchLimits, allow: LoopbackAllowance) -> Page:
    """GET `url`, following redirects by hand and checking every hop."""
    try:
        current = httpx.URL(url.strip())
    except (httpx.InvalidURL, TypeError) as exc:
        raise FetchRefused(f"Refused {url!r}: not a valid URL ({exc}).") from exc
    redirects: list[str] = []
    timeout = httpx.Timeout(limits.timeout)
    async with httpx.AsyncClient(
        follow_redirects=False,
        trust_env=False,
        timeout=timeout,
        headers={"User-Agent": USER_AGENT, "Accept-Encoding": "gzip, deflate"},
    ) as client:
        for _ in range(limits.max_redirects + 1):
            address = await check_url(current, allow)
            response, body, truncated = await _get(client, current, address, limits)
            location = response.headers.get("location")
            if response.status_code in _REDIRECTS and location:
                redirects.append(str(current))
                try:
                    current = current.join(location)
                except httpx.InvalidURL as exc:
                    raise ToolException(f"{current} redirected to an invalid URL: {exc}") from exc
                continue
            content_type = response.headers.get("content-type", "")
            return Page(
                url=str(current),
                status=response.status_code,
                content_type=content_type.split(";")[0].strip().lower(),
                body=body,
                charset=response.charset_encoding,
                truncated=truncated,
                redirects=redirects,
            )
    raise ToolException(f"Stopped after {limits.max_redirects} redirects (last: {current}).")


def _decode(body: bytes, charset: str | None) -> str:
    try:
        codec = codecs.lookup(charset or "utf-8").name
    except LookupError:
        codec = "utf-8"
    return body.decode(codec, errors="replace")


def page_text(page: Page) -> str:
    """The page as text: HTML converted, other text as is; binary content is refused."""
    kind = page.content_type
    head = page.body[:1024].lstrip().lower()
    looks_html = head.startswith((b"<!doctype html", b"<html")) or b"<body" in head
    if kind in _HTML_TYPES or (not kind and looks_html):
        return html_to_text(_decode(page.body, page.charset), base_url=page.url)
    textual = (
        kind.startswith("text/")
        or kind in _TEXT_TYPES
        or kind.endswith(("+json", "+xml"))
        or (not kind and b"\x00" not in page.body[:4096])
    )
    if not textual:
        raise ToolException(
            f"{page.url} is {kind or 'binary'} content ({len(page.body)} bytes read); "
            "web_fetch only returns text and HTML pages."
        )
    return _decode(page.body, page.charset)


def render(page: Page, text: str, limits: FetchLimits) -> str:
    lines = [f"URL: {page.url}", f"Status: {page.status}  Content-Type: {page.content_type or '?'}"]
    if page.redirects:
        lines.append("Redirected from: " + " → ".join(page.redirects))
    notes = []
    if page.truncated:
        notes.append(f"[download stopped at {limits.max_bytes} bytes; the page is longer]")
    if len(text) > limits.max_chars:
        notes.append(f"[text cut at {limits.max_chars} of {len(text)} characters]")
        text = text[: limits.max_chars]
    return "\n".join([*lines, "", text or "(empty page)", *notes])


class WebFetchArgs(BaseModel):
    url: str = Field(description="The http:// or https:// URL to fetch.")


def build_web_tools(
    limits: FetchLimits | None = None, allow: LoopbackAllowance | None = None
) -> list[BaseTool]:
    """`web_fetch(url)`. Approval-gated by the default policy (it is not a free tool)."""
    bounds = limits or FetchLimits()
    allowance = allow or LoopbackAllowance()

    async def web_fetch(url: str) -> str:
        try:
            async with asyncio.timeout(bounds.timeout):
                page = await fetch_page(url, bounds, allowance)
        except TimeoutError:
            raise ToolException(
                f"Fetching {url} took longer than {bounds.timeout:g}s and was stopped."
            ) from None
        except httpx.HTTPError as exc:
            raise ToolException(f"Fetching {url} failed: {type(exc).__name__}: {exc}") from exc
        text = page_text(page)
        if page.status >= 400:
            raise ToolException(f"HTTP {page.status} for {page.url}:\n{text[:2000]}")
        return render(page, text, bounds)

    return [
        StructuredTool.from_function(
            coroutine=web_fetch,
            name="web_fetch",
            description=(
                "Fetch a public web page (http/https) and return it as text; HTML is converted "
                "to markdown-like text. Local and private network addresses are refused."
            ),
            args_schema=WebFetchArgs,
            handle_tool_error=True,
        )
    ]
