"""Server error messages → typed errors with a fix-it hint, for every backend."""

from __future__ import annotations

from typing import Protocol

from ..errors import ContextTooLongError, LLMError, LLMUnavailableError, ModelMissingError


class _Client(Protocol):
    backend: str
    model: str

    @property
    def url(self) -> str: ...


def classify(status: int, message: str, client: _Client) -> LLMError:
    """The typed error for an error ``message`` (and HTTP ``status``, 0 mid-stream)."""
    lowered = message.lower()
    where = f"the LLM server at {client.url}"
    if ("context" in lowered and any(w in lowered for w in ("length", "exceed", "too long", "window", "overflow"))) or (
        "too many tokens" in lowered or "prompt is too long" in lowered
    ):
        return ContextTooLongError(
            f"the question and its sources do not fit the model's context ({message})",
            hint="narrow the scope or ask a shorter question; or raise llm_context to the "
            "model's real window (Ollama: a model with a larger num_ctx)",
        )
    if status == 404 or ("model" in lowered and any(w in lowered for w in ("not found", "does not exist", "no such", "not installed"))):
        pull = f"run `ollama pull {client.model}`" if client.backend == "ollama" else (
            "load the model in the server, or set llm_model to one it serves (GET /v1/models lists them)"
        )
        return ModelMissingError(f"{where} does not have the model {client.model!r} ({message})", hint=pull)
    if "does not support tools" in lowered or ("tool" in lowered and "support" in lowered):
        return LLMError(f"the model {client.model} cannot call tools ({message})",
                        hint="set llm_tools = false, or use a model with tool support")  # fmt: skip
    if "does not support thinking" in lowered or ("think" in lowered and "support" in lowered):
        return LLMError(f"the model {client.model} does not expose its thinking ({message})",
                        hint="turn thinking off (llm_think = false, or the switch in the chat)")  # fmt: skip
    if status >= 500 or status == 0:
        return LLMUnavailableError(f"{where} failed: {message}", hint="see the LLM server's log")
    return LLMError(f"{where} refused the request (HTTP {status}): {message}")
