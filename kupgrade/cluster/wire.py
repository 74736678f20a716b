"""An httpx transport over the standard library's http.client, for the simulated cluster's
API on loopback: the remote controllers' requests (every eviction, write and clock step
of a rehearsal over the API) go through it, the watches too.

Why not httpx's own transport: httpcore and h11 cost about 0.6 ms of Python a request
(their state machines, tracing, pool bookkeeping), more than the simulated API server
takes to answer one on loopback; a 100-node rehearsal sends 11,000. http.client parses
the same HTTP/1.1 (chunked bodies, keep-alive, `Connection: close`) in C-backed buffered
reads for a fraction of that. The client above it stays httpx's: its auth flows (tokens,
exec plugins), event hooks, timeouts and errors are what the rest of kupgrade uses.

Only what the remote backend needs: HTTP/1.1 to one server, no proxies (loopback), a
small pool of keep-alive connections shared by the controllers' thread and the watches'.
"""

from __future__ import annotations

import http.client
import select
import socket
import ssl
import threading
from collections.abc import Iterator

import httpx

LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1", "[::1]"})
IDLE_KEPT = 4  # keep-alive connections kept for the next request


class _Body(httpx.SyncByteStream):
    """A response's body as it arrives; the connection goes back to the pool once the
    body has been read to its end and the server keeps it open."""

    def __init__(
        self,
        transport: LoopbackTransport,
        conn: http.client.HTTPConnection,
        response: http.client.HTTPResponse,
        request: httpx.Request,
    ) -> None:
        self._transport, self._conn, self._response = transport, conn, response
        self._request = request

    def __iter__(self) -> Iterator[bytes]:
        try:
            while True:
                chunk = self._response.read1(65536)
                if not chunk:
                    return
                yield chunk
        except TimeoutError as exc:
            raise httpx.ReadTimeout(str(exc), request=self._request) from None
        except (OSError, http.client.HTTPException) as exc:
            raise httpx.ReadError(f"{type(exc).__name__}: {exc}", request=self._request) from None

    def close(self) -> None:
        # Read to its end: http.client closes a chunked body's response itself, but one
        # of a known length only at the read after its last byte.
        done = self._response.isclosed() or self._response.length == 0
        reusable = done and not self._response.will_close
        self._response.close()
        self._transport.give_back(self._conn, reusable)


class LoopbackTransport(httpx.BaseTransport):
    def __init__(self, context: ssl.SSLContext | None) -> None:
        self._context = context
        self._idle: list[http.client.HTTPConnection] = []
        self._lock = threading.Lock()

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        url = request.url
        target = url.raw_path.decode("ascii")
        body = request.read()
        headers = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in request.headers.raw]
        timeout = request.extensions.get("timeout", {})
        for attempt in (0, 1):
            conn, reused = self._take(request, timeout.get("connect"))
            try:
                conn.sock.settimeout(timeout.get("read"))
                conn.putrequest(request.method, target, skip_host=True, skip_accept_encoding=True)
                for name, value in headers:
                    conn.putheader(name, value)
                conn.endheaders(body or None)
                response = conn.getresponse()
            except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError) as exc:
                conn.close()
                if reused and attempt == 0:
                    # The server closed a kept connection as it was taken: nothing was
                    # read from this request, so it goes once more on a new one.
                    continue
                raise httpx.RemoteProtocolError(
                    str(exc) or type(exc).__name__, request=request
                ) from None
            except TimeoutError as exc:
                conn.close()
                raise httpx.ReadTimeout(str(exc), request=request) from None
            except (OSError, http.client.HTTPException) as exc:
                conn.close()
                raise httpx.ReadError(f"{type(exc).__name__}: {exc}", request=request) from None
            return httpx.Response(
                response.status,
                headers=response.getheaders(),
                stream=_Body(self, conn, response, request),
                request=request,
                extensions={"http_version": b"HTTP/1.1"},
            )
        raise AssertionError("unreachable: the second attempt returns or raises")

    def _take(
        self, request: httpx.Request, connect: float | None
    ) -> tuple[http.client.HTTPConnection, bool]:
        """A kept connection that the server has not closed, else a new one."""
        url = request.url
        with self._lock:
            while self._idle:
                kept = self._idle.pop()
                if kept.sock is not None and not _readable(kept.sock):
                    return kept, True
                kept.close()  # readable while idle: the server closed it (or sent junk)
        port = url.port or (443 if url.scheme == "https" else 80)
        conn: http.client.HTTPConnection
        if url.scheme == "https":
            conn = http.client.HTTPSConnection(
                url.host, port, timeout=connect, context=self._context
            )
        else:
            conn = http.client.HTTPConnection(url.host, port, timeout=connect)
        try:
            conn.connect()
        except TimeoutError as exc:
            raise httpx.ConnectTimeout(str(exc), request=request) from None
        except OSError as exc:
            raise httpx.ConnectError(f"{type(exc).__name__}: {exc}", request=request) from None
        if conn.sock is not None:
            conn.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return conn, False

    def give_back(self, conn: http.client.HTTPConnection, reusable: bool) -> None:
        with self._lock:
            if reusable and len(self._idle) < IDLE_KEPT:
                self._idle.append(conn)
                return
        conn.close()

    def close(self) -> None:
        with self._lock:
            idle, self._idle = self._idle, []
        for conn in idle:
            conn.close()


def _readable(sock: socket.socket) -> bool:
    """Whether an idle connection has something to read: EOF (closed) or bytes nobody
    asked for. Either way it is not reused (httpcore's is_socket_readable)."""
    try:
        return bool(select.select([sock], [], [], 0)[0])
    except (OSError, ValueError):
        return True


def loopback_client(client: httpx.Client) -> httpx.Client:
    """`client` again with this transport, when it speaks to this machine and its TLS
    settings can be carried over; else `client` as it is."""
    if client.base_url.host not in LOOPBACK_HOSTS:
        return client
    pool = getattr(getattr(client, "_transport", None), "_pool", None)
    # httpx (pinned) keeps the SSL context it built from verify= and cert= on its
    # connection pool; without one, the client's own transport stays.
    context = getattr(pool, "_ssl_context", None)
    if client.base_url.scheme == "https" and not isinstance(context, ssl.SSLContext):
        return client
    return httpx.Client(
        auth=client.auth,
        base_url=client.base_url,
        headers=client.headers,
        timeout=client.timeout,
        event_hooks=client.event_hooks,
        transport=LoopbackTransport(context),
    )
