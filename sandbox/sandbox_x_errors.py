"""How X v2 refuses a request, shared by the post and user endpoints
(sandbox_x) and the media endpoints (sandbox_media): problem+json bodies,
"Invalid Request" with its per-parameter errors, the check for unknown query
parameters, and the words X uses for a JSON value's type and a numeric id.
"""
import re

from sandbox_http import json_response

PROBLEM_JSON = "application/problem+json"
NUMERIC_ID = re.compile(r"[0-9]{1,19}")


def problem(status, title, detail, type_="about:blank", extra=None, headers=None, meta=None):
    body = {"title": title, "detail": detail, "type": type_, "status": status}
    if extra:
        body.update(extra)
    return json_response(status, body, headers, PROBLEM_JSON, meta)


def problem_type(world, name):
    return world.config.x_problem_base + name


def invalid_request(world, errors, headers=None, meta=None):
    body = {"errors": errors, "title": "Invalid Request",
            "detail": "One or more parameters to your request was invalid.",
            "type": problem_type(world, "invalid-request")}
    return json_response(400, body, headers, PROBLEM_JSON, meta)


def param_error(name, values, message):
    return {"parameters": {name: values}, "message": message}


def check_params(world, req, allowed, meta):
    """X v2 rejects unknown query parameters; returns an error response or None."""
    names = [k for k, _ in req.query if not k.startswith("oauth_")]
    bad = [k for k in names if k not in allowed]
    if bad:
        return invalid_request(world, [param_error(k, [v], "The query parameter [%s] is not one of [%s]"
                                                   % (k, ",".join(allowed)))
                                       for k, v in req.query if k in bad], meta=meta)
    return None


def type_name(value):
    """A JSON value's type as X's schema messages name it."""
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if value is None:
        return "null"
    return "object"
