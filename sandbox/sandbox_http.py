"""Request and response values shared by the X and Graph handlers."""
import json
import urllib.parse


class Request:
    """One HTTP request as the handlers see it (also used for Graph batch items)."""

    def __init__(self, method, target, headers, body, scheme, host, batch_item=False):
        self.method = method.upper()
        path, _, query = target.partition("?")
        self.path = path
        self.query_string = query
        self.headers = headers          # dict: lowercase name -> value
        self.body = body or b""
        self.scheme = scheme
        self.host = host
        self.batch_item = batch_item
        self._query = None
        self._form = None

    def header(self, name):
        return self.headers.get(name.lower())

    @property
    def content_type(self):
        value = self.headers.get("content-type") or ""
        return value.split(";", 1)[0].strip().lower()

    @property
    def query(self):
        """Query parameters as a list of (name, value) pairs."""
        if self._query is None:
            self._query = urllib.parse.parse_qsl(self.query_string, keep_blank_values=True)
        return self._query

    @property
    def form(self):
        """Form-body parameters as (name, value) pairs; [] unless the body is
        application/x-www-form-urlencoded."""
        if self._form is None:
            if self.content_type == "application/x-www-form-urlencoded" and self.body:
                try:
                    text = self.body.decode("utf-8")
                except UnicodeDecodeError:
                    text = self.body.decode("latin-1")
                self._form = urllib.parse.parse_qsl(text, keep_blank_values=True)
            else:
                self._form = []
        return self._form

    def body_text(self):
        try:
            return self.body.decode("utf-8")
        except UnicodeDecodeError:
            return self.body.decode("latin-1")


class Response:
    """What a handler answers. `meta` feeds the request log (auth outcome,
    credential label, endpoint, created post ids)."""

    __slots__ = ("status", "headers", "body", "meta")

    def __init__(self, status, body=b"", headers=None, meta=None):
        self.status = status
        self.headers = headers if headers is not None else []
        self.body = body
        self.meta = meta if meta is not None else {}

    def header(self, name):
        lname = name.lower()
        for k, v in self.headers:
            if k.lower() == lname:
                return v
        return None

    def set_header(self, name, value):
        lname = name.lower()
        self.headers = [(k, v) for k, v in self.headers if k.lower() != lname]
        self.headers.append((name, value))


def dumps(obj):
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def json_response(status, obj, headers=None, content_type="application/json; charset=utf-8", meta=None):
    h = [("Content-Type", content_type)]
    if headers:
        h.extend(headers)
    return Response(status, dumps(obj), h, meta)
