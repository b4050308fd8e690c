"""A gRPC channel to context-loader that sends the caller's identity on every call.

The service reads who is calling from request metadata, never from the body.
With AUTH_MODE=headers (the default: a gateway in front sets them) that is
`x-account-id` and `x-account-type` (user | app; default user); MemRecall
refuses calls without an account (UNAUTHENTICATED). With AUTH_MODE=jwt or
introspection it is `authorization: Bearer <token>` and those headers are
ignored. Set them once here rather than on each call:

    channel = account_channel("http://127.0.0.1:8080", account_id="u-123")
    stub = MemRecallServiceStub(channel)
"""

from __future__ import annotations

import collections
from typing import Sequence
from urllib.parse import urlsplit

import grpc


class _CallDetails(
    collections.namedtuple(
        "_CallDetails", ("method", "timeout", "metadata", "credentials", "wait_for_ready", "compression")
    ),
    grpc.ClientCallDetails,
):
    pass


class MetadataInterceptor(
    grpc.UnaryUnaryClientInterceptor,
    grpc.UnaryStreamClientInterceptor,
    grpc.StreamUnaryClientInterceptor,
    grpc.StreamStreamClientInterceptor,
):
    """Adds fixed metadata pairs to every call, before the call's own."""

    def __init__(self, pairs: Sequence[tuple[str, str]]):
        self._pairs = tuple(pairs)

    def _details(self, details: grpc.ClientCallDetails) -> _CallDetails:
        return _CallDetails(
            details.method,
            details.timeout,
            self._pairs + tuple(details.metadata or ()),
            details.credentials,
            details.wait_for_ready,
            details.compression,
        )

    def intercept_unary_unary(self, continuation, details, request):
        return continuation(self._details(details), request)

    def intercept_unary_stream(self, continuation, details, request):
        return continuation(self._details(details), request)

    def intercept_stream_unary(self, continuation, details, request_iterator):
        return continuation(self._details(details), request_iterator)

    def intercept_stream_stream(self, continuation, details, request_iterator):
        return continuation(self._details(details), request_iterator)


def plain_channel(base_url: str) -> grpc.Channel:
    """A channel to the service at base_url (http://host:port, or https:// for TLS), no metadata added."""
    url = urlsplit(base_url)
    if url.scheme not in ("http", "https") or not url.hostname:
        raise ValueError(f"base_url must be http://host:port or https://host:port, got {base_url!r}")
    port = url.port or (443 if url.scheme == "https" else 80)
    target = f"{url.hostname}:{port}"
    if url.scheme == "https":
        return grpc.secure_channel(target, grpc.ssl_channel_credentials())
    return grpc.insecure_channel(target)


def account_channel(base_url: str, account_id: str, account_type: str = "user") -> grpc.Channel:
    """A channel whose every call carries x-account-id and x-account-type."""
    pairs = [("x-account-id", account_id), ("x-account-type", account_type)]
    return grpc.intercept_channel(plain_channel(base_url), MetadataInterceptor(pairs))


def bearer_channel(base_url: str, token: str) -> grpc.Channel:
    """A channel whose every call carries `authorization: Bearer <token>` (AUTH_MODE jwt or introspection).

    Over plain http the token crosses the network in clear: use https:// beyond one machine.
    """
    return grpc.intercept_channel(plain_channel(base_url), MetadataInterceptor([("authorization", f"Bearer {token}")]))
