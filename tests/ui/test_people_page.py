"""The dashboard's people page: the household listed to any session; a person's own facts
(private ones included) to an admin's session only, never to a device token's; an admin's
session learns a person's voice from uploaded recordings, and forgets it."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest
from fastapi.testclient import TestClient

from lobug.app import create_app
from lobug.audio import STT_RATE, encode_wav
from lobug.backends import Backends
from lobug.config import Settings
from lobug.store.household import PRIVATE
from lobug.store.models import NewFact
from tests.fakes import FakeEmbedder
from tests.speakers.voices import voice
from tests.ui.test_pages import ADMIN, DEVICE, LOOPBACK, sign_in


@pytest.fixture
def guarded(settings: Settings, backends: Backends) -> Iterator[TestClient]:
    app = create_app(
        settings.with_overrides(admin_tokens=(ADMIN,), device_tokens=(DEVICE,)), backends
    )
    with TestClient(app, base_url=LOOPBACK, follow_redirects=False) as client:
        yield client


def test_a_persons_facts_are_shown_to_an_admin_only(
    guarded: TestClient, fake_embedder: FakeEmbedder
) -> None:
    store = guarded.app.state.services.store  # type: ignore[attr-defined]
    store.ensure_agent("lobug")
    jordan = store.add_person("lobug", "Jordan", actor="test").id
    store.set_device_person("lobug", "kitchen", jordan, actor="test")
    secret = "Jordan's locker code is 4417"
    fact = NewFact(secret, owner_person_id=jordan, scope=PRIVATE)
    store.add_fact("lobug", fact, fake_embedder.embed(secret))

    sign_in(guarded, DEVICE)
    page = guarded.get(f"/ui/people?agent=lobug&person={jordan}").text
    assert "Jordan" in page and "kitchen" in page and "4417" not in page
    sign_in(guarded, ADMIN)
    page = guarded.get(f"/ui/people?agent=lobug&person={jordan}").text
    assert "4417" in page and "(private)" in page
    assert guarded.get("/ui/people?agent=lobug&person=99").status_code == 200


def wav_of(name: str) -> bytes:
    return encode_wav((voice(name) * 32767).astype(np.int16), STT_RATE)


def upload(client: TestClient, person: int, csrf: str, clips: tuple[str, ...]) -> str:
    """The People page's voice form, sent as a browser sends it; the page it leads back to."""
    files = [("audio", (f"{clip}.wav", wav_of(clip), "audio/wav")) for clip in clips]
    data = {"agent": "lobug", "csrf": csrf}
    sent = client.post(f"/ui/people/{person}/voice", data=data, files=files)
    assert sent.status_code == 303, sent.text
    return client.get(sent.headers["location"]).text


@pytest.mark.models
def test_an_admin_uploads_a_persons_voice_and_forgets_it(
    settings: Settings, backends: Backends
) -> None:
    """Through the dashboard's forms, with the real speaker model: the voice is learnt by the
    REST API's own call (its refusals said as the page's note), then forgotten; a device
    token's session may do neither."""
    overrides = {"admin_tokens": (ADMIN,), "device_tokens": (DEVICE,), "speaker_recognition": True}
    app = create_app(settings.with_overrides(**overrides), backends)
    with TestClient(app, base_url=LOOPBACK, follow_redirects=False) as client:
        store = client.app.state.services.store  # type: ignore[attr-defined]
        store.ensure_agent("lobug")
        maxim = store.add_person("lobug", "Maxim", actor="test").id

        csrf = sign_in(client, DEVICE)
        files = [("audio", ("a.wav", wav_of("maxim-1"), "audio/wav"))] * 2
        refused = client.post(
            f"/ui/people/{maxim}/voice", data={"agent": "lobug", "csrf": csrf}, files=files
        )
        assert refused.status_code == 403 and store.people("lobug")[0].voice_profiles == 0

        csrf = sign_in(client, ADMIN)
        page = client.get(f"/ui/people?agent=lobug&person={maxim}").text
        assert 'enctype="multipart/form-data"' in page and "Forget Maxim" not in page
        assert "does not sound like the others" in upload(
            client, maxim, csrf, ("maxim-1", "carlo-1")
        )
        assert "give 2 to 10 utterances" in upload(client, maxim, csrf, ("maxim-1",))
        page = upload(client, maxim, csrf, ("maxim-1", "maxim-2", "maxim-3"))
        assert "Learnt Maxim&#39;s voice from 3 recordings." in page and "Forget Maxim" in page
        assert store.people("lobug")[0].voice_profiles == 1

        forgotten = client.post(
            f"/ui/people/{maxim}/voice/delete", data={"agent": "lobug", "csrf": csrf}
        )
        assert forgotten.status_code == 303
        assert "Forgot Maxim" in client.get(forgotten.headers["location"]).text
        assert store.people("lobug")[0].voice_profiles == 0


def test_with_recognition_off_the_upload_says_so(guarded: TestClient) -> None:
    store = guarded.app.state.services.store  # type: ignore[attr-defined]
    store.ensure_agent("lobug")
    jordan = store.add_person("lobug", "Jordan", actor="test").id
    csrf = sign_in(guarded, ADMIN)
    page = upload(guarded, jordan, csrf, ("maxim-1", "maxim-2"))
    assert "Recognition by voice is off" in page
