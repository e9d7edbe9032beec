"""A loopback TCP proxy a test can cut and heal: the HTTP path between two clusters.

`cut()` stops listening and closes every open connection (both ends), so requests in flight
fail and new ones are refused; `heal()` listens again on the same port. `delay_s` holds every chunk
that much before it is passed on, either way (a slow link).
"""

from __future__ import annotations

import asyncio
import contextlib

from rayfleet.launcher import free_port


class TcpProxy:
    def __init__(self, target_port: int) -> None:
        self.target_port = target_port
        self.port = free_port()
        self._server: asyncio.base_events.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()
        self._cuts = 0  # a connection accepted before a cut must not start piping after it
        self.delay_s = 0.0

    async def heal(self) -> None:
        if self._server is None:
            # the connections this listener accepts carry the cut count it was opened under: one accepted
            # just before a cut whose handler only runs after it is closed, not piped through the partition
            opened = self._cuts
            self._server = await asyncio.start_server(
                lambda r, w: self._handle(r, w, opened), "127.0.0.1", self.port, reuse_address=True
            )

    async def cut(self) -> None:
        self._cuts += 1
        if self._server is not None:
            self._server.close()
            self._server = None
        for writer in list(self._writers):
            writer.close()
        self._writers.clear()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, cuts: int) -> None:
        if cuts != self._cuts:  # accepted before a cut, handled after it
            writer.close()
            return
        try:
            up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.target_port)
        except OSError:
            writer.close()
            return
        if cuts != self._cuts:  # cut while this connection was being opened
            writer.close()
            up_writer.close()
            return
        self._writers.update((writer, up_writer))
        await asyncio.gather(self._pipe(reader, up_writer), self._pipe(up_reader, writer))

    async def _pipe(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while data := await reader.read(65536):
                if self.delay_s:
                    await asyncio.sleep(self.delay_s)
                writer.write(data)
                await writer.drain()
        except (ConnectionError, OSError):
            pass
        finally:
            self._writers.discard(writer)
            with contextlib.suppress(Exception):
                writer.close()
