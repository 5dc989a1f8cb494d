"""Memory blocks: labelled texts always in context, with limits, read-only flags and every
change kept in `memory_block_history`."""

from __future__ import annotations

import dataclasses
from typing import Any

from lobug.store.errors import BlockExists, BlockNotFound, BlockReadOnly, BlockTooLong
from lobug.store.models import BlockChange, MemoryBlock
from lobug.store.sql import audit, rows
from lobug.store.sql.audit import SqlAudit


def _check_limit(value: str, char_limit: int | None) -> None:
    if char_limit is not None and len(value) > char_limit:
        raise BlockTooLong(
            f"the value has {len(value)} characters; the block's limit is {char_limit}"
        )


def _record_change(
    conn: Any, agent_id: int, block_id: int, old: str | None, new: str, changed_by: str, at: float
) -> None:
    """The change in the block's history and in the audit log."""
    conn.execute(
        "INSERT INTO memory_block_history(block_id, old_value, new_value, changed_by, "
        "changed_at) VALUES (?, ?, ?, ?, ?)",
        (block_id, old, new, changed_by, at),
    )
    action = "create" if old is None else "update"
    audit.record(conn, at, agent_id, changed_by, action, "block", [block_id], before=old, after=new)


class SqlBlocks(SqlAudit):
    def create_block(
        self,
        agent: str,
        label: str,
        value: str,
        *,
        description: str | None = None,
        char_limit: int | None = None,
        read_only: bool = False,
        changed_by: str = "system",
    ) -> MemoryBlock:
        """A new block, its creation recorded in the history. Raises BlockExists or
        BlockTooLong."""
        _check_limit(value, char_limit)
        agent_id = self.agent_id(agent)
        now = self._clock()
        with self._transaction() as conn:
            taken = conn.execute(
                "SELECT 1 FROM memory_blocks WHERE agent_id = ? AND label = ?", (agent_id, label)
            ).fetchone()
            if taken:
                raise BlockExists(f"agent {agent!r} already has a block labelled {label!r}")
            row = conn.execute(
                "INSERT INTO memory_blocks(agent_id, label, value, description, char_limit, "
                "read_only, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?) "
                "ON CONFLICT (agent_id, label) DO NOTHING RETURNING id",
                (agent_id, label, value, description, char_limit, int(read_only), now, now),
            ).fetchone()
            if row is None:  # another process created it meanwhile
                raise BlockExists(f"agent {agent!r} already has a block labelled {label!r}")
            block_id = int(row["id"])
            _record_change(conn, agent_id, block_id, None, value, changed_by, now)
        return MemoryBlock(
            block_id, agent_id, label, value, description, char_limit, read_only, now, now
        )

    def update_block(
        self, agent: str, label: str, value: str, *, changed_by: str = "system"
    ) -> MemoryBlock:
        """Replace a block's value and record the change. Raises BlockNotFound, BlockReadOnly
        or BlockTooLong; a value over the limit is refused, never cut."""
        agent_id = self.agent_id(agent)
        now = self._clock()
        with self._transaction() as conn:
            row = conn.execute(
                f"SELECT {rows.BLOCK_COLUMNS} FROM memory_blocks "
                f"WHERE agent_id = ? AND label = ?{self.dialect.lock_rows()}",
                (agent_id, label),
            ).fetchone()
            if row is None:
                raise BlockNotFound(f"agent {agent!r} has no block labelled {label!r}")
            block = rows.block(row)
            if block.read_only:
                raise BlockReadOnly(f"block {label!r} of agent {agent!r} is read-only")
            _check_limit(value, block.char_limit)
            conn.execute(
                "UPDATE memory_blocks SET value = ?, updated_at = ? WHERE id = ?",
                (value, now, block.id),
            )
            _record_change(conn, agent_id, block.id, block.value, value, changed_by, now)
        return dataclasses.replace(block, value=value, updated_at=now)

    def delete_block(self, agent: str, label: str, *, actor: str, purge: bool = False) -> None:
        """Remove a block and its history (read-only ones too: an admin's call). The audit
        log keeps its texts (the deletion's row holds the last value), unless `purge`: then
        they are scrubbed from every audit row about the block and the engine leaves no
        bytes of them (as a purged fact's). Raises BlockNotFound."""
        agent_id = self.agent_id(agent)
        with self._transaction() as conn:
            row = conn.execute(
                "SELECT id, value FROM memory_blocks "
                f"WHERE agent_id = ? AND label = ?{self.dialect.lock_rows()}",
                (agent_id, label),
            ).fetchone()
            if row is None:
                raise BlockNotFound(f"agent {agent!r} has no block labelled {label!r}")
            block_id = int(row["id"])
            conn.execute("DELETE FROM memory_block_history WHERE block_id = ?", (block_id,))
            conn.execute("DELETE FROM memory_blocks WHERE id = ?", (block_id,))
            if purge:
                audit.scrub(conn, self.dialect, "block", [block_id])
            audit.record(
                conn,
                self._clock(),
                agent_id,
                actor,
                "purge" if purge else "delete",
                "block",
                [block_id],
                before=None if purge else row["value"],
            )
        if purge:
            self._erase_free_pages()

    def block(self, agent: str, label: str) -> MemoryBlock | None:
        found = self._query(
            f"SELECT {rows.BLOCK_COLUMNS} FROM memory_blocks WHERE agent_id = ? AND label = ?",
            (self.agent_id(agent), label),
        )
        return rows.block(found[0]) if found else None

    def blocks(self, agent: str) -> list[MemoryBlock]:
        """The agent's blocks in creation order."""
        found = self._query(
            f"SELECT {rows.BLOCK_COLUMNS} FROM memory_blocks WHERE agent_id = ? ORDER BY id",
            (self.agent_id(agent),),
        )
        return [rows.block(row) for row in found]

    def block_history(self, agent: str, label: str) -> list[BlockChange]:
        """Every change to one block, oldest first. Raises BlockNotFound."""
        block = self.block(agent, label)
        if block is None:
            raise BlockNotFound(f"agent {agent!r} has no block labelled {label!r}")
        found = self._query(
            f"SELECT {rows.BLOCK_CHANGE_COLUMNS} FROM memory_block_history "
            "WHERE block_id = ? ORDER BY id",
            (block.id,),
        )
        return [rows.block_change(row) for row in found]
