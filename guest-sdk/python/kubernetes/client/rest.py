"""kubernetes.client.rest.ApiException, where older code imports it from."""

from .exceptions import ApiException  # noqa: F401
