"""contextloader_errors without a server: a Status in the trailer, as the service writes it.

    cd clients/python && /usr/bin/python3 -m unittest -v test_contextloader_errors

The example covers ErrorInfo, BadRequest and AgentHint from a live service;
MissingParams needs an LLM and RetryInfo an overloaded server, so they are
checked here from a Status built the same way.
"""

import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "gen"))

import grpc  # noqa: E402
from google.protobuf import any_pb2, duration_pb2, struct_pb2  # noqa: E402

from contextloader.common.v1 import errors_pb2  # noqa: E402
from contextloader.resolver.v1 import resolver_pb2  # noqa: E402
from contextloader_errors import STATUS_DETAILS_KEY, decode_error, status_from_error  # noqa: E402
from google.rpc import error_details_pb2, status_pb2  # noqa: E402


class FinishedCall(grpc.RpcError, grpc.Call):
    """What grpcio raises for a failed call: an RpcError that is also a grpc.Call."""

    def __init__(self, code, message, trailers):
        self._code, self._message, self._trailers = code, message, trailers

    def code(self):
        return self._code

    def details(self):
        return self._message

    def trailing_metadata(self):
        return self._trailers

    def initial_metadata(self):
        return ()

    def is_active(self):
        return False

    def time_remaining(self):
        return None

    def cancel(self):
        return False

    def add_callback(self, callback):
        return False


def packed(message):
    holder = any_pb2.Any()
    holder.Pack(message)
    return holder


def missing_input_params_status():
    missing = resolver_pb2.MissingParams(
        missing=[
            resolver_pb2.MissingProperty(
                property="approved_drug_count",
                params=[resolver_pb2.MissingParam(name="step", type="STRING", hint="在 additional_context 中说明趋势粒度")],
            )
        ],
        trace_id="0af7651916cd43dd8448eb211c80319c",
    )
    return status_pb2.Status(
        code=grpc.StatusCode.FAILED_PRECONDITION.value[0],
        message="dynamic_params 缺少必需的 input 参数",
        details=[
            packed(
                error_details_pb2.ErrorInfo(
                    reason="MISSING_INPUT_PARAMS",
                    domain="contextloader",
                    metadata={"trace_id": "0af7651916cd43dd8448eb211c80319c", "properties": "approved_drug_count"},
                )
            ),
            packed(errors_pb2.AgentHint(message="按 missing 中每个参数的 hint 补充 additional_context，然后重试。")),
            packed(missing),
            packed(struct_pb2.Struct()),  # a type this helper does not know
        ],
    )


class DecodeErrorTest(unittest.TestCase):
    def test_unpacks_every_detail_the_service_sends(self):
        status = missing_input_params_status()
        err = FinishedCall(
            grpc.StatusCode.FAILED_PRECONDITION,
            status.message,
            (("x-trace-id", "0af7651916cd43dd8448eb211c80319c"), (STATUS_DETAILS_KEY, status.SerializeToString())),
        )
        error = decode_error(err)
        self.assertEqual(error.code, grpc.StatusCode.FAILED_PRECONDITION)
        self.assertEqual(error.message, "dynamic_params 缺少必需的 input 参数")
        self.assertEqual(error.reason, "MISSING_INPUT_PARAMS")
        self.assertEqual(error.trace_id, "0af7651916cd43dd8448eb211c80319c")
        self.assertEqual(error.missing_params.missing[0].params[0].name, "step")
        self.assertIn("additional_context", error.agent_hint.message)
        self.assertIsNone(error.bad_request)
        self.assertEqual(error.field_violations(), {})
        self.assertEqual([a.type_url for a in error.unknown], ["type.googleapis.com/google.protobuf.Struct"])

    def test_reads_retry_info(self):
        status = status_pb2.Status(
            code=grpc.StatusCode.RESOURCE_EXHAUSTED.value[0],
            message="the server is at its limit of calls",
            details=[
                packed(error_details_pb2.ErrorInfo(reason="OVERLOADED", domain="contextloader")),
                packed(error_details_pb2.RetryInfo(retry_delay=duration_pb2.Duration(seconds=1, nanos=500_000_000))),
            ],
        )
        err = FinishedCall(grpc.StatusCode.RESOURCE_EXHAUSTED, status.message, ((STATUS_DETAILS_KEY, status.SerializeToString()),))
        error = decode_error(err)
        self.assertEqual(error.retry_info.retry_delay.ToMilliseconds(), 1500)
        self.assertEqual(error.reason, "OVERLOADED")
        self.assertEqual(error.trace_id, "")

    def test_without_the_trailer_keeps_code_and_message(self):
        error = decode_error(FinishedCall(grpc.StatusCode.UNAVAILABLE, "failed to connect to all addresses", ()))
        self.assertIsNone(error.status)
        self.assertEqual(error.details, [])
        self.assertEqual(error.message, "failed to connect to all addresses")
        self.assertEqual(error.reason, "")

    def test_a_trailer_of_another_code_is_refused(self):
        status = missing_input_params_status()
        err = FinishedCall(grpc.StatusCode.INTERNAL, "x", ((STATUS_DETAILS_KEY, status.SerializeToString()),))
        with self.assertRaises(ValueError):
            status_from_error(err)


if __name__ == "__main__":
    unittest.main()
