"""Speech to text on this machine, for the chat's microphone button.

Two ways, chosen by the configuration and what is installed (:func:`create_transcriber`):

* ``transcription_url`` names an OpenAI-compatible server (whisper.cpp's ``whisper-server``
  with ``--inference-path /v1/audio/transcriptions``, faster-whisper servers, LocalAI, …):
  the recording is posted to ``{url}/audio/transcriptions`` as ``multipart/form-data``
  (``file``, ``model``, ``response_format=json``) and the answer's ``text`` is the
  transcript.
* Otherwise, when the ``pocketsphinx`` package is installed, it transcribes in this process
  with the US English model its wheel ships (no download, no server; rough accuracy). It
  reads 16-bit PCM WAV, which the browser sends, recorded at :data:`MIN_RATE` to
  :data:`MAX_RATE` samples a second (below 16 kHz it is resampled to 16 kHz, the model's
  rate); anything else is refused (:class:`RecordingRefusedError`, HTTP 400). One decoder
  serves every request, one recording at a time.

Never the browser's own speech recognition: Chromium's sends the audio to a cloud service.
"""

from __future__ import annotations

import asyncio
import io
import sys
import threading
import wave
from array import array
from dataclasses import dataclass
from typing import Any, Protocol

from ..config import Config
from ..errors import LLMError, TranscriptionError
from .transport import ServerError, Transport

MAX_AUDIO_BYTES = 25 * 1024 * 1024
"""The largest recording accepted (OpenAI's own limit; ~13 minutes of 16 kHz WAV)."""

MIN_RATE = 8_000
"""The lowest sample rate transcribed (telephone quality)."""
MAX_RATE = 192_000
"""The highest sample rate transcribed (studio recorders)."""
MODEL_RATE = 16_000
"""The rate the in-process model was trained at; slower recordings are resampled to it."""

SETUP_HINT = (
    "run a speech-to-text server on this machine and name it in the config, e.g. whisper.cpp: "
    "`whisper-server -m ggml-base.en.bin --port 8178 --inference-path /v1/audio/transcriptions`, "
    'then transcription_url = "http://127.0.0.1:8178/v1"; or `pip install pocketsphinx` '
    "for rough English transcription inside vaultseek"
)


class RecordingRefusedError(TranscriptionError):
    """The recording itself cannot be transcribed (not 16-bit PCM WAV, a sample rate no
    microphone records at): the client's mistake, HTTP 400."""


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
        self._lock = threading.Lock()  # a decoder holds one utterance at a time

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

        if rate < MODEL_RATE:
            samples, rate = upsampled(samples, rate, MODEL_RATE), MODEL_RATE
        with self._lock:
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
        raise RecordingRefusedError(f"the recording is not a PCM WAV file ({exc})",
                                    hint="in-process transcription reads 16-bit WAV, which the app's microphone button sends") from None  # fmt: skip
    if width != 2:
        raise RecordingRefusedError(f"the recording has {8 * width}-bit samples; 16-bit PCM is needed")
    if not MIN_RATE <= rate <= MAX_RATE:
        raise RecordingRefusedError(f"the recording says it has {rate:,} samples a second; "
                                    f"{MIN_RATE:,} to {MAX_RATE:,} are transcribed",
                                    hint="record again with the app's microphone button (16 kHz WAV)")  # fmt: skip
    if channels > 1:
        frames = b"".join(frames[i : i + 2] for i in range(0, len(frames), 2 * channels))
    return frames, rate


def upsampled(samples: bytes, rate: int, target: int) -> bytes:
    """16-bit mono ``samples`` at ``rate`` resampled to the higher ``target`` rate by linear
    interpolation (the recording holds nothing above half its rate, so no filter is needed)."""
    source = array("h")
    source.frombytes(samples[: len(samples) // 2 * 2])
    if sys.byteorder == "big":
        source.byteswap()  # WAV samples are little-endian
    if len(source) < 2:
        return samples
    last = len(source) - 1
    out = array("h", bytes(2 * (len(source) * target // rate)))
    for i in range(len(out)):
        position = i * rate / target
        left = min(int(position), last)
        right = min(left + 1, last)
        fraction = position - left
        out[i] = round(source[left] + (source[right] - source[left]) * fraction)
    if sys.byteorder == "big":
        out.byteswap()
    return out.tobytes()


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
