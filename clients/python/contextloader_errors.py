"""Typed error details of a context-loader call, from a grpc.RpcError.

Every error the service returns carries a google.rpc.Status in the
`grpc-status-details-bin` trailer; its `details` are Any-packed messages:
google.rpc.ErrorInfo (always: reason, domain "contextloader", metadata
trace_id), google.rpc.BadRequest (the request fields at fault),
contextloader.common.v1.AgentHint (the next step), google.rpc.RetryInfo (when
to retry an overloaded server) and contextloader.resolver.v1.MissingParams (the
resolver's MISSING_INPUT_PARAMS). See docs/errors.md.

This reads the trailer itself, so it needs only grpcio and protobuf (Debian's
python3-grpcio and python3-protobuf) and the modules generated into gen/:
Debian does not package grpcio-status (`grpc_status.rpc_status`).

    try:
        stub.RetrieveSchema(request, timeout=10)
    except grpc.RpcError as err:
        error = decode_error(err)
        error.reason, error.trace_id, error.bad_request, error.agent_hint
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional, Type, TypeVar

import grpc
from google.protobuf import any_pb2
from google.protobuf.message import DecodeError, Message

from contextloader.common.v1 import errors_pb2
from contextloader.resolver.v1 import resolver_pb2
from google.rpc import error_details_pb2, status_pb2

STATUS_DETAILS_KEY = "grpc-status-details-bin"

# The detail messages the service sends, by full name (the last segment of an Any's type_url).
DETAIL_TYPES: dict[str, Type[Message]] = {
    cls.DESCRIPTOR.full_name: cls
    for cls in (
        error_details_pb2.ErrorInfo,
        error_details_pb2.BadRequest,
        error_details_pb2.RetryInfo,
        errors_pb2.AgentHint,
        resolver_pb2.MissingParams,
    )
}

M = TypeVar("M", bound=Message)


@dataclass(frozen=True)
class ServiceError:
    """A failed call: its gRPC code and message, and the details, unpacked."""

    code: grpc.StatusCode
    message: str
    # The google.rpc.Status of the trailer; None when the answer had none (then
    # the error did not come from the service's handlers, e.g. a transport
    # failure or a deadline passed on the client side).
    status: Optional[status_pb2.Status]
    # The known details, unpacked, in the order sent.
    details: list[Message] = field(default_factory=list)
    # Details of types not in DETAIL_TYPES, still packed.
    unknown: list[any_pb2.Any] = field(default_factory=list)

    def find(self, cls: Type[M]) -> Optional[M]:
        """The first detail of this message type, or None."""
        return next((d for d in self.details if isinstance(d, cls)), None)

    @property
    def error_info(self) -> Optional[error_details_pb2.ErrorInfo]:
        return self.find(error_details_pb2.ErrorInfo)

    @property
    def bad_request(self) -> Optional[error_details_pb2.BadRequest]:
        return self.find(error_details_pb2.BadRequest)

    @property
    def agent_hint(self) -> Optional[errors_pb2.AgentHint]:
        return self.find(errors_pb2.AgentHint)

    @property
    def missing_params(self) -> Optional[resolver_pb2.MissingParams]:
        return self.find(resolver_pb2.MissingParams)

    @property
    def retry_info(self) -> Optional[error_details_pb2.RetryInfo]:
        return self.find(error_details_pb2.RetryInfo)

    @property
    def reason(self) -> str:
        """ErrorInfo.reason (e.g. "SCHEMA_NOT_IN_SESSION"), "" without ErrorInfo."""
        info = self.error_info
        return info.reason if info else ""

    @property
    def trace_id(self) -> str:
        """The call's trace id (ErrorInfo.metadata["trace_id"]): quote it to the operators."""
        info = self.error_info
        return info.metadata.get("trace_id", "") if info else ""

    def field_violations(self) -> dict[str, str]:
        """BadRequest's violations as {field: description}."""
        request = self.bad_request
        return {v.field: v.description for v in request.field_violations} if request else {}


def status_from_error(err: grpc.RpcError) -> Optional[status_pb2.Status]:
    """The google.rpc.Status of the `grpc-status-details-bin` trailer, or None.

    Raises ValueError when the trailer's code disagrees with the call's, as
    grpcio-status's rpc_status.from_call does: the trailer then is not this
    call's status.
    """
    trailers = err.trailing_metadata() if isinstance(err, grpc.Call) else None
    for key, value in trailers or ():
        if key != STATUS_DETAILS_KEY:
            continue
        status = status_pb2.Status.FromString(value)
        if status.code != err.code().value[0]:
            raise ValueError(f"{STATUS_DETAILS_KEY} says code {status.code}, the call ended with {err.code()}")
        return status
    return None


def unpack_details(status: status_pb2.Status) -> tuple[list[Message], list[any_pb2.Any]]:
    """The Status details: (known ones unpacked, unknown ones still packed)."""
    known: list[Message] = []
    unknown: list[any_pb2.Any] = []
    for packed in status.details:
        cls = DETAIL_TYPES.get(packed.type_url.rsplit("/", 1)[-1])
        if cls is None:
            unknown.append(packed)
            continue
        message = cls()
        if not packed.Unpack(message):
            raise DecodeError(f"cannot unpack {packed.type_url}")
        known.append(message)
    return known, unknown


def decode_error(err: grpc.RpcError) -> ServiceError:
    """The code, message and typed details of a failed call (unary or streaming)."""
    if not isinstance(err, grpc.Call):
        raise TypeError(f"not a finished gRPC call: {err!r}")
    status = status_from_error(err)
    known, unknown = unpack_details(status) if status else ([], [])
    return ServiceError(
        code=err.code(),
        message=status.message if status else (err.details() or ""),
        status=status,
        details=known,
        unknown=unknown,
    )
