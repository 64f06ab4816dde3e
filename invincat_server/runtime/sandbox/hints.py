"""A note for the model when a sandboxed command failed the way the sandbox makes
commands fail, so it can ask to re-run it outside (which the user is asked about)."""

from __future__ import annotations

import re

from invincat_server.runtime.sandbox.modes import SandboxSpec

# What programs print when a write lands on a read-only mount or a path they may not
# touch. Matched only in the output of a sandboxed command that exited non-zero.
_WRITE_BLOCKED = re.compile(r"Read-only file system|EROFS|Permission denied|EACCES", re.I)
# With `--unshare-net` there is only the sandbox's own loopback: no route, no DNS.
_NETWORK_BLOCKED = re.compile(
    r"Network is unreachable|ENETUNREACH|Temporary failure in name resolution|"
    r"Could not resolve|Name or service not known|No address associated with hostname|"
    r"getaddrinfo|EAI_AGAIN|nodename nor servname",
    re.I,
)


def sandbox_hint(
    output: str,
    exit_code: int | None,
    spec: SandboxSpec,
    *,
    label: str | None = None,
    landlock: bool = False,
) -> str | None:
    """The note to append to a failed sandboxed command's result, or None. `label` is how
    the command ran (default: the spec's); under `landlock` the workspace's top level
    takes no new entries either (docs/security.md, "Under Landlock")."""
    if exit_code in (0, None) or not spec.confined:
        return None
    causes = []
    if _WRITE_BLOCKED.search(output):
        causes.append(
            "writes outside the workspace"
            + (" (and inside it: read-only mode)" if spec.mode == "read-only" else "")
            + " and to .git/ and .invincat/ are blocked"
            + (
                "; under Landlock new entries cannot be created at the top of the workspace "
                "(create them in a subfolder) and only $TMPDIR, not /tmp, is writable"
                if landlock
                else ""
            )
        )
    if not spec.network and _NETWORK_BLOCKED.search(output):
        causes.append("the network is off")
    if not causes:
        return None
    return (
        f"[sandbox: this command ran in the OS sandbox ({label or spec.label()}): "
        + "; ".join(causes)
        + ". If the failure is the sandbox's and the command really needs that access, you "
        "may call execute again with `unsandboxed: true` and a `reason`; the user will be "
        "asked separately whether to run it without the sandbox.]"
    )
