"""What a chat model says, backend-neutral: the events of one streamed reply, and the
messages of a conversation as every backend receives them (each client maps them to its
own wire format)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, TypedDict


@dataclass(frozen=True, slots=True)
class Thinking:
    """Reasoning tokens, for models that expose them (shown apart from the answer)."""

    text: str


@dataclass(frozen=True, slots=True)
class Text:
    """Answer tokens."""

    text: str


@dataclass(frozen=True, slots=True)
class ToolCall:
    """The model asks for a tool; ``arguments`` arrive whole (parsed JSON)."""

    name: str
    arguments: dict[str, Any]
    id: str = ""


@dataclass(frozen=True, slots=True)
class Done:
    """The end of a reply, with what the server reported about it."""

    reason: str = "stop"
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    server_ms: float | None = None


Event = Thinking | Text | ToolCall | Done


class Message(TypedDict, total=False):
    """One conversation turn. ``tool_calls`` on assistant turns that called tools; ``name``
    and ``tool_call_id`` on the ``tool`` turn that answers one; ``images`` on a user turn
    that shows the model pictures (the encoded bytes of PNG, JPEG, GIF or WebP files: each
    client puts them on the wire as its server expects)."""

    role: Literal["system", "user", "assistant", "tool"]
    content: str
    tool_calls: list[ToolCall]
    tool_call_id: str
    name: str
    images: list[bytes]


IMAGE_SIGNATURES = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
)


def image_media_type(data: bytes) -> str:
    """The media type of an image from its first bytes (``image/png`` when unknown: the
    study app stores PNG or JPEG only)."""
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    for signature, media_type in IMAGE_SIGNATURES:
        if data.startswith(signature):
            return media_type
    return "image/png"


def has_images(messages: list[Message]) -> bool:
    return any(m.get("images") for m in messages)


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """A tool offered to the model: a name, what it does, and its JSON-schema parameters."""

    name: str
    description: str
    parameters: dict[str, Any] = field(default_factory=lambda: {"type": "object", "properties": {}})

    def to_wire(self) -> dict[str, Any]:
        """The ``{"type": "function", "function": {...}}`` shape both APIs accept."""
        return {
            "type": "function",
            "function": {"name": self.name, "description": self.description, "parameters": self.parameters},
        }
