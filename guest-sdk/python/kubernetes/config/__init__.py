"""Configuration loaders: no-ops, as the host holds the cluster's credentials."""

__all__ = ["load_incluster_config", "load_kube_config", "ConfigException"]


class ConfigException(Exception):
    """Never raised here: the host is configured, not the module."""


def load_incluster_config(*args, **kwargs):
    """Does nothing: requests go through the kopf-wasm host."""


def load_kube_config(*args, **kwargs):
    """Does nothing: requests go through the kopf-wasm host."""
