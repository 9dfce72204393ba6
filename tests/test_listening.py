"""The sockets ``vaultseek serve`` listens on: what its connections get from them."""

from __future__ import annotations

import asyncio
import socket

from tests.support.ports import free_port

from vaultseek.web.ports import bind_port


def test_connections_accepted_from_the_claimed_port_send_without_nagle_delay() -> None:
    """A kept-alive connection's response goes out in two writes (head, then body); with
    Nagle's algorithm on, the second waits for the client's delayed ACK, ~40 ms a request. The
    listening sockets must let asyncio turn it off on every connection they accept."""

    async def accept_one() -> int:
        seen: asyncio.Future[int] = asyncio.get_running_loop().create_future()

        def accepted(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            sock = writer.get_extra_info("socket")
            seen.set_result(sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
            writer.close()

        listeners = bind_port("127.0.0.1", free_port(), what="the test server")
        port = listeners[0].getsockname()[1]
        server = await asyncio.start_server(accepted, sock=listeners[0])
        try:
            _reader, writer = await asyncio.open_connection("127.0.0.1", port)
            result = await asyncio.wait_for(seen, 10)
            writer.close()
            return result
        finally:
            server.close()
            await server.wait_closed()

    assert asyncio.run(accept_one()) != 0
