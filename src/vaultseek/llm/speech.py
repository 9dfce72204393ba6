"""Speech to text on this machine, for the chat's microphone button.

Two ways, chosen by the configuration and what is installed (:func:`create_transcriber`):

* ``transcription_url`` names an OpenAI-compatible server (whisper.cpp's ``whisper-server``
  with ``--inference-path /v1/audio/transcriptions``, faster-whisper servers, LocalAI, …):
  the recording is posted to ``{url}/audio/transcriptions`` as ``multipart/form-data``
  (``file``, ``model``, ``response_format=json``) and the answer's ``text`` is the
  transcript.
* Otherwise, when the ``pocketsphinx`` package is installed, it transcribes in this process
  with the US English model its wheel ships (no download, no server; rough accuracy). It
  reads 16-bit PCM WAV, which the browser sends.

Never the browser's own speech recognition: Chromium's sends the audio to a cloud service.
"""

from __future__ import annotations

import asyncio
import io
import wave
from dataclasses import dataclass
from typing import Any, Protocol

from ..config import Config
from ..errors import LLMError, TranscriptionError
from .transport import ServerError, Transport

MAX_AUDIO_BYTES = 25 * 1024 * 1024
"""The largest recording accepted (OpenAI's own limit; ~13 minutes of 16 kHz WAV)."""

SETUP_HINT = (
    "run a speech-to-text server on this machine and name it in the config, e.g. whisper.cpp: "
    "`whisper-server -m ggml-base.en.bin --port 8178 --inference-path /v1/audio/transcriptions`, "
    'then transcription_url = "http://127.0.0.1:8178/v1"; or `pip install pocketsphinx` '
    "for rough English transcription inside vaultseek"
)


class Transcriber(Protocol):
    engine: str
    """``server`` or ``pocketsphinx``."""

    def describe(self) -> dict[str, Any]:
        """What the privacy panel and the microphone button show: the engine and where the
        audio goes."""
        ...

    async def transcribe(self, audio: bytes, *, filename: str = "speech.wav", media_type: str = "audio/wav") -> str: ...


@dataclass
class ServerTranscriber:
    """An OpenAI-compatible ``/audio/transcriptions`` endpoint."""

    url: str
    model: str = "whisper-1"
    engine: str = "server"

    def __post_init__(self) -> None:
        self.transport = Transport(self.url, what="the transcription server")

    def describe(self) -> dict[str, Any]:
        return {"engine": self.engine, "url": self.transport.base_url, "model": self.model,
                "where": f"posted to the transcription server at {self.transport.base_url}, then dropped"}  # fmt: skip

    async def transcribe(self, audio: bytes, *, filename: str = "speech.wav", media_type: str = "audio/wav") -> str:
        check_audio(audio)
        try:
            answer = await self.transport.post_form(
                "/audio/transcriptions",
                fields={"model": self.model, "response_format": "json"},
                files={"file": (filename, audio, media_type)},
            )
        except ServerError as exc:
            raise TranscriptionError(
                f"the transcription server at {self.transport.base_url} refused the recording "
                f"(HTTP {exc.status}): {exc.message}",
                hint="check transcription_url (it ends in /v1) and the server's log; whisper.cpp's server "
                "reads WAV unless started with --convert",
            ) from None
        except LLMError as exc:  # down or unreachable
            raise TranscriptionError(exc.message, hint=f"start the transcription server; {SETUP_HINT}") from None
        text = answer.get("text") if isinstance(answer, dict) else None
        if not isinstance(text, str):
            raise TranscriptionError(
                f"the transcription server at {self.transport.base_url} answered without a text",
                hint="check that transcription_url points at an OpenAI-compatible /v1 address",
            )
        return text.strip()


class PocketsphinxTranscriber:
    """PocketSphinx in this process, with the US English model its wheel ships."""

    engine = "pocketsphinx"

    def __init__(self) -> None:
        self._decoder: Any = None

    def describe(self) -> dict[str, Any]:
        return {"engine": self.engine, "url": None, "model": "pocketsphinx en-us",
                "where": "transcribed inside vaultseek (pocketsphinx), never sent anywhere"}  # fmt: skip

    async def transcribe(self, audio: bytes, *, filename: str = "speech.wav", media_type: str = "audio/wav") -> str:
        check_audio(audio)
        samples, rate = pcm16_mono(audio)
        return await asyncio.to_thread(self._decode, samples, rate)

    def _decode(self, samples: bytes, rate: int) -> str:
        # Only when speech arrives: it loads a ~40 MB model.
        import pocketsphinx

        if self._decoder is None or self._decoder.config["samprate"] != rate:
            self._decoder = pocketsphinx.Decoder(samprate=rate, loglevel="FATAL")
        decoder = self._decoder
        decoder.start_utt()
        decoder.process_raw(samples, full_utt=True)
        decoder.end_utt()
        hypothesis = decoder.hyp()
        return hypothesis.hypstr.strip() if hypothesis is not None else ""


def check_audio(audio: bytes) -> None:
    if not audio:
        raise TranscriptionError("the recording is empty", hint="hold the microphone button a little longer")
    if len(audio) > MAX_AUDIO_BYTES:
        raise TranscriptionError(f"the recording is larger than {MAX_AUDIO_BYTES // (1024 * 1024)} MB",
                                 hint="record a shorter message")  # fmt: skip


def pcm16_mono(audio: bytes) -> tuple[bytes, int]:
    """The 16-bit samples and the rate of a PCM WAV recording, down-mixed to one channel (the
    first); :class:`TranscriptionError` for anything else."""
    try:
        with wave.open(io.BytesIO(audio)) as reader:
            channels, width, rate = reader.getnchannels(), reader.getsampwidth(), reader.getframerate()
            frames = reader.readframes(reader.getnframes())
    except (wave.Error, EOFError) as exc:
        raise TranscriptionError(f"the recording is not a PCM WAV file ({exc})",
                                 hint="in-process transcription reads 16-bit WAV, which the app's microphone button sends") from None  # fmt: skip
    if width != 2:
        raise TranscriptionError(f"the recording has {8 * width}-bit samples; 16-bit PCM is needed")
    if channels > 1:
        frames = b"".join(frames[i : i + 2] for i in range(0, len(frames), 2 * channels))
    return frames, rate


def pocketsphinx_installed() -> bool:
    from importlib.util import find_spec

    return find_spec("pocketsphinx") is not None


def create_transcriber(config: Config) -> Transcriber | None:
    """The transcriber the configuration and the installed packages allow: the server named
    by ``transcription_url``, else PocketSphinx when installed, else None (the microphone
    button then says how to set one up)."""
    if config.transcription_url:
        return ServerTranscriber(config.transcription_url, config.transcription_model)
    if pocketsphinx_installed():
        return PocketsphinxTranscriber()
    return None
