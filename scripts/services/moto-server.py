"""The DynamoDB test server: moto's in-memory AWS mock, served on HOST:PORT.

    moto-server.py HOST PORT

Run by scripts/services/dynamo.sh with the venv it installs (moto-requirements.txt).
Every request is handled under one global lock: moto's threaded server applies a
conditional write as a separate read, check and write, so two concurrent requests can
both pass the same condition and one update is lost (the store conformance suite's
racing writers catch it). Serialising requests makes each one atomic, as in DynamoDB.
Threads are still used so a slow client does not stall the accept loop. (werkzeug closes
each connection after one response: every request is a new connection.)
"""

import functools
import logging
import pickle
import sys
import threading

import moto.backends
import moto.core.responses
from moto.dynamodb.exceptions import ItemSizeTooLarge
from moto.dynamodb.models.dynamo_type import DynamoType, LimitedSizeDict
from moto.dynamodb.models.utilities import bytesize
from moto.dynamodb.parsing.expressions import UpdateExpressionParser
from moto.moto_server.werkzeug_app import DomainDispatcherApplication, create_backend_app
from werkzeug.serving import run_simple


# DynamoDB's documented item limit: 400 KB (KiB) of attribute names and values, in UTF-8 bytes.
DYNAMODB_ITEM_LIMIT = 400 * 1024


def follow_dynamodb_item_size() -> None:
    """Makes moto refuse an item as DynamoDB does: over 400 KiB of names and values.

    moto 5.2.5 (LimitedSizeDict.__setitem__) differs twice: it stops at 405,000 bytes, "to be
    safe" below the 409-410 KB its authors measured on AWS; and when an UpdateItem replaces an
    attribute it counts the old value as well as the new one, so saving a 250 KB snapshot over
    another fails. The store's own limits follow DynamoDB, so the test server must too. Each
    value's size is still moto's (strings in UTF-8 bytes, numbers by their digits).
    """

    def size_of(value) -> int:
        return value.size() if type(value) is DynamoType else bytesize(str(value))

    def setitem(self, key: str, value) -> None:
        others = sum(bytesize(k) + size_of(v) for k, v in self.items() if k != key)
        if others + bytesize(key) + size_of(value) > DYNAMODB_ITEM_LIMIT:
            raise ItemSizeTooLarge
        dict.__setitem__(self, key, value)

    LimitedSizeDict.__setitem__ = setitem


def speed_up_moto() -> None:
    """Caches three things moto recomputes on every request (moto is pinned, so these stay valid).

    All requests queue on one lock, so moto's time per request is the server's throughput;
    these were the largest pure overheads in a profile of the conformance suite's racing writers.
    """
    # The list of moto's service folders: listed from disk (a stat per folder) per request.
    modules = tuple(moto.backends.list_of_moto_modules())
    moto.backends.list_of_moto_modules = lambda: modules
    # A response class's method names, found with inspect.getmembers per request.
    moto.core.responses.method_names_from_class = functools.lru_cache(maxsize=None)(
        moto.core.responses.method_names_from_class
    )
    # The parsed UpdateExpression (twice per UpdateItem). Callers may change the tree they get,
    # so each gets a fresh copy, unpickled (faster than parsing again). Failed parses raise as
    # before and are not cached.
    parse = UpdateExpressionParser.make.__func__
    parsed: dict[str, bytes] = {}

    def make(cls, expression_str):
        tree = parsed.get(expression_str)
        if tree is None:
            if len(parsed) > 10_000:
                parsed.clear()
            tree = parsed[expression_str] = pickle.dumps(parse(cls, expression_str))
        return pickle.loads(tree)

    UpdateExpressionParser.make = classmethod(make)


def main() -> None:
    host, port = sys.argv[1], int(sys.argv[2])
    follow_dynamodb_item_size()
    speed_up_moto()
    app = DomainDispatcherApplication(create_backend_app)
    lock = threading.Lock()

    def locked(environ, start_response):
        # The body is read to the end inside the lock: moto may build it lazily.
        with lock:
            return list(app(environ, start_response))

    # One line per request would fill the log during a test run; errors still go there.
    logging.getLogger("werkzeug").setLevel(logging.WARNING)
    print(f"moto-server: serving on http://{host}:{port}", flush=True)
    run_simple(host, port, locked, threaded=True)


if __name__ == "__main__":
    main()
