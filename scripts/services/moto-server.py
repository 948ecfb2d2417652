"""The DynamoDB test server: moto's in-memory AWS mock, served on HOST:PORT.

    moto-server.py HOST PORT

Run by scripts/services/dynamo.sh with the venv it installs (moto-requirements.txt).

Fidelity patches restore a documented contract of DynamoDB that moto 5.2.5 lacks; each has its
own test in packages/store-dynamo/test/test-server-fidelity.test.ts (which fails against stock moto):

- Atomic conditional writes. Every request is handled under one global lock: moto's threaded
  server applies a conditional write as a separate read, check and write, so two concurrent
  requests can both pass the same condition and one update is lost. Serialising requests makes
  each one atomic, as in DynamoDB. Upstream: moto documents that it does not support concurrent
  access (getmoto/moto#7166, from #7164); no issue about conditional writes in its server found.
- The 400 KB item rule (follow_dynamodb_item_rules). Upstream: getmoto/moto#1874 added the
  limit (closed by #2455); no issue about the differences fixed here was found.

Speed patches change no answer. They stay only where a run would otherwise be infeasible: the
DynamoDB soak (10,000 instances a run, `pnpm soak`) and its time budget.

- query_by_key: a Query reads its partition, not the whole table sorted. Without it a 10,000-run
  slowed from 3.5 to 1.9 instances/s as its table grew and had to be cut to 2,000; with it the run
  drained in 3,296 s of its 3,600 s budget. packages/store-dynamo/test/test-server-index.test.ts
  checks its answers against a model.
- speed_up_moto: three caches of what moto recomputes per request, the largest overheads in a
  profile of one-request-at-a-time serving, where moto's time per request is the server's
  throughput. Kept for the same soak budget, which has little room; its own share of the soak's
  time has not been measured apart from query_by_key's, so it is the first to drop if it
  turns out not to be needed.

The HTTP server is ours, not werkzeug's: werkzeug's development server closes every
connection after one response, so each SDK call paid a new TCP connection (and a test run
went through tens of thousands of the machine's ephemeral ports). This one keeps
connections open (HTTP/1.1), a thread per connection.
"""

import bisect
import copy
import functools
import io
import pickle
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import unquote

import moto.backends
import moto.core.responses
from moto.dynamodb.exceptions import ItemSizeTooLarge
from moto.dynamodb.models.dynamo_type import DynamoType, LimitedSizeDict
from moto.dynamodb.models.table import Table
from moto.dynamodb.models.utilities import bytesize
from moto.dynamodb.parsing.executors import UpdateExpressionExecutor
from moto.dynamodb.parsing.expressions import UpdateExpressionParser
from moto.moto_server.werkzeug_app import DomainDispatcherApplication, create_backend_app


# DynamoDB's documented item limit: 400 KB (KiB) of attribute names and values, in UTF-8 bytes.
DYNAMODB_ITEM_LIMIT = 400 * 1024


def follow_dynamodb_item_rules() -> None:
    """Makes moto refuse an item, and apply an UpdateItem, as DynamoDB does.

    moto 5.2.5 checks an item's size in LimitedSizeDict.__setitem__, on every attribute set, and
    differs from DynamoDB four ways: it stops at 405,000 bytes, "to be safe" below the 409-410 KB
    its authors measured on AWS; when an update replaces an attribute it counts the old value as
    well as the new one (saving a 250 KB snapshot over another fails); it checks after each action
    of an UpdateExpression, not on the updated item (a save that sets a large snapshot and removes
    the consumed signals fails); and a refused update keeps the actions applied before the refusal
    (the item's version attribute moved by a save reported as SNAPSHOT_TOO_LARGE). The store's own
    limits follow DynamoDB, so the test server must too. Each value's size is still moto's
    (strings in UTF-8 bytes, numbers by their digits).
    """
    updating = threading.local()

    def size_of(value) -> int:
        return value.size() if type(value) is DynamoType else bytesize(str(value))

    def setitem(self, key: str, value) -> None:
        if not getattr(updating, "active", False):
            others = sum(bytesize(k) + size_of(v) for k, v in self.items() if k != key)
            if others + bytesize(key) + size_of(value) > DYNAMODB_ITEM_LIMIT:
                raise ItemSizeTooLarge
        dict.__setitem__(self, key, value)

    LimitedSizeDict.__setitem__ = setitem
    execute = UpdateExpressionExecutor.execute

    def run(self, node=None):
        if node is not None:  # the executor's own recursion: the top call guards the whole update
            return execute(self, node)
        attrs = self.item.attrs
        before = {k: copy.deepcopy(v) for k, v in dict.items(attrs)}
        updating.active = True
        try:
            execute(self)
            if sum(bytesize(k) + size_of(v) for k, v in attrs.items()) > DYNAMODB_ITEM_LIMIT:
                raise ItemSizeTooLarge  # moto answers it as "Item size to update has exceeded..."
        except BaseException:
            dict.clear(attrs)
            dict.update(attrs, before)
            raise
        finally:
            updating.active = False

    UpdateExpressionExecutor.execute = run


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


# What query_by_key keeps beside moto's tables: per index, its entries in key order.


def key_of(item) -> tuple:
    """An item's table key: (partition value, sort value or None)."""
    return (item.hash_key, item.range_key)


def every_item(table) -> list:
    """Every item of a moto table, unsorted (moto keeps a dict per partition when there is a sort key)."""
    if not table.range_key_attr:
        return list(table.items.values())
    return [item for partition in table.items.values() for item in partition.values()]


class IndexKeys:
    """One index's entries: per partition value, (sort value, tie-break, table key) in order."""

    def __init__(self, hash_attr: str, range_attr: str | None) -> None:
        self.hash_attr, self.range_attr = hash_attr, range_attr
        self.entry_of: dict = {}  # table key -> (partition value, entry)
        self.parts: dict = {}  # partition value -> sorted entries
        self.items: dict = {}  # table key -> item

    def drop(self, key: tuple) -> None:
        found = self.entry_of.pop(key, None)
        if found is None:
            return
        value, entry = found
        part = self.parts[value]
        del part[bisect.bisect_left(part, entry)]
        if not part:
            del self.parts[value]
        del self.items[key]

    def put(self, item) -> None:
        key = key_of(item)
        self.drop(key)
        value = item.attrs.get(self.hash_attr)
        sort = item.attrs.get(self.range_attr) if self.range_attr else None
        if value is None or (self.range_attr and sort is None):
            return  # not in the index (a sparse index skips items without its keys)
        # The tie-break (the key's text) keeps entries distinct and never compares DynamoTypes.
        entry = ((sort.type, sort.cast_value) if sort is not None else ("", ""), repr(key), key)
        bisect.insort(self.parts.setdefault(value, []), entry)
        self.entry_of[key] = (value, entry)
        self.items[key] = item

    def candidates(self, value, comparison: str | None, bounds: list) -> list:
        part = self.parts.get(value, [])
        lo, hi = 0, len(part)
        if comparison and self.range_attr and bounds:
            first = (bounds[0].type, bounds[0].cast_value)
            sort_of = lambda entry: entry[0]  # noqa: E731
            if comparison in ("<", "<="):
                cut = bisect.bisect_left if comparison == "<" else bisect.bisect_right
                hi = cut(part, first, key=sort_of)
            elif comparison in (">", ">="):
                cut = bisect.bisect_right if comparison == ">" else bisect.bisect_left
                lo = cut(part, first, key=sort_of)
            elif comparison in ("=", "EQ"):
                lo = bisect.bisect_left(part, first, key=sort_of)
                hi = bisect.bisect_right(part, first, key=sort_of)
            elif comparison == "BETWEEN" and len(bounds) == 2:
                lo = bisect.bisect_left(part, first, key=sort_of)
                hi = bisect.bisect_right(part, (bounds[1].type, bounds[1].cast_value), key=sort_of)
            # anything else (BEGINS_WITH): the whole partition, which moto filters
        return [self.items[entry[2]] for entry in part[lo:hi]]


def indexes_of(table) -> dict:
    """A table's IndexKeys by index name, kept on the table itself.

    A table's deep copy (moto's transaction rollback) copies them with the items, so the two stay
    consistent.
    """
    return table.__dict__.setdefault("_stepfold_index_keys", {})


def index_keys(table, index_name: str) -> IndexKeys | None:
    """The kept entries of a table's index, built at its first Query; None where moto reads it itself."""
    built = indexes_of(table)
    if index_name not in built:
        index = next((i for i in table.all_indexes() if i.name == index_name), None)
        if index is None:
            return None  # moto answers the unknown index with its own error
        hashes = [k["AttributeName"] for k in index.schema if k["KeyType"] == "HASH"]
        ranges = [k["AttributeName"] for k in index.schema if k["KeyType"] == "RANGE"]
        if len(hashes) != 1 or len(ranges) > 1:
            return None  # multi-attribute keys: moto's own reading
        keys = IndexKeys(hashes[0], ranges[0] if ranges else None)
        for item in every_item(table):
            keys.put(item)
        built[index_name] = keys
    return built[index_name]


def query_by_key() -> None:
    """Makes a Query cost what it finds, not the size of the table or of the partition.

    moto 5.2.5's Table.query starts from Table.all_items(), which lists every item of the table
    and sorts them all by primary key (Python comparisons of DynamoType keys), then keeps those
    whose partition key matches, sorts those by the index's keys and only then applies the sort-key
    condition and the limit. Each worker's poll is a Query on an index, so with 10,000 instances
    stored a poll took about 30 ms and the whole server slowed as the table grew, where DynamoDB
    reads an index by key. Here, during a Query, all_items() hands back only the candidates: the
    partition's items for a Query on the table; for a Query on an index, the items of the queried
    partition whose sort key meets the condition, from a sorted list kept per index and partition
    (built at the first Query on that index, then kept in step by every write). moto's own code
    still checks each candidate and sorts them by the index's keys and the table's key (a total
    order), so no result changes. Scan keeps moto's sorted list.
    """
    from moto.dynamodb.models import DynamoDBBackend

    query, all_items = Table.query, Table.all_items
    put_item, delete_item = Table.put_item, Table.delete_item
    update_item = DynamoDBBackend.update_item
    querying = threading.local()

    def candidates(self) -> list:
        mode = getattr(querying, "mode", None)
        if mode is None:
            return all_items(self)
        if mode[0] == "index":
            _, index_name, conditions, comparison, bounds = mode
            keys = index_keys(self, index_name)
            if keys is None or len(conditions) != 1 or conditions[0][0] != keys.hash_attr:
                return every_item(self)
            return keys.candidates(conditions[0][1], comparison, bounds)
        partition = self.items.get(mode[1])
        if partition is None:
            return []
        return list(partition.values()) if self.range_key_attr else [partition]

    def query_with_candidates(self, hash_key, *args, **kwargs):
        # Table.query(hash_key, range_comparison, range_objs, limit, exclusive_start_key,
        # scan_index_forward, projection_expressions, index_name, ...), as moto's backend calls it.
        index_name = args[6] if len(args) > 6 else kwargs.get("index_name")
        if index_name:
            conditions = kwargs.get("hash_key_conditions") or []
            range_conditions = kwargs.get("range_key_conditions") or []
            # A sort-key condition is used only when it is the only one (the last of several
            # multi-attribute ones is not the index's single sort key).
            comparison, bounds = (args[0], args[1]) if len(range_conditions) <= 1 else (None, [])
            querying.mode = ("index", index_name, conditions, comparison, bounds or [])
        else:
            querying.mode = ("table", hash_key)
        try:
            return query(self, hash_key, *args, **kwargs)
        finally:
            querying.mode = None

    def reindex(table, item) -> None:
        for keys in indexes_of(table).values():
            keys.put(item)

    def put_and_index(self, *args, **kwargs):
        item = put_item(self, *args, **kwargs)
        reindex(self, item)
        return item

    def delete_and_unindex(self, hash_key, range_key):
        item = delete_item(self, hash_key, range_key)
        if item is not None:
            for keys in indexes_of(self).values():
                keys.drop(key_of(item))
        return item

    def update_and_index(self, table_name, *args, **kwargs):
        # An UpdateItem changes the stored item's attributes in place (or raises before, or
        # rolls them back): reindex what it returns.
        item = update_item(self, table_name, *args, **kwargs)
        reindex(self.get_table(table_name), item)
        return item

    Table.all_items = candidates
    Table.query = query_with_candidates
    Table.put_item = put_and_index
    Table.delete_item = delete_and_unindex
    DynamoDBBackend.update_item = update_and_index


def handler_for(app, host: str, port: int) -> type[BaseHTTPRequestHandler]:
    """A keep-alive HTTP/1.1 handler that runs each request through the WSGI `app`, one at a time."""
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        # Headers and body go out as two writes: with Nagle's algorithm the body would wait for
        # the client's delayed ACK (about 40 ms) on a kept-alive connection.
        disable_nagle_algorithm = True

        def read_body(self) -> bytes:
            if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
                parts = []
                while size := int(self.rfile.readline().split(b";")[0], 16):
                    parts.append(self.rfile.read(size))
                    self.rfile.readline()
                while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                    pass  # trailers
                return b"".join(parts)
            return self.rfile.read(int(self.headers.get("Content-Length") or 0))

        def serve(self) -> None:
            body = self.read_body()
            path, _, query = self.path.partition("?")
            environ = {
                "REQUEST_METHOD": self.command,
                "SCRIPT_NAME": "",
                # PEP 3333: the path's bytes, each as one latin-1 character.
                "PATH_INFO": unquote(path, "latin-1"),
                "QUERY_STRING": query,
                "RAW_URI": self.path,
                "REQUEST_URI": self.path,
                "SERVER_NAME": host,
                "SERVER_PORT": str(port),
                "SERVER_PROTOCOL": self.request_version,
                "REMOTE_ADDR": self.client_address[0],
                "CONTENT_LENGTH": str(len(body)),
                "wsgi.version": (1, 0),
                "wsgi.url_scheme": "http",
                "wsgi.input": io.BytesIO(body),
                "wsgi.errors": sys.stderr,
                "wsgi.multithread": True,
                "wsgi.multiprocess": False,
                "wsgi.run_once": False,
            }
            if self.headers.get("Content-Type"):
                environ["CONTENT_TYPE"] = self.headers["Content-Type"]
            for name, value in self.headers.items():
                key = "HTTP_" + name.upper().replace("-", "_")
                if key not in ("HTTP_CONTENT_TYPE", "HTTP_CONTENT_LENGTH"):
                    environ[key] = f"{environ[key]},{value}" if key in environ else value
            started: list = []

            def start_response(status, headers, exc_info=None):
                started[:] = [status, headers]

            with lock:
                chunks = app(environ, start_response)
                try:
                    out = b"".join(chunks)
                finally:
                    getattr(chunks, "close", lambda: None)()
            status, headers = started
            code, _, reason = status.partition(" ")
            self.send_response(int(code), reason)
            for name, value in headers:
                # The framing is ours: every response has its length, the connection stays open.
                if name.lower() not in ("content-length", "connection", "transfer-encoding"):
                    self.send_header(name, value)
            if self.command != "HEAD":
                self.send_header("Content-Length", str(len(out)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(out)

        do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = do_PATCH = do_OPTIONS = serve

        def log_request(self, code="-", size="-") -> None:
            pass  # one line per request would fill the log during a test run; errors still go there

    return Handler


class Server(ThreadingHTTPServer):
    # socketserver's default backlog is 5: a store fanning a poll out over its shards opens more
    # connections at once, and the SYNs past the backlog wait out the client's 1 s connect timeout.
    request_queue_size = 128
    daemon_threads = True


def main() -> None:
    host, port = sys.argv[1], int(sys.argv[2])
    follow_dynamodb_item_rules()
    speed_up_moto()
    query_by_key()
    app = DomainDispatcherApplication(create_backend_app)
    server = Server((host, port), handler_for(app, host, port))
    print(f"moto-server: serving on http://{host}:{port}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
