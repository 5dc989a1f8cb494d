"""One Wyoming connection: events read within the limits (`framing`) and sent to their
program; the connection stays open for more requests until the client closes it. A client
that breaks the protocol or a limit gets an `error` event with the reason, and the
connection closes (`Refused`); nothing it sent reaches another connection."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading

from wyoming.error import Error
from wyoming.event import Event
from wyoming.handle import NotHandled
from wyoming.ping import Pong

from lobug.services import Services
from lobug.wyoming import handle, programs
from lobug.wyoming.asr import Hearing
from lobug.wyoming.framing import read_event, write_event
from lobug.wyoming.limits import IDLE_TIMEOUT_S, MAX_PAYLOAD_BYTES, Refused
from lobug.wyoming.tts import Speaking

log = logging.getLogger(__name__)

LINGER_S = 1.0  # how long a refused client's bytes are read (and dropped) before the close


class Connection:
    def __init__(
        self, svc: Services, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        self.svc, self.reader, self.writer = svc, reader, writer
        peer = writer.get_extra_info("peername")
        self.peer = f"{peer[0]}:{peer[1]}" if isinstance(peer, tuple) else "?"
        self.gone = threading.Event()  # the client left: a turn not started is dropped
        self.hearing = Hearing(svc, self.send)
        self.speaking = Speaking(svc, self.send, self.left)

    async def run(self) -> None:
        """Serve the client until it leaves or is refused."""
        try:
            while (event := await read_event(self.reader, IDLE_TIMEOUT_S)) is not None:
                await self.on_event(event)
        except Refused as exc:
            log.info("wyoming %s closed: %s", self.peer, exc.reason)
            await self._refuse(exc)
        except (ConnectionError, asyncio.IncompleteReadError):
            log.debug("wyoming %s left", self.peer)
        finally:
            self.gone.set()
            self.hearing.close()
            self.writer.close()
            with contextlib.suppress(OSError, ConnectionError):
                await self.writer.wait_closed()

    async def _refuse(self, refusal: Refused) -> None:
        """Send the reason, then read what the client still sends for a moment before the
        close: a socket closed with bytes unread is reset, and the reason lost with it."""
        with contextlib.suppress(OSError, RuntimeError):
            await self.send(Error(text=refusal.reason, code=refusal.code).event())
            if self.writer.can_write_eof():
                self.writer.write_eof()
            with contextlib.suppress(TimeoutError, ValueError):
                async with asyncio.timeout(LINGER_S):
                    while await self.reader.read(MAX_PAYLOAD_BYTES):
                        pass

    def left(self) -> bool:
        """Whether the client has gone (its end closed, though nothing is being read now)."""
        return self.gone.is_set() or self.reader.at_eof() or self.writer.is_closing()

    async def send(self, event: Event) -> None:
        await write_event(event, self.writer)

    async def on_event(self, event: Event) -> None:
        kind = event.type
        if kind == "describe":
            await self.send(programs.info(self.svc).event())
        elif kind == "ping":
            await self.send(Pong(text=_text_or_none(event)).event())
        elif kind == "transcript":
            await self._handle(event)
        elif kind == "transcribe":
            self.hearing.transcribe(event)
        elif kind == "audio-start":
            await self.hearing.start(event)
        elif kind == "audio-chunk":
            await self.hearing.chunk(event)
        elif kind == "audio-stop":
            await self.hearing.stop()
        elif kind == "synthesize":
            await self.speaking.synthesize(event)
        elif kind == "synthesize-start":
            self.speaking.start()
        elif kind == "synthesize-chunk":
            await self.speaking.chunk(event)
        elif kind == "synthesize-stop":
            await self.speaking.stop()
        else:  # a protocol event no program here serves (`select-program`: one per kind)
            log.debug("wyoming %s: %s let pass", self.peer, kind)

    async def _handle(self, event: Event) -> None:
        request = handle.handle_request(event, self.svc.settings.max_text_chars)
        try:
            await handle.answer(self.svc, request, self.send, self.left)
        except OSError:
            raise  # the client left: the connection ends
        except Exception:
            log.exception("wyoming %s: the turn of %s failed", self.peer, request.device)
            await self.send(NotHandled(context=request.context).event())


def _text_or_none(event: Event) -> str | None:
    text = event.data.get("text")
    return text if isinstance(text, str) else None
