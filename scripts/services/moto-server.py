"""The DynamoDB test server: moto's in-memory AWS mock, served on HOST:PORT.

    moto-server.py HOST PORT

Run by scripts/services/dynamo.sh with the venv it installs (moto-requirements.txt).
Every request is handled under one global lock: moto's threaded server applies a
conditional write as a separate read, check and write, so two concurrent requests can
both pass the same condition and one update is lost (the store conformance suite's
racing writers catch it). Serialising requests makes each one atomic, as in DynamoDB.
Threads are still used so a slow client does not stall the accept loop.
"""

import logging
import sys
import threading

from moto.moto_server.werkzeug_app import DomainDispatcherApplication, create_backend_app
from werkzeug.serving import WSGIRequestHandler, run_simple


class KeepAliveHandler(WSGIRequestHandler):
    # HTTP/1.1 keeps a client's connection open between requests (werkzeug's default,
    # HTTP/1.0, closes it after each one, and every SDK call would pay a new connection).
    protocol_version = "HTTP/1.1"


def main() -> None:
    host, port = sys.argv[1], int(sys.argv[2])
    app = DomainDispatcherApplication(create_backend_app)
    lock = threading.Lock()

    def locked(environ, start_response):
        # The body is read to the end inside the lock: moto may build it lazily.
        with lock:
            return list(app(environ, start_response))

    # One line per request would fill the log during a test run; errors still go there.
    logging.getLogger("werkzeug").setLevel(logging.WARNING)
    print(f"moto-server: serving on http://{host}:{port}", flush=True)
    run_simple(host, port, locked, threaded=True, request_handler=KeepAliveHandler)


if __name__ == "__main__":
    main()
