"""Settings: what each key is and its default (:mod:`.settings`, the ``Config`` dataclass), and
where its value comes from (:mod:`.loading`: defaults, TOML files, ``VAULTSEEK_<KEY>``
environment variables and arguments, checked and converted, with what a vault's own file may
set). This module only re-exports their public names."""

from .loading import (
    BUNDLED_MODEL_NAMES,
    RETIRED_KEYS,
    USER_ONLY_KEYS,
    VAULT_CONFIG_NAME,
    VAULT_LIMITS,
    load_config,
    user_setting,
)
from .settings import (
    ALWAYS_EXCLUDED,
    DEEP_MODEL_SPEC,
    DEEP_PROMPTS,
    DOCUMENT_GLOBS,
    FILE_KINDS,
    FUSION_METHODS,
    IMAGE_EXCLUDES,
    INTAKE_DIMENSIONS,
    MAX_PORT,
    MCP_HTTP_PORT,
    NOTE_GLOBS,
    OCR_ENGINES,
    Config,
    index_arguments,
    index_label,
)

__all__ = [
    "ALWAYS_EXCLUDED",
    "BUNDLED_MODEL_NAMES",
    "DEEP_MODEL_SPEC",
    "DEEP_PROMPTS",
    "DOCUMENT_GLOBS",
    "FILE_KINDS",
    "FUSION_METHODS",
    "IMAGE_EXCLUDES",
    "INTAKE_DIMENSIONS",
    "MAX_PORT",
    "MCP_HTTP_PORT",
    "NOTE_GLOBS",
    "OCR_ENGINES",
    "RETIRED_KEYS",
    "USER_ONLY_KEYS",
    "VAULT_CONFIG_NAME",
    "VAULT_LIMITS",
    "Config",
    "index_arguments",
    "index_label",
    "load_config",
    "user_setting",
]
