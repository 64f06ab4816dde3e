"""When to run the memory agent, and how strongly the user asked to remember something."""

from __future__ import annotations

import re

# Bare acknowledgements carry nothing durable; the memory model is not even called.
_ACKS_EN = {
    "ok", "okay", "k", "kk", "thanks", "thank you", "thx", "ty", "cool", "great", "nice",
    "continue", "go on", "go ahead", "proceed", "yes", "yep", "yeah", "no", "nope", "sure",
    "got it", "sounds good", "lgtm", "done", "perfect", "fine", "alright", "right",
    "ok thanks", "okay thanks", "thanks!", "next",
}  # fmt: skip
_ACKS_ZH = {
    "好", "好的", "好滴", "行", "可以", "嗯", "嗯嗯", "对", "是", "是的", "谢谢", "多谢",
    "感谢", "继续", "继续吧", "收到", "明白", "知道了", "没问题", "好吧", "下一步",
}  # fmt: skip
_PUNCT = re.compile(r"[\s\.,!?;:~。，！？；：…、\"'`]+")

_EXPLICIT = re.compile(
    r"(?i)\b(remember|memori[sz]e|always|never|from now on|going forward|in the future|"
    r"by default|make a note|keep in mind)\b|记住|记得|以后|从现在起|今后|总是|永远|不要再|默认"
)


def is_acknowledgement(text: str) -> bool:
    """True for a bare 'ok' / 'thanks' / 'continue' / '继续' style message."""
    normalised = _PUNCT.sub(" ", text.strip().lower()).strip()
    if not normalised:
        return True
    return normalised in _ACKS_EN or normalised.replace(" ", "") in _ACKS_ZH


def is_explicit_request(text: str) -> bool:
    """The user asked for something to be remembered ("remember…", "from now on…", "记住…")."""
    return bool(_EXPLICIT.search(text))
