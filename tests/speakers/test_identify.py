"""Who is speaking, from an embedding and the enrolled profiles (`lobug.speakers.identify`)."""

from __future__ import annotations

import numpy as np

from lobug.speakers.identify import GUEST, THRESHOLD, VoiceProfile, identify, similarity


def unit(*values: float) -> np.ndarray:
    vector = np.asarray(values, dtype=np.float32)
    return vector / np.linalg.norm(vector)


PROFILES = [VoiceProfile("Jordan", unit(1, 0, 0)), VoiceProfile("Sam", unit(0, 1, 0))]


def test_the_nearest_profile_above_the_threshold_is_the_speaker() -> None:
    speaker = identify(unit(0.2, 1, 0.1), PROFILES)
    assert speaker.name == "Sam" and speaker.score > THRESHOLD
    assert speaker.as_tuple() == ("Sam", speaker.score, "voice")


def test_a_voice_near_nobody_is_a_guest_with_its_best_score() -> None:
    speaker = identify(unit(0.3, 0.2, 1), PROFILES)
    assert speaker.is_guest and speaker.name == GUEST
    assert 0 < speaker.score < THRESHOLD
    assert speaker.score == round(similarity(unit(0.3, 0.2, 1), unit(1, 0, 0)), 4)


def test_nobody_enrolled_means_a_guest() -> None:
    assert identify(unit(1, 0, 0), []).as_tuple() == (GUEST, 0.0, "voice")


def test_the_threshold_is_the_callers_to_choose() -> None:
    assert identify(unit(1, 1, 0), PROFILES, threshold=0.8, margin=0.0).is_guest
    assert not identify(unit(1, 1, 0), PROFILES, threshold=0.6, margin=0.0).is_guest
    assert identify(unit(1, 1, 0), PROFILES, threshold=0.6).is_guest  # equally near both


def test_a_voice_close_to_two_profiles_is_nobodys_within_the_margin() -> None:
    between = unit(1, 0.9, 0)  # 0.74 to Jordan, 0.67 to Sam
    assert identify(between, PROFILES, margin=0.0).name == "Jordan"
    assert identify(between, PROFILES, margin=0.1).is_guest
    assert identify(unit(1, 0.2, 0), PROFILES, margin=0.1).name == "Jordan"
    assert identify(unit(1, 0.2, 0), PROFILES[:1], margin=0.5).name == "Jordan"  # one profile
