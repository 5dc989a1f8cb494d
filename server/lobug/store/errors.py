"""What a store raises, whatever its engine."""

from __future__ import annotations


class StoreError(RuntimeError):
    pass


class EmbeddingMismatch(StoreError):
    """The database was embedded with another model or dimension than the one configured."""

    @classmethod
    def of(cls, database: str, old: tuple[str, int], model: str, dim: int) -> EmbeddingMismatch:
        """The refusal of `database` (as the message names it), embedded with `old`."""
        return cls(
            f"The {database} was embedded with {old[0]} ({old[1]} dimensions), but this server "
            f"is configured for {model} ({dim} dimensions). Run `lobug reindex` to re-embed "
            "every fact with the configured model, or set LOBUG_EMBED_BACKEND / "
            "LOBUG_EMBED_MODEL back to the old one."
        )


class StorageUnavailable(StoreError):
    """The database cannot be read or written now: disk full, read-only, I/O error, or locked
    for longer than the busy timeout. Nothing committed before is affected."""


class BlockExists(StoreError):
    """The agent already has a memory block with this label."""


class BlockNotFound(StoreError):
    """The agent has no memory block with this label."""


class BlockReadOnly(StoreError):
    """The memory block is read-only."""


class BlockTooLong(StoreError):
    """The value is longer than the block's character limit."""


class FactNotFound(StoreError):
    """The agent has no fact with this id."""


class FactNotCurrent(StoreError):
    """The fact was superseded or forgotten: only its current version can change."""


class SourcesForgotten(StoreError):
    """Every message a fact was learned from was forgotten while it was being learned."""


class MessageNotFound(StoreError):
    """The agent has no message with this id."""


class ImportConflict(StoreError):
    """The agent an import would write to already holds other memory (merge to add to it)."""


class DatabaseInUse(StoreError):
    """Another process (a running server) has the database open."""


class DreamNotFound(StoreError):
    """The agent has no dream with this id."""


class DreamUndone(StoreError):
    """The dream was undone already."""


class TopicNotFound(StoreError):
    """The agent has no topic with this id (topics get new ids at every rebuild)."""


class PersonNotFound(StoreError):
    """The agent (household) has no person with this id or name."""


class PersonExists(StoreError):
    """The household already has a person of this name (names compare without case)."""


class DeviceTaken(StoreError):
    """The device is another person's already: it moves only when asked to (`move`)."""


class FactHasNoOwner(StoreError):
    """A household fact with no owner cannot become private (no one to keep it)."""
