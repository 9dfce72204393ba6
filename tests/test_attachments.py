"""Images, files and voice in the chat, through the real API against stand-in servers over real
HTTP that speak the real wire formats (tests/support/standin_media.py): an image loses its
EXIF and reaches Ollama as ``images`` and an OpenAI-compatible server as ``image_url`` parts;
a model that cannot see is refused before anything is sent; limits, wrong types, unknown and
foreign ids, servers that are down; a PDF attached is cited in its conversation only and can
be added to the knowledge base; speech goes to the configured transcription server."""

from __future__ import annotations

import io
import json
import time
import wave
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.support.docgen import text_pdf
from tests.support.standin_media import Transcription, VisionOllama, VisionOpenAI, image_of

from study_fixtures import envelopes, make_app, make_study_vault

PIL = pytest.importorskip("PIL", reason="Pillow comes with the documents extra")  # the image cleaner needs it


def photo(*, size: tuple[int, int] = (640, 480), orientation: int = 1) -> bytes:
    """A JPEG as a phone writes it: EXIF with the camera, a GPS position and an orientation."""
    from PIL import Image

    image = Image.new("RGB", size, (30, 120, 200))
    for x in range(0, size[0], 40):  # some structure, so it is not one flat colour
        image.paste((240, 200, 20), (x, 0, x + 10, size[1]))
    exif = Image.Exif()
    exif[0x010F] = "SecretPhoneMaker"  # Make
    exif[0x0110] = "Model X Private"  # Model
    exif[0x0112] = orientation
    exif[0x8825] = {1: "N", 2: (52.0, 31.0, 12.0), 3: "E", 4: (13.0, 24.0, 36.0)}  # GPS
    out = io.BytesIO()
    image.save(out, "JPEG", exif=exif.tobytes(), quality=92)
    data = out.getvalue()
    assert b"SecretPhoneMaker" in data
    return data


def png_with_metadata() -> bytes:
    from PIL import Image, PngImagePlugin

    info = PngImagePlugin.PngInfo()
    info.add_text("Author", "Private Person")
    info.add_text("Location", "Home address 12")
    out = io.BytesIO()
    Image.new("RGBA", (64, 48), (255, 0, 0, 128)).save(out, "PNG", pnginfo=info)
    return out.getvalue()


def has_exif(data: bytes) -> bool:
    from PIL import Image

    with Image.open(io.BytesIO(data)) as image:
        return bool(image.getexif()) or "exif" in image.info


def upload(client: Any, name: str, data: bytes, media_type: str = "application/octet-stream", **fields: str) -> Any:
    return client.post("/api/attachments", files={"file": (name, data, media_type)}, data=fields)


def ask(client: Any, question: str, **body: Any) -> list[dict[str, Any]]:
    with client.stream("POST", "/api/chat", json={"question": question, **body}) as response:
        assert response.status_code == 200, response.read()
        return envelopes(response.iter_lines())


def answer_of(items: list[dict[str, Any]]) -> str:
    return "".join(i["data"]["text"] for i in items if i["type"] == "text")


def error_of(items: list[dict[str, Any]]) -> dict[str, Any] | None:
    return next((i["data"] for i in items if i["type"] == "error"), None)


def done_of(items: list[dict[str, Any]]) -> dict[str, Any]:
    return next(i["data"] for i in items if i["type"] == "done")


def citations_of(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    for item in items:
        if item["type"] == "metadata":
            found = item["data"]["citations"]
    return found


@pytest.fixture
def ollama() -> Iterator[VisionOllama]:
    with VisionOllama() as server:
        yield server


@pytest.fixture
def media_app(tmp_path: Path, ollama: VisionOllama) -> Iterator[Any]:
    app = make_app(make_study_vault(tmp_path), tmp_path / "index.db", ollama.url, llm_model="seer")
    yield app
    app.notebook.close()


@pytest.fixture
def client(media_app: Any) -> Iterator[Any]:
    from starlette.testclient import TestClient

    with TestClient(media_app, base_url="http://127.0.0.1") as test_client:
        yield test_client


def test_an_image_loses_its_exif_and_reaches_ollama_as_images(client: Any, ollama: VisionOllama, media_app: Any) -> None:
    original = photo(size=(3000, 1000), orientation=6)  # a phone photo taken sideways
    response = upload(client, "holiday.jpg", original, "image/jpeg")
    assert response.status_code == 201, response.text
    record = response.json()
    assert record["kind"] == "image" and record["name"] == "holiday.jpg" and record["media_type"] == "image/jpeg"
    assert (record["width"], record["height"]) == (683, 2048)  # turned upright, long side scaled to 2048
    stored = client.get(f"/api/attachments/{record['id']}")
    assert stored.status_code == 200 and stored.headers["content-type"] == "image/jpeg"
    assert stored.headers["x-content-type-options"] == "nosniff"
    assert b"SecretPhoneMaker" not in stored.content and b"Model X Private" not in stored.content
    assert not has_exif(stored.content)
    # Kept in the study database, which only this user can read.
    db = media_app.notebook.store.path
    assert db.stat().st_mode & 0o077 == 0

    items = ask(client, "what is in this picture?", attachments=[record["id"]])
    assert error_of(items) is None, error_of(items)
    assert answer_of(items).startswith("I see 1 image")
    assert ollama.images[-1] == [stored.content]  # exactly the cleaned bytes, base64 on the message
    chat = [body for path, body in ollama.requests if path == "/api/chat"][-1]
    user = [m for m in chat["messages"] if m["role"] == "user"][-1]
    assert user["content"] == "what is in this picture?" and len(user["images"]) == 1
    assert all("images" not in m for m in chat["messages"] if m["role"] != "user")
    # The attachment now belongs to that conversation.
    cid = done_of(items)["conversation_id"]
    assert media_app.notebook.store.find_conversation(cid) is not None
    from vaultseek.study import attachments

    assert attachments.get(media_app.notebook.store, record["id"])["conversation_id"] == cid


def test_an_openai_compatible_server_gets_image_url_parts(tmp_path: Path) -> None:
    from starlette.testclient import TestClient

    with VisionOpenAI() as server:
        app = make_app(make_study_vault(tmp_path), tmp_path / "i.db", server.url, llm_backend="openai",
                       llm_model="seer-gguf", llm_vision=True)  # fmt: skip
        try:
            with TestClient(app, base_url="http://127.0.0.1") as client:
                record = upload(client, "chart.png", png_with_metadata(), "image/png").json()
                assert record["media_type"] == "image/png"
                stored = client.get(f"/api/attachments/{record['id']}").content
                assert b"Private Person" not in stored and b"Home address" not in stored
                items = ask(client, "describe the chart", attachments=[record["id"]])
                assert error_of(items) is None, error_of(items)
                assert answer_of(items).startswith("I see 1 image")
                (part,) = server.parts[-1]
                assert image_of(part) == ("image/png", stored)
                chat = [body for path, body in server.requests if path == "/v1/chat/completions"][-1]
                user = [m for m in chat["messages"] if m["role"] == "user"][-1]
                assert user["content"][0] == {"type": "text", "text": "describe the chart"}
                models = client.get("/api/models").json()
                assert models["current"] == "seer-gguf" and models["models"] == [{"name": "seer-gguf", "vision": True}]
        finally:
            app.notebook.close()


def test_a_model_that_cannot_see_is_refused_before_anything_is_sent(client: Any, ollama: VisionOllama) -> None:
    models = client.get("/api/models").json()
    assert models["current"] == "seer" and models["backend"] == "ollama"
    assert {m["name"]: m["vision"] for m in models["models"]} == {"seer:latest": True, "blind:latest": False, "old:latest": None}
    record = upload(client, "p.jpg", photo(), "image/jpeg").json()
    before = len([p for p, _ in ollama.requests if p == "/api/chat"])
    items = ask(client, "what is this?", attachments=[record["id"]], model="blind")
    error = error_of(items)
    assert error is not None and "cannot see images" in error["message"] and "blind" in error["message"]
    assert "vision model" in error["hint"]
    assert len([p for p, _ in ollama.requests if p == "/api/chat"]) == before  # nothing was sent
    # A server that does not say (Ollama before 0.6.4) gets the images and answers for itself.
    items = ask(client, "and now?", attachments=[upload(client, "q.jpg", photo(), "image/jpeg").json()["id"]], model="old")
    assert error_of(items) is None and answer_of(items).startswith("I see 1 image")
    # Without images, the blind model answers as usual.
    assert error_of(ask(client, "what is the notice period for a tenancy?", model="blind")) is None


def test_llm_vision_false_refuses_images_for_an_openai_compatible_server(tmp_path: Path) -> None:
    from starlette.testclient import TestClient

    with VisionOpenAI() as server:
        app = make_app(make_study_vault(tmp_path), tmp_path / "i.db", server.url, llm_backend="openai",
                       llm_model="seer-gguf", llm_vision=False)  # fmt: skip
        try:
            with TestClient(app, base_url="http://127.0.0.1") as client:
                assert client.get("/api/models").json()["models"] == [{"name": "seer-gguf", "vision": False}]
                record = upload(client, "p.jpg", photo(), "image/jpeg").json()
                error = error_of(ask(client, "what is this?", attachments=[record["id"]]))
                assert error is not None and "cannot see images" in error["message"] and "llm_vision" in error["message"]
                assert not [p for p, _ in server.requests if p == "/v1/chat/completions"]
        finally:
            app.notebook.close()


def test_limits_and_wrong_types_are_refused_with_clear_errors(client: Any) -> None:
    from vaultseek.study.attachments import MAX_IMAGE_BYTES

    big = upload(client, "huge.png", b"\0" * (MAX_IMAGE_BYTES + 1), "image/png")
    assert big.status_code == 413 and "20 MB" in big.json()["error"]["message"]
    wrong = upload(client, "setup.exe", b"MZ\x90\x00", "application/octet-stream")
    assert wrong.status_code == 415
    assert "not a type the chat reads" in wrong.json()["error"]["message"] and "PDF" in wrong.json()["error"]["hint"]
    fake = upload(client, "fake.png", b"this is no image at all", "image/png")
    assert fake.status_code == 415 and "not an image the app can read" in fake.json()["error"]["message"]
    empty = upload(client, "empty.txt", b"", "text/plain")
    assert empty.status_code == 400 and "empty" in empty.json()["error"]["message"]
    unreadable = upload(client, "broken.pdf", b"%PDF-1.4 not really", "application/pdf")
    assert unreadable.status_code == 415 and "cannot be read" in unreadable.json()["error"]["message"]
    two = client.post("/api/attachments", files=[("file", ("a.txt", b"one", "text/plain")), ("file", ("b.txt", b"two", "text/plain"))])
    assert two.status_code == 400 and "one file" in two.json()["error"]["message"]
    none = client.post("/api/attachments", data={"conversation_id": "x"}, files={"other": (None, "y")})
    assert none.status_code == 400
    assert client.get("/api/attachments/0123456789abcdef").status_code == 404
    hostile = upload(client, "../../etc/<img src=x onerror=alert(1)>.txt", b"plain words about tides\n", "text/plain")
    assert hostile.status_code == 201 and hostile.json()["name"] == "<img src=x onerror=alert(1)>.txt"  # no folders
    served = client.get(f"/api/attachments/{hostile.json()['id']}")
    assert served.headers["content-disposition"].startswith("attachment; filename*=UTF-8''%3Cimg")
    assert "sandbox" in served.headers["content-security-policy"]
    limits = client.get("/api/attachments").json()
    assert ".png" in limits["images"] and ".pdf" in limits["documents"] and limits["max_image_bytes"] == MAX_IMAGE_BYTES


def test_unknown_and_foreign_ids_are_refused(client: Any, media_app: Any, ollama: VisionOllama) -> None:
    from vaultseek.errors import AttachmentNotFoundError
    from vaultseek.study import attachments

    error = error_of(ask(client, "what is this?", attachments=["0123456789abcdef"]))
    assert error is not None and "no attachment 0123456789abcdef" in error["message"]
    record = upload(client, "p.jpg", photo(), "image/jpeg").json()
    first = ask(client, "look at this", attachments=[record["id"]])
    assert error_of(first) is None
    # Another conversation cannot use (or probe) it: the same answer as for an unknown id.
    other = error_of(ask(client, "and this?", attachments=[record["id"]]))
    assert other is not None and f"no attachment {record['id']}" in other["message"]
    store = media_app.notebook.store
    other_cid = store.create_conversation("x", {})
    with pytest.raises(AttachmentNotFoundError):
        attachments.resolve(store, other_cid, [record["id"]])
    # Sent once, it stays with its conversation (a chip cannot delete it) and goes with it.
    assert client.delete(f"/api/attachments/{record['id']}").status_code == 400
    cid = done_of(first)["conversation_id"]
    assert client.delete(f"/api/conversations/{cid}").status_code == 200
    assert client.get(f"/api/attachments/{record['id']}").status_code == 404
    # Not yet sent, it can be removed.
    unsent = upload(client, "r.jpg", photo(), "image/jpeg").json()
    assert client.delete(f"/api/attachments/{unsent['id']}").json() == {"deleted": unsent["id"]}
    assert client.get(f"/api/attachments/{unsent['id']}").status_code == 404


def test_a_server_that_is_down_is_said_plainly(tmp_path: Path) -> None:
    from starlette.testclient import TestClient

    server = VisionOllama()  # never started: nothing listens on its port
    server.server.server_close()
    app = make_app(make_study_vault(tmp_path), tmp_path / "i.db", server.url, llm_model="seer",
                   transcription_url=server.url + "/v1")  # fmt: skip
    try:
        with TestClient(app, base_url="http://127.0.0.1") as client:
            record = upload(client, "p.jpg", photo(), "image/jpeg")
            assert record.status_code == 201  # attaching needs no model
            error = error_of(ask(client, "what is this?", attachments=[record.json()["id"]]))
            assert error is not None and error["code"] == "llm_unavailable" and "refused the connection" in error["message"]
            models = client.get("/api/models")
            assert models.status_code == 200
            assert models.json()["models"] == [{"name": "seer", "vision": None, "installed": False}]
            assert "refused the connection" in models.json()["error"]["message"]
            spoken = client.post("/api/transcribe", content=wav_bytes(), headers={"content-type": "audio/wav"})
            assert spoken.status_code == 502
            body = spoken.json()["error"]
            assert body["code"] == "transcription_failed" and "the transcription server" in body["message"]
            assert "whisper" in body["hint"]
    finally:
        app.notebook.close()


def test_a_pdf_attached_is_a_source_of_its_conversation_only(client: Any, tmp_path: Path, ollama: VisionOllama) -> None:
    pdf = text_pdf(tmp_path / "reactor.pdf", [  # pages long enough to be chunks of their own
        "Introduction. This manual describes the Zorblax research site, its staff and its visitors. " * 14,
        "Cooling. The Zorblax reactor coolant is heavy water, pumped at forty litres a second. " * 14,
    ])  # fmt: skip
    response = upload(client, "reactor.pdf", pdf.read_bytes(), "application/pdf")
    assert response.status_code == 201, response.text
    record = response.json()
    assert record["kind"] == "document" and record["chunks"] >= 1 and record["pages"] == 2
    items = ask(client, "what is the Zorblax reactor coolant?", attachments=[record["id"]])
    assert error_of(items) is None, error_of(items)
    cited = citations_of(items)
    attached = [c for c in cited if c["path"].startswith("attachment:")]
    assert attached, cited
    assert attached[0]["path"] == f"attachment:{record['id']}/reactor.pdf"
    assert attached[0]["n"] == 1 and attached[0]["page"] == 2 and "heavy water" in attached[0]["snippet"]
    assert "[1] (" in answer_of(items) and "reactor.pdf" in answer_of(items)  # the model read it as source 1
    chunks = client.get(f"/api/attachments/{record['id']}/chunks").json()
    assert chunks["path"] == attached[0]["path"]
    assert any(c["id"] == attached[0]["chunk_id"] and c["label"] == "p. 2" for c in chunks["chunks"])
    # Another conversation does not see it, and neither does the knowledge base.
    other = ask(client, "what is the Zorblax reactor coolant?")
    assert not [c for c in citations_of(other) if "reactor" in c["path"]]
    found = client.post("/api/search", json={"query": "Zorblax reactor coolant"}).json()
    assert not [r for r in found["results"] if "reactor" in r["path"]]
    # The same conversation asks again without re-attaching: the passage is not silently kept.
    cid = done_of(items)["conversation_id"]
    assert citations_of(ask(client, "and the pumping rate?", conversation_id=cid, attachments=[record["id"]]))


def test_add_to_library_files_the_document_through_the_upload_path(client: Any, media_app: Any, tmp_path: Path) -> None:
    pdf = text_pdf(tmp_path / "kiwi.pdf", ["Kiwis ripen in the orchard of Mrs Ramsbottom in late autumn."])
    record = upload(client, "kiwi.pdf", pdf.read_bytes(), "application/pdf").json()
    filed = client.post(f"/api/attachments/{record['id']}/add-to-library", json={"category": "fruit"})
    assert filed.status_code == 202, filed.text
    assert filed.json() == {"path": "uploads/kiwi.pdf", "status": "queued"}
    vault = media_app.notebook.config.vault
    assert (vault / "uploads" / "kiwi.pdf").read_bytes() == pdf.read_bytes()
    assert media_app.notebook.kb.ingest.idle.wait(60)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        found = client.post("/api/search", json={"query": "Ramsbottom orchard kiwis"}).json()["results"]
        if any(r["path"] == "uploads/kiwi.pdf" for r in found):
            break
        time.sleep(0.2)
    else:
        raise AssertionError("the added document was never indexed")
    image = upload(client, "p.jpg", photo(), "image/jpeg").json()
    refused = client.post(f"/api/attachments/{image['id']}/add-to-library")
    assert refused.status_code == 400 and "only documents" in refused.json()["error"]["message"]
    # The same bytes again: the knowledge base has them, nothing is stored twice.
    again = upload(client, "kiwi copy.pdf", pdf.read_bytes(), "application/pdf").json()
    same = client.post(f"/api/attachments/{again['id']}/add-to-library")
    assert same.status_code == 200 and same.json() == {"path": None, "status": "duplicate", "duplicate_of": "uploads/kiwi.pdf"}
    # Another file under a name the knowledge base has: asked, then kept beside it.
    other = text_pdf(tmp_path / "kiwi2.pdf", ["Kiwis keep for weeks in a cold cellar, wrapped in paper."])
    renamed = upload(client, "kiwi.pdf", other.read_bytes(), "application/pdf").json()
    taken = client.post(f"/api/attachments/{renamed['id']}/add-to-library")
    assert taken.status_code == 409 and taken.json()["conflict"]["existing"] == "uploads/kiwi.pdf"
    both = client.post(f"/api/attachments/{renamed['id']}/add-to-library", json={"on_conflict": "keep_both"})
    assert both.status_code == 202 and both.json() == {"path": "uploads/kiwi (2).pdf", "status": "queued"}
    assert (vault / "uploads" / "kiwi.pdf").read_bytes() == pdf.read_bytes()


def wav_bytes(seconds: float = 0.5, rate: int = 16000) -> bytes:
    out = io.BytesIO()
    with wave.open(out, "wb") as writer:
        writer.setnchannels(1)
        writer.setsampwidth(2)
        writer.setframerate(rate)
        writer.writeframes(b"\x10\x00\xf0\xff" * int(seconds * rate / 2))
    return out.getvalue()


def test_speech_is_sent_to_the_configured_transcription_server(tmp_path: Path, ollama: VisionOllama) -> None:
    from starlette.testclient import TestClient

    with Transcription(text="how long is the notice period") as speech:
        app = make_app(make_study_vault(tmp_path), tmp_path / "i.db", ollama.url, llm_model="seer",
                       transcription_url=speech.url, transcription_model="base.en")  # fmt: skip
        try:
            with TestClient(app, base_url="http://127.0.0.1") as client:
                status = client.get("/api/transcribe").json()
                assert status["available"] and status["engine"] == "server" and status["url"] == speech.url
                audio = wav_bytes()
                answer = client.post("/api/transcribe", content=audio, headers={"content-type": "audio/wav"})
                assert answer.status_code == 200, answer.text
                assert answer.json() == {"text": "how long is the notice period", "engine": "server"}
                (got,) = speech.received
                assert got["audio"] == audio and got["content_type"] == "audio/wav" and got["filename"] == "speech.wav"
                assert got["fields"] == {"model": "base.en", "response_format": "json"}
                refused = client.post("/api/transcribe", content=b"<html>", headers={"content-type": "text/html"})
                assert refused.status_code == 415
                privacy = client.get("/api/privacy").json()
                assert privacy["media"]["transcription"]["engine"] == "server"
                assert speech.url in privacy["media"]["transcription"]["where"]
                assert "EXIF" in privacy["media"]["images"] and ollama.url in privacy["media"]["images"]
                assert "never" in privacy["media"]["audio"]
        finally:
            app.notebook.close()


def test_without_a_transcription_server_the_microphone_says_how_to_set_one_up(client: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from vaultseek.llm import speech

    if speech.pocketsphinx_installed():  # then speech is transcribed in-process instead
        monkeypatch.setattr(speech, "pocketsphinx_installed", lambda: False)
        state = client.app.app.state  # the Starlette app behind its guard
        if hasattr(state, "transcriber"):
            del state.transcriber
    status = client.get("/api/transcribe").json()
    assert status["available"] is False and "transcription_url" in status["hint"] and "whisper" in status["hint"]
    refused = client.post("/api/transcribe", content=wav_bytes(), headers={"content-type": "audio/wav"})
    assert refused.status_code == 503
    assert refused.json()["error"]["code"] == "transcription_unavailable"
    privacy = client.get("/api/privacy").json()
    assert privacy["media"]["transcription"]["engine"] is None and "off" in privacy["media"]["transcription"]["where"]


def test_markdown_csv_and_html_files_are_read_by_the_indexing_readers(client: Any) -> None:
    note = upload(client, "plan.md", b"# Plan\n\n## Budget\n\nThe budget for the garden is 400 euros.\n", "text/markdown")
    assert note.status_code == 201 and note.json()["chunks"] >= 1
    table = upload(client, "prices.csv", b"fruit,price\nkiwi,3\nmango,5\n", "text/csv")
    assert table.status_code == 201 and table.json()["chunks"] >= 1
    page = upload(client, "page.html", b"<html><head><title>Tides</title></head><body><article><p>"
                  + b"The tide at the harbour turns every six hours and twelve minutes, more or less. " * 5
                  + b"</p></article></body></html>", "text/html")  # fmt: skip
    assert page.status_code == 201, page.text
    secret = upload(client, "keys.txt", b"The deploy key is AKIAIOSFODNN7EXAMPLE for the bucket.\n", "text/plain")
    assert secret.status_code == 201
    chunks = client.get(f"/api/attachments/{secret.json()['id']}/chunks").json()["chunks"]
    assert "AKIAIOSFODNN7EXAMPLE" not in json.dumps(chunks)  # scrubbed like indexed text


def test_pocketsphinx_transcribes_speech_in_process_when_installed(tmp_path: Path, ollama: VisionOllama) -> None:
    """The optional in-process path: no server configured, the ``pocketsphinx`` package
    installed (its wheel ships a US English model). Speech comes from espeak-ng."""
    import shutil
    import subprocess

    from starlette.testclient import TestClient

    pytest.importorskip("pocketsphinx", reason="the optional in-process transcriber is not installed")
    espeak = shutil.which("espeak-ng")
    if espeak is None:
        pytest.skip("espeak-ng is not installed (apt-get install espeak-ng)")
    spoken = tmp_path / "spoken.wav"
    subprocess.run([espeak, "-s", "140", "-w", str(spoken), "what is the notice period for a tenancy"], check=True)
    app = make_app(make_study_vault(tmp_path), tmp_path / "i.db", ollama.url, llm_model="seer")
    try:
        with TestClient(app, base_url="http://127.0.0.1") as client:
            status = client.get("/api/transcribe").json()
            assert status["available"] and status["engine"] == "pocketsphinx" and status["url"] is None
            answer = client.post("/api/transcribe", content=spoken.read_bytes(), headers={"content-type": "audio/wav"})
            assert answer.status_code == 200, answer.text
            words = answer.json()["text"].split()
            assert len(words) >= 3 and answer.json()["engine"] == "pocketsphinx"  # rough English, but words
            assert "inside vaultseek" in client.get("/api/privacy").json()["media"]["transcription"]["where"]
            webm = client.post("/api/transcribe", content=b"\x1aE\xdf\xa3 not wav", headers={"content-type": "audio/webm"})
            assert webm.status_code == 400 and "WAV" in webm.json()["error"]["message"]
    finally:
        app.notebook.close()
