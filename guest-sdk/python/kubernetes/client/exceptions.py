"""ApiException, as the official client's, for replies that are not 2xx."""

import json

from kopf.kube import ApiError


class OpenApiException(Exception):
    """The base of the client's exceptions."""


class ApiException(ApiError, OpenApiException):
    """A failed request: ``status`` (the HTTP code), ``reason``, and
    ``body`` (a JSON Status text, as the API server sends it)."""

    def __init__(self, message="", code=0, reason="", origin="", call="", *, status=None):
        if status is not None:
            code = status
        super().__init__(message, code, reason, origin, call)

    @property
    def body(self):
        return json.dumps({"kind": "Status", "apiVersion": "v1", "status": "Failure",
                           "message": self.message, "reason": self.reason, "code": self.code})

    @property
    def headers(self):
        return {}
