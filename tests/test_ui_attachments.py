"""Images, files and voice in the real chat page, in headless Chromium (Debian's, through
Playwright) at 1280 and 390 px: attach with the 📎 button (the browser's file chooser), see the
chips, ask, and the vision stand-in receives the image; a model that cannot see stops the
question before it is sent; and voice — ``espeak-ng`` speaks a sentence into a WAV file,
Chromium's fake microphone plays it, the 🎤 button records it, and the transcription stand-in
receives real speech as 16 kHz WAV and its text lands in the question box.

Screenshots go to docs/images/study/ (attach-1280.png, attach-390.png) and tests/artifacts/."""

from __future__ import annotations

import array
import io
import math
import os
import shutil
import subprocess
import time
import wave
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.support.docgen import text_pdf
from tests.support.standin_media import Transcription, VisionOllama

from study_fixtures import make_app, make_study_vault, missing

ROOT = Path(__file__).resolve().parents[1]
DOC_IMAGES = ROOT / "docs" / "images" / "study"
ARTIFACTS = Path(__file__).parent / "artifacts"
CHROMIUM = os.environ.get("VAULTSEEK_CHROMIUM", "/usr/bin/chromium")
SPOKEN = "what is the notice period for a tenancy"


@pytest.fixture(scope="module")
def speech_wav(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A sentence spoken by espeak-ng (16-bit PCM WAV), for Chromium's fake microphone."""
    espeak = shutil.which("espeak-ng")
    if espeak is None:
        missing("espeak-ng is not installed (apt-get install espeak-ng)")
    path = tmp_path_factory.mktemp("voice") / "question.wav"
    subprocess.run([str(espeak), "-s", "150", "-w", str(path), SPOKEN], check=True, capture_output=True)
    return path


@pytest.fixture(scope="module")
def browser(speech_wav: Path) -> Iterator[Any]:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        missing("playwright is not installed")
    if not Path(CHROMIUM).exists() and not shutil.which("chromium"):
        missing("chromium is not installed (apt-get install chromium)")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM, headless=True,
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                  "--use-fake-device-for-media-stream", "--use-fake-ui-for-media-stream",
                  f"--use-file-for-fake-audio-capture={speech_wav}"],
        )  # fmt: skip
        yield browser
        browser.close()


class Site:
    def __init__(self, url: str, ollama: VisionOllama, speech: Transcription | None) -> None:
        self.url = url
        self.ollama = ollama
        self.speech = speech


@pytest.fixture
def site(tmp_path: Path) -> Iterator[Site]:
    from vaultseek.web.server import BackgroundServer

    with VisionOllama() as ollama, Transcription(text=SPOKEN) as speech:
        app = make_app(make_study_vault(tmp_path), tmp_path / "i.db", ollama.url, llm_model="seer",
                       transcription_url=speech.url)  # fmt: skip
        try:
            with BackgroundServer(app) as server:
                yield Site(server.url, ollama, speech)
        finally:
            app.notebook.close()


def picture(path: Path) -> Path:
    from PIL import Image

    image = Image.new("RGB", (800, 600), (250, 250, 245))
    for y in range(0, 600, 60):
        image.paste((40, 110, 200), (0, y, 800, y + 20))
    exif = Image.Exif()
    exif[0x010F] = "SecretPhoneMaker"
    image.save(path, "JPEG", exif=exif.tobytes())
    return path


def open_chat(browser: Any, site: Site, width: int) -> Any:
    page = browser.new_page(viewport={"width": width, "height": 900 if width > 500 else 844})
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(site.url + "/#chat")
    page.locator(".attach-button").wait_for(timeout=15_000)
    page.locator(".mic-button[aria-disabled=false]").wait_for(timeout=15_000)
    page.errors = errors  # type: ignore[attr-defined]
    return page


def no_sideways_scroll(page: Any) -> bool:
    return bool(page.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1"))


@pytest.mark.parametrize("width", [1280, 390])
def test_attach_with_the_button_and_ask(browser: Any, site: Site, tmp_path: Path, width: int) -> None:
    page = open_chat(browser, site, width)
    image = picture(tmp_path / "whiteboard.jpg")
    pdf = text_pdf(tmp_path / "lease.pdf", ["The notice period of the lease at Elm Street is two months. " * 12])
    for path in (image, pdf):
        with page.expect_file_chooser() as chooser:
            page.click(".attach-button")
        chooser.value.set_files(str(path))
    page.locator(".attach-chip.image.ready").wait_for(timeout=15_000)
    page.locator(".attach-chip.document.ready").wait_for(timeout=30_000)
    assert "metadata removed" in page.locator(".attach-chip.image .attach-detail").inner_text()
    assert "this chat only" in page.locator(".attach-chip.document .attach-detail").inner_text()
    assert page.locator(".attach-chip.document .attach-library").is_visible()
    assert page.locator(".attach-thumb").evaluate("img => img.complete && img.naturalWidth > 0")
    page.fill("textarea[name=question]", "what does the whiteboard say about the notice period?")
    assert no_sideways_scroll(page)
    DOC_IMAGES.mkdir(parents=True, exist_ok=True)
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(DOC_IMAGES / f"attach-{width}.png"))
    page.click("button.ask")
    answer = page.locator(".msg.assistant").last
    answer.filter(has_text="I see 1 image").wait_for(timeout=30_000)
    assert page.locator(".attach-chip").count() == 0  # sent: the composer is empty again
    (seen,) = site.ollama.images[-1]
    assert seen[:3] == b"\xff\xd8\xff" and b"SecretPhoneMaker" not in seen
    chat = [body for path, body in site.ollama.requests if path == "/api/chat"][-1]
    system = next(m["content"] for m in chat["messages"] if m["role"] == "system")
    assert "lease.pdf" in system and "Elm Street" in system  # the PDF is a source of this question
    # Its source card names the file (not the attachment's id) and opens its passage.
    card = answer.locator("button.source", has_text="lease.pdf")
    assert "attachment:" not in card.inner_text()
    card.click()
    page.locator("#panel-body .passage").filter(has_text="Elm Street").wait_for(timeout=10_000)
    assert page.locator("#panel-title").inner_text() == "lease.pdf (attached)"
    page.click("#panel-close")
    assert no_sideways_scroll(page)
    page.screenshot(path=str(ARTIFACTS / f"attach-answer-{width}.png"), full_page=True)
    assert not page.errors  # type: ignore[attr-defined]


def test_a_model_that_cannot_see_is_stopped_before_sending(browser: Any, site: Site, tmp_path: Path) -> None:
    page = open_chat(browser, site, 1280)
    page.locator("select.model-select option[value='blind:latest']").wait_for(state="attached", timeout=15_000)
    page.select_option("select.model-select", "blind:latest")
    with page.expect_file_chooser() as chooser:
        page.click(".attach-button")
    chooser.value.set_files(str(picture(tmp_path / "p.jpg")))
    page.locator(".attach-chip.image.ready").wait_for(timeout=15_000)
    warning = page.locator(".attach-warning")
    warning.wait_for(timeout=5_000)
    assert "blind:latest cannot see images" in warning.inner_text()
    sent = len([p for p, _ in site.ollama.requests if p == "/api/chat"])
    page.fill("textarea[name=question]", "what is on this picture?")
    page.click("button.ask")
    page.locator(".toast.error").filter(has_text="cannot see images").wait_for(timeout=5_000)
    time.sleep(0.5)
    assert len([p for p, _ in site.ollama.requests if p == "/api/chat"]) == sent  # nothing left the app
    assert page.locator(".attach-chip.image").count() == 1  # kept, to choose another model
    page.select_option("select.model-select", "seer:latest")
    warning.wait_for(state="hidden", timeout=5_000)
    page.click("button.ask")
    page.locator(".msg.assistant").last.filter(has_text="I see 1 image").wait_for(timeout=30_000)
    page.screenshot(path=str(ARTIFACTS / "attach-no-vision.png"))


def rms(samples: array.array[int]) -> float:
    return math.sqrt(sum(s * s for s in samples) / max(1, len(samples)))


def test_voice_is_recorded_and_transcribed_on_this_machine(browser: Any, site: Site, speech_wav: Path) -> None:
    page = open_chat(browser, site, 390)
    assert site.speech is not None
    page.click(".mic-button")
    page.locator(".mic-button[aria-pressed=true]").wait_for(timeout=10_000)
    page.locator(".attach-voice").filter(has_text="Recording").wait_for(timeout=5_000)
    page.screenshot(path=str(ARTIFACTS / "attach-recording-390.png"))
    time.sleep(3)
    page.click(".mic-button")
    assert site.speech.arrived.wait(30), "the transcription server never received the recording"
    question = page.locator("textarea[name=question]")
    page.wait_for_function("() => document.querySelector('textarea[name=question]').value.length > 0", timeout=15_000)
    assert question.input_value() == SPOKEN
    (got,) = site.speech.received
    assert got["content_type"] == "audio/wav"
    with wave.open(io.BytesIO(got["audio"])) as reader:
        assert (reader.getnchannels(), reader.getsampwidth(), reader.getframerate()) == (1, 2, 16000)
        seconds = reader.getnframes() / reader.getframerate()
        samples = array.array("h", reader.readframes(reader.getnframes()))
    assert 2.0 < seconds < 8.0, seconds
    with wave.open(str(speech_wav)) as reader:
        spoken = array.array("h", reader.readframes(reader.getnframes()))
    # Speech, not the silence (or beep) of a missing microphone: as loud as espeak's own output
    # within a wide margin, with quiet gaps between words.
    assert rms(samples) > 0.2 * rms(spoken), (rms(samples), rms(spoken))
    windows = [rms(samples[i:i + 1600]) for i in range(0, len(samples) - 1600, 1600)]
    assert min(windows) < 0.2 * max(windows)
    assert not page.locator(".mic-button[aria-pressed=true]").count()
    assert page.locator("button.ask").is_enabled()
    assert no_sideways_scroll(page)
    assert not page.errors  # type: ignore[attr-defined]


def test_without_a_transcription_server_the_microphone_explains_the_setup(browser: Any, tmp_path: Path) -> None:
    from vaultseek.llm import speech
    from vaultseek.web.server import BackgroundServer

    if speech.pocketsphinx_installed():
        pytest.skip("pocketsphinx is installed: voice input works in-process without a server")
    with VisionOllama() as ollama:
        app = make_app(make_study_vault(tmp_path), tmp_path / "i.db", ollama.url, llm_model="seer")
        try:
            with BackgroundServer(app) as server:
                page = browser.new_page(viewport={"width": 390, "height": 844})
                page.goto(server.url + "/#chat")
                mic = page.locator(".mic-button[aria-disabled=true]")
                mic.wait_for(timeout=15_000)
                assert "transcription_url" in (mic.get_attribute("title") or "")
                mic.click(force=True)  # aria-disabled: Playwright would wait for it to be enabled; a user can click it
                hint = page.locator(".attach-voice")
                hint.filter(has_text="Voice input is off").wait_for(timeout=5_000)
                assert "whisper" in hint.inner_text()
                assert no_sideways_scroll(page)
                page.screenshot(path=str(ARTIFACTS / "attach-no-voice-390.png"))
        finally:
            app.notebook.close()


def test_add_an_attached_file_to_the_knowledge_base(browser: Any, site: Site, tmp_path: Path) -> None:
    page = open_chat(browser, site, 390)
    first = text_pdf(tmp_path / "one" / "recipe.pdf", ["Knead the dough for ten minutes, then let it rise for an hour. " * 6])
    second = text_pdf(tmp_path / "two" / "recipe.pdf", ["Bake the loaf at 230 degrees for thirty-five minutes. " * 6])
    page.set_input_files(".attach-tools input[type=file]", str(first))
    chip = page.locator(".attach-chip.document.ready")
    chip.wait_for(timeout=30_000)
    chip.locator(".attach-library").click()
    chip.locator(".attach-filed").wait_for(timeout=15_000)
    page.locator(".toast").filter(has_text="uploads/recipe.pdf").wait_for(timeout=5_000)
    page.locator(".attach-remove").click()
    # The same name again, other bytes: the chip asks, and "Keep both" stores it beside.
    page.set_input_files(".attach-tools input[type=file]", str(second))
    chip.wait_for(timeout=30_000)
    chip.locator(".attach-library").click()
    chip.locator(".attach-conflict").wait_for(timeout=15_000)
    assert no_sideways_scroll(page)
    page.screenshot(path=str(ARTIFACTS / "attach-conflict-390.png"))
    chip.locator(".attach-conflict button", has_text="Keep both").click()
    chip.locator(".attach-filed").wait_for(timeout=15_000)
    page.locator(".toast").filter(has_text="uploads/recipe (2).pdf").wait_for(timeout=5_000)
    assert not page.errors  # type: ignore[attr-defined]
