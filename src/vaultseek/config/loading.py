"""Reading and checking settings: defaults, TOML files and ``VAULTSEEK_<KEY>`` environment
variables.

Precedence, lowest first: built-in defaults → the user file
(``$XDG_CONFIG_HOME/vaultseek/config.toml``) → the vault's own ``.vaultseek.toml`` →
environment variables → explicit arguments (CLI flags). Every key has one spelling; its
environment variable is ``VAULTSEEK_`` plus the key in upper case. A vault's own file is
written by whoever shares or syncs the vault, so it cannot set :data:`USER_ONLY_KEYS` (where
data is sent, who can reach the server, which files outside the vault are read); it is read
without them, with a notice.

Where the index lives (a file outside the vault by default, or a ``postgresql://`` URL whose
password comes from ``PGPASSWORD`` or ``~/.pgpass``, never from a config file) is worked out by
:mod:`vaultseek.places`. What each key means and its default are in :mod:`.settings`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import fields, replace
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from ..places import (
    COLLECTION_NAME,
    VaultRegistry,
    config_home,
    database_state_path,
    database_target,
    default_collection,
    display_url,
    find_vault,
    is_database_url,
)
from .settings import (
    DEEP_MODEL_SPEC,
    DEEP_PROMPTS,
    FUSION_METHODS,
    INTAKE_DIMENSIONS,
    MAX_PORT,
    OCR_ENGINES,
    Config,
)

VAULT_CONFIG_NAME = ".vaultseek.toml"
USER_ONLY_KEYS = ("db", "collection", "upload_folder", "llm_url", "transcription_url", "deep_url", "rerank_url",
                  "serve_host", "serve_port", "serve_token", "follow_external_symlinks", "deep_threads")  # fmt: skip
"""Settings a vault's own ``.vaultseek.toml`` cannot set. A shared, synced or cloned vault is
written by others, so these come only from the user's own config file, environment variables
and flags: where the index and the study app's database (note text, chat questions) are
written (``db``, and ``collection`` inside a PostgreSQL database: a vault file's ``db`` could
put them inside the vault, where sync tools carry them away); which files the study app may
delete (``upload_folder``); the servers that get questions, note excerpts, every chunk or
recorded speech (``llm_url``, ``transcription_url``, ``deep_url``, ``rerank_url``); who can
reach the study app (``serve_host``, ``serve_port``, ``serve_token``); whether symlinks out
of the vault are followed (``follow_external_symlinks``: a vault that brings a link to
``~/.ssh`` must not also bring the switch that indexes it); and how many cores the background
worker, which serves all of the user's vaults, may take (``deep_threads``). A vault file may
set some keys only in part: see :data:`VAULT_LIMITS` and :func:`_vault_may_set`. A vault file
that sets one is read without it, and :attr:`Config.notices` says so."""
VAULT_LIMITS = ("max_file_mb", "max_document_mb", "max_inflated_mb", "max_document_text_mb",
                "ocr_max_pages_per_document", "max_upload_mb")  # fmt: skip
"""Limits a vault's own file may lower but not raise above the user's setting (or the
default): they bound the memory and time one file, page or upload may take."""

_KEYS = {f.name: f for f in fields(Config) if f.name not in ("sources", "notices", "database_url", "vault_is_last_indexed")}
"""The keys a config file, variable or argument may set: every field of :class:`Config` but
what loading fills in itself."""


def _coerce(key: str, value: Any, origin: str, base: Path) -> Any:
    """Check and convert one setting to the type its field wants; relative paths are taken
    relative to ``base`` (the config file's folder, or the current folder)."""
    kind = _KEYS[key].type

    def bad(expected: str) -> ConfigError:
        return ConfigError(f"{origin}: `{key}` must be {expected} (got {value!r})")

    if key == "db" and is_database_url(value):
        try:
            database_target(value)
        except ValueError as exc:
            raise ConfigError(f"{origin}: `db` is not a usable postgresql:// URL ({exc})",
                              hint="e.g. postgresql://user@host:5432/database") from None  # fmt: skip
        return value.strip()
    if key in ("vault", "db"):
        if not isinstance(value, (str, Path)) or not str(value).strip():
            raise bad("a path" if key == "vault" else "a path or a postgresql:// URL")
        path = Path(str(value)).expanduser()
        return path if path.is_absolute() else (base / path).absolute()
    if kind == "tuple[str, ...]":
        if isinstance(value, str):
            value = [part.strip() for part in value.split(",") if part.strip()]
        if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
            raise bad("a list of strings")
        if key == "include" and not value:
            raise bad("a non-empty list (nothing would be indexed)")
        return tuple(value)
    if kind == "tuple[float, ...]":  # intake_weights: a table, a list, or "a,b,c,d"
        return _weights(value, bad)
    if kind in ("bool", "bool | None"):
        if isinstance(value, str) and value.strip().lower() in ("1", "true", "yes", "on"):
            value = True
        elif isinstance(value, str) and value.strip().lower() in ("0", "false", "no", "off"):
            value = False
        if not isinstance(value, bool):
            raise bad("true or false")
        return value
    if kind in ("int", "int | None"):
        if isinstance(value, str) and value.strip().isdigit():
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise bad("a whole number of at least 1")
        if key == "serve_port" and value > MAX_PORT:  # else the socket library wraps it around
            raise bad(f"a port from 1 to {MAX_PORT}")
        return value
    if kind in ("float", "float | None"):
        if isinstance(value, str):
            try:
                value = float(value)
            except ValueError:
                raise bad("a number") from None
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < float("inf"):
            raise bad("a number of at least 0")
        if (key.startswith("intake_") or key in ("recency_weight", "term_match", "hook_min_relevance", "rerank_weight")) and value > 1:
            raise bad("a number from 0 to 1")
        return float(value)
    if not isinstance(value, str) or not value.strip():
        raise bad("a non-empty string")
    if key == "ocr_languages" and not all(
        part.isascii() and part.replace("_", "").isalnum() for part in value.split("+")
    ):
        raise bad('Tesseract language codes joined by "+", e.g. "eng+deu"')
    if key in ("intake_inbox", "intake_review", "intake_discard"):
        parts = [part for part in value.replace("\\", "/").split("/") if part not in ("", ".")]
        if value.startswith("/") or ".." in parts or not parts:  # the vault itself: every note an arrival
            raise bad("a folder inside the vault, e.g. \"_intake/inbox\"")
        return "/".join(parts)
    if key == "llm_backend" and value not in ("ollama", "openai"):
        raise bad('"ollama" or "openai"')
    if key == "deep_model" and not DEEP_MODEL_SPEC.fullmatch(value):
        raise bad('"e5-small", "ollama:NAME" or "openai:NAME"')
    if key == "deep_prompts" and value not in DEEP_PROMPTS:
        raise bad(f"one of {', '.join(DEEP_PROMPTS)}")
    if key in ("llm_url", "transcription_url", "deep_url", "rerank_url") and not value.startswith(("http://", "https://")):
        raise bad("an http:// or https:// address")
    if key == "upload_folder":
        parts = [part for part in value.replace("\\", "/").split("/") if part not in ("", ".")]
        if value.startswith(("/", "\\")) or ".." in parts or not parts:
            # "." would make every note an upload, which the study app's Delete removes
            raise bad('a folder inside the vault, not the vault itself, e.g. "uploads"')
    if key == "prompt_folder":
        folder = Path(value).expanduser()
        return str(folder if folder.is_absolute() else (base / folder).absolute())
    if key == "collection" and not COLLECTION_NAME.fullmatch(value):
        raise bad('lower-case letters, digits and "_", at most 40 characters')
    if key == "link_signal" and value not in ("backlinks", "neighbours"):
        raise bad('"backlinks" or "neighbours"')
    if key == "ocr_engine" and value not in OCR_ENGINES:
        raise bad(f"one of {', '.join(OCR_ENGINES)}")
    if key == "fusion" and value not in FUSION_METHODS:
        raise bad(f"one of {', '.join(FUSION_METHODS)}")
    if key == "rerank":
        value = value.strip()
        named_model = value.startswith("llama:") and value.removeprefix("llama:").strip()
        if value not in ("off", "llama", "tei", "chat") and not named_model:
            raise bad('"off", "llama", "llama:MODEL", "tei" or "chat"')
    return value


def _weights(value: Any, bad: Any) -> tuple[float, ...]:
    """``intake_weights``: ``{relevance = 0.4, …}`` (missing names keep their default), four
    numbers in that order, or the same as text (``"0.4,0.2,0.2,0.2"`` or ``"depth=0.3"``)."""
    expected = "a table of relevance/actionability/depth/authority weights, or four numbers"
    chosen = dict(zip(INTAKE_DIMENSIONS, Config.intake_weights, strict=True))
    if isinstance(value, str):
        parts = [part.strip() for part in value.split(",") if part.strip()]
        if all("=" in part for part in parts):
            value = dict(part.split("=", 1) for part in parts)
            value = {k.strip(): v.strip() for k, v in value.items()}
        else:
            value = parts
    if isinstance(value, dict):
        unknown = sorted(set(value) - set(INTAKE_DIMENSIONS))
        if unknown:
            raise bad(expected)
        pairs = list(value.items())
    elif isinstance(value, (list, tuple)) and len(value) == len(INTAKE_DIMENSIONS):
        pairs = list(zip(INTAKE_DIMENSIONS, value, strict=True))
    else:
        raise bad(expected)
    for name, weight in pairs:
        try:
            number = float(weight)
        except (TypeError, ValueError):
            raise bad(expected) from None
        if isinstance(weight, bool) or not 0 <= number <= 1e6:
            raise bad(expected)
        chosen[name] = number
    if not sum(chosen.values()) > 0:
        raise bad("weights that are not all 0")
    return tuple(chosen[name] for name in INTAKE_DIMENSIONS)


RETIRED_KEYS: dict[str, str] = {
    "hook_min_deep_relevance": (
        "every result is now judged by one calibrated probability, whichever model made its vector: "
        "set hook_min_relevance (0–1, default 0.5) instead"
    ),
}
"""Settings that no longer exist → what to set instead (a config file or argument naming one
is refused with that hint, rather than with "unknown key")."""


def _read_toml(path: Path) -> dict[str, Any]:
    import tomllib  # only when a config file exists: agent hooks start on every prompt

    try:
        data = tomllib.loads(path.read_text("utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read config file {path}: {exc}") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"config file {path} is not valid TOML: {exc}") from exc
    data = data.get("vaultseek", data)  # allow a [vaultseek] table or top-level keys
    if not isinstance(data, dict):
        raise ConfigError(f"config file {path}: `vaultseek` must be a table of settings")
    _refuse_unknown_keys(data, f"config file {path}")
    return data


def _refuse_unknown_keys(data: Mapping[str, Any], origin: str) -> None:
    """Raise :class:`ConfigError` when ``data`` names a retired setting (with what to set
    instead) or one that does not exist (with the settings it may be a typo of)."""
    retired = sorted(set(data) & set(RETIRED_KEYS))
    if retired:
        raise ConfigError(f"{origin}: {retired[0]} is no longer a setting", hint=RETIRED_KEYS[retired[0]])
    unknown = sorted(set(data) - set(_KEYS))
    if unknown:
        from difflib import get_close_matches  # only for this error: a search never loads it

        near = get_close_matches(unknown[0], _KEYS, n=3)
        raise ConfigError(f"{origin}: unknown key(s) {', '.join(unknown)}",
                          hint=f"did you mean {' or '.join(near)}?" if near else f"known keys: {', '.join(sorted(_KEYS))}")  # fmt: skip


def load_config(
    *,
    vault: Path | str | None = None,
    db: Path | str | None = None,
    config_file: Path | str | None = None,
    environ: dict[str, str] | None = None,
    prefer_cwd: bool = False,
    **overrides: Any,
) -> Config:
    """Assemble the effective configuration and resolve which vault it is for.

    ``prefer_cwd`` (what ``vaultseek index`` without a folder wants) makes the current folder
    the vault when nothing names one, rather than the most recently indexed vault."""
    env = os.environ if environ is None else environ
    settings: dict[str, Any] = {}
    sources: list[str] = []
    notices: list[str] = []

    cwd = Path.cwd()

    def apply(data: dict[str, Any], origin: str, base: Path) -> None:
        for key, value in data.items():
            if value is not None:
                settings[key] = _coerce(key, value, origin, base)

    user_file = Path(config_file) if config_file else config_home() / "config.toml"
    if config_file and not user_file.is_file():
        raise ConfigError(f"config file {user_file} does not exist")
    if user_file.is_file():
        user_settings = _read_toml(user_file)
        _refuse_password(user_settings.get("db"), user_file)
        apply(user_settings, str(user_file), user_file.parent)
        sources.append(str(user_file))

    env_values = {
        key: env[f"VAULTSEEK_{key.upper()}"]
        for key in _KEYS
        if env.get(f"VAULTSEEK_{key.upper()}")
    }
    explicit_vault = vault or env_values.get("vault") or settings.get("vault")
    vault_path, last_indexed = find_vault(explicit_vault, prefer_cwd=prefer_cwd)
    vault_file = vault_path / VAULT_CONFIG_NAME
    if vault_file.is_file():
        vault_settings = _read_toml(vault_file)
        vault_settings.pop("vault", None)  # a vault's own file cannot move the vault
        refused = _vault_may_set(vault_settings, settings, vault_file)
        if refused:
            notices.append(
                f"{vault_file}: ignored {', '.join(refused)}: a vault's own file cannot choose where "
                "data is written or sent, who can reach the server, what outside the vault is read "
                "or downloaded, nor raise a limit (set them in your own config file, VAULTSEEK_* "
                "variables or flags)"
            )
        settings.update((key, value) for key, value in vault_settings.items() if value is not None)
        sources.append(str(vault_file))
    apply(env_values, "environment", cwd)
    _refuse_unknown_keys(overrides, "arguments")
    apply({"db": db, **overrides}, "arguments", cwd)
    if isinstance(db, str) and is_database_url(db) and database_target(db).has_password:
        notices.append(
            "the password in --db can be read by other users of this machine (`ps`, shell "
            "history): put it in ~/.pgpass or PGPASSWORD instead"
        )
    settings["vault"] = vault_path
    if settings.get("db") is None:
        remembered = VaultRegistry().database_for(vault_path)
        if remembered is not None:  # the vault's default index is a PostgreSQL one
            settings["db"] = remembered[0]
            settings.setdefault("collection", remembered[1])
    settings.setdefault("collection", default_collection(vault_path))
    if is_database_url(settings.get("db")):
        settings["database_url"] = settings["db"]
        settings["db"] = database_state_path(settings["db"], settings["collection"])
    elif settings.get("db") is None:
        settings["db"] = VaultRegistry().db_for(vault_path)
    elif settings["db"].is_dir():
        example = settings["db"] / "index.db"
        given, fix = (("--db", f"--db {example}") if db is not None
                      else ("VAULTSEEK_DB", f"VAULTSEEK_DB={example}") if "db" in env_values
                      else ("`db`", f'db = "{example}"'))  # fmt: skip
        raise ConfigError(f"{given} names the folder {settings['db']}, not an index file",
                          hint=f"give a file's path, e.g. {fix}")  # fmt: skip
    return replace(Config(), **settings, sources=tuple(sources), notices=tuple(notices),
                   vault_is_last_indexed=last_indexed)  # fmt: skip


BUNDLED_MODEL_NAMES = ("bundled", "vaultseek/minilm-l6-v2-m2v256")
"""The names of the model inside the package (``embeddings.static.BUNDLED_MODEL`` and
``BUNDLED_MODEL_NAME``; not imported from there, which loads numpy; a test keeps them equal)."""


def user_setting(key: str, *, environ: Mapping[str, str] | None = None) -> Any:
    """One setting as the user chose it for the whole machine, with no vault to resolve: the
    ``VAULTSEEK_*`` variable, else the user's own config file, else the default (what the
    background worker, which serves every vault, reads). Raises :class:`ConfigError` for a
    value that is not a valid one."""
    env = os.environ if environ is None else environ
    if env.get(f"VAULTSEEK_{key.upper()}"):
        return _coerce(key, env[f"VAULTSEEK_{key.upper()}"], "environment", Path.cwd())
    user_file = config_home() / "config.toml"
    if user_file.is_file():
        value = _read_toml(user_file).get(key)
        if value is not None:
            return _coerce(key, value, str(user_file), user_file.parent)
    return _KEYS[key].default


def _vault_may_set(data: dict[str, Any], current: dict[str, Any], vault_file: Path) -> list[str]:
    """Drop from ``data`` (a vault's own file's settings, checked and converted in place) what
    a vault file may not set, and return those keys, for the notice. ``current`` holds the
    settings so far (the user's own file).

    Refused whole: :data:`USER_ONLY_KEYS`. Refused in part: a ``deep_model`` on a server (every
    chunk would go there); a ``model`` that is not the bundled one or a folder inside the vault
    (a hub id is a download: a vault file never makes vaultseek reach for the network); a
    ``prompt_folder`` outside the vault; a limit of :data:`VAULT_LIMITS` above the current one
    (a vault may tighten them only); ``deep_tier = true`` when the user turned it off (a
    background job that takes a core for hours)."""
    vault = vault_file.parent
    refused = [key for key in USER_ONLY_KEYS if key in data]
    for key in refused:
        del data[key]
    for key in list(data):
        value = data[key] = _coerce(key, data[key], str(vault_file), vault)
        if value is None:
            continue
        before = current.get(key, _KEYS[key].default)
        if key in VAULT_LIMITS:
            allowed = before is None or value <= before
        elif key == "deep_tier":
            allowed = before or not value
        elif key == "deep_model":
            allowed = not str(value).startswith(("ollama:", "openai:"))
        elif key == "model":
            allowed = value in BUNDLED_MODEL_NAMES
            if not allowed:
                folder = (vault / Path(value).expanduser()).resolve()
                allowed = folder.is_dir() and _inside(folder, vault)
                data[key] = str(folder)
        elif key == "prompt_folder":
            allowed = _inside(Path(value).resolve(), vault)
        else:
            allowed = True
        if not allowed:
            del data[key]
            refused.append(key)
    return sorted(refused)


def _inside(path: Path, folder: Path) -> bool:
    folder = folder.resolve()
    return path == folder or folder in path.parents


def _refuse_password(db: Any, path: Path) -> None:
    """A config file's ``db`` URL must not hold a password: config files are copied, synced
    and shown; libpq reads the password from ``PGPASSWORD`` or ``~/.pgpass``."""
    if isinstance(db, str) and is_database_url(db) and database_target(db).has_password:
        raise ConfigError(
            f"config file {path}: the `db` URL holds a password, which a config file must not",
            hint=f"use {display_url(db)} and put the password in ~/.pgpass "
            "(host:port:database:user:password, mode 600) or the PGPASSWORD variable",
        )
