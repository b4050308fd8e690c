#!/usr/bin/python3
"""Calls each of context-loader's three services over gRPC from generated stubs.

    /usr/bin/python3 clients/python/example.py http://127.0.0.1:8080

Knowledge: RetrieveSchema, then RetrieveKeywordContext in the same session.
Resolver: a metric logic property that needs no LLM (上个月 with instant=true).
Memories: StoreMemory, SearchMemories, the streaming Recall, DeleteMemory.
Errors: a missing request field, step two before step one, a memory call
without an account, each decoded to its typed details.

Every answer is checked; the first wrong one ends the run with exit status 1.
Generate the stubs first (clients/python/gen/, see docs/clients/python.md).
"""

from __future__ import annotations

import os
import random
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "gen"))

import grpc  # noqa: E402
from google.protobuf import struct_pb2  # noqa: E402

from contextloader.knowledge.v1 import knowledge_pb2 as kn  # noqa: E402
from contextloader.knowledge.v1.knowledge_pb2_grpc import KnowledgeRetrievalServiceStub  # noqa: E402
from contextloader.memrecall.v1 import memrecall_pb2 as mem  # noqa: E402
from contextloader.memrecall.v1.memrecall_pb2_grpc import MemRecallServiceStub  # noqa: E402
from contextloader.resolver.v1 import resolver_pb2 as res  # noqa: E402
from contextloader.resolver.v1.resolver_pb2_grpc import LogicPropertyResolverServiceStub  # noqa: E402
from contextloader_channel import account_channel, plain_channel  # noqa: E402
from contextloader_errors import ServiceError, decode_error  # noqa: E402

# Every call gets a deadline (sent as grpc-timeout); past it the call ends with DEADLINE_EXCEEDED.
TIMEOUT_S = 15
RETRIEVE_SCHEMA = "contextloader.knowledge.v1.KnowledgeRetrievalService/RetrieveSchema"


class WrongAnswer(Exception):
    pass


def check(condition: bool, what: str) -> None:
    if not condition:
        raise WrongAnswer(what)
    print(f"  ok: {what}")


def struct(values: dict) -> struct_pb2.Struct:
    s = struct_pb2.Struct()
    s.update(values)
    return s


def expect_error(name: str, call, request, code: grpc.StatusCode) -> ServiceError:
    """Makes a call that must fail with code; returns its decoded error."""
    try:
        call(request, timeout=TIMEOUT_S)
    except grpc.RpcError as err:
        error = decode_error(err)
        print(f"  {error.code.name} {error.reason}: {error.message}")
        for field_name, description in error.field_violations().items():
            print(f"    field {field_name}: {description}")
        if error.agent_hint:
            print(f"    hint: {error.agent_hint.message} next_rpc={error.agent_hint.next_rpc!r}")
        check(error.code == code, f"code {code.name}")
        check(error.error_info is not None and error.error_info.domain == "contextloader", "ErrorInfo, domain contextloader")
        check(error.trace_id != "", f"trace id {error.trace_id}")
        return error
    raise WrongAnswer(f"{name} succeeded; expected {code.name}")


def knowledge(channel: grpc.Channel, run: str) -> None:
    print("knowledge: RetrieveSchema, then RetrieveKeywordContext")
    stub = KnowledgeRetrievalServiceStub(channel)
    session = f"py-schema-{run}"
    schema = stub.RetrieveSchema(
        kn.RetrieveSchemaRequest(
            query="上气道梗阻有哪些症状",
            kn_ids=[kn.KnowledgeNetworkRef(knowledge_network_id="kn_medical")],
            session_id=session,
            top_k=5,
            # The default (true) puts the schema in YAML text (`objects`, `relations`);
            # false fills the structured object_types and relation_types.
            compact_format=False,
        ),
        timeout=TIMEOUT_S,
    )
    concepts = [o.concept_id for o in schema.object_types]
    print(f"  object types: {concepts}; relation types: {len(schema.relation_types)}; round {schema.round}")
    check(schema.session_id == session, "the session id is echoed")
    check("disease" in concepts, "object type disease recalled")
    check(schema.round == 1, "round 1")

    context = stub.RetrieveKeywordContext(
        kn.RetrieveKeywordContextRequest(
            query="上气道梗阻", session_id=session, object_type_id="disease", compact_format=False
        ),
        timeout=TIMEOUT_S,
    )
    instances = context.keyword_context.instances
    check(len(instances) > 0, "instances found")
    first = instances[0]
    print(f"  {first.instance_name}: {len(first.neighbors)} neighbours, e.g. {first.neighbors[0].relation_type_id if first.neighbors else '-'}")
    check(first.instance_name == "上、下气道梗阻", "first instance 上、下气道梗阻")
    check(len(first.neighbors) > 0 and first.neighbors[0].relation_type_id != "", "one-hop neighbours with their relation type")


def resolver(channel: grpc.Channel) -> None:
    print("resolver: ResolveLogicProperties")
    answer = LogicPropertyResolverServiceStub(channel).ResolveLogicProperties(
        res.ResolveLogicPropertiesRequest(
            kn_id="kn_medical",
            ot_id="company",
            query="上个月这些企业上市了多少药品",
            unique_identities=[struct({"company_id": "company_000001"})],
            properties=["approved_drug_count"],
            additional_context="instant=true",
        ),
        timeout=TIMEOUT_S,
    )
    check(len(answer.datas) == 1, "one row per identity")
    row = answer.datas[0]
    check(row["company_id"] == "company_000001", "the row carries its primary key")
    metric = row["approved_drug_count"]
    values = metric["datas"][0]["values"]
    print(f"  approved_drug_count: {list(values)}")
    check(len(values) > 0, "approved_drug_count has a value")
    check(answer.trace_id != "", "trace id")


def memories(channel: grpc.Channel) -> None:
    print("memories: StoreMemory, SearchMemories, Recall (streaming), DeleteMemory")
    stub = MemRecallServiceStub(channel)
    stored = stub.StoreMemory(
        mem.StoreMemoryRequest(
            memory_key="db_config_001",
            memory_type="project_fact",
            summary="生产环境 PostgreSQL 数据库配置",
            content="host=pg-prod.internal port=5432 database=analytics，连接池 max_connections=200",
            metadata=struct({"source": "chat"}),
        ),
        timeout=TIMEOUT_S,
    )
    check(stored.memory_key == "db_config_001" and stored.created, "db_config_001 created")
    stub.StoreMemory(
        mem.StoreMemoryRequest(
            memory_key="redis_002",
            memory_type="project_fact",
            summary="Redis cache settings",
            content="Redis 7, maxmemory 2gb, allkeys-lru",
        ),
        timeout=TIMEOUT_S,
    )

    found = stub.SearchMemories(mem.SearchMemoriesRequest(query="我之前的数据库配置"), timeout=TIMEOUT_S)
    print(f"  search: {[(r.memory_key, round(r.relevance_score, 2)) for r in found.results]}")
    check(found.success and len(found.results) > 0, "search succeeded with results")
    check(found.results[0].memory_key == "db_config_001", "best result db_config_001")

    # A server stream: iterate as events arrive; the deadline covers the whole stream.
    stream = stub.Recall(
        mem.RecallRequest(
            messages=[
                mem.ConversationMessage(role="user", content="帮我建一个报表数据源"),
                mem.ConversationMessage(role="assistant", content="好的，用哪个数据库？"),
                mem.ConversationMessage(role="user", content="按照我之前的数据库配置来"),
            ]
        ),
        timeout=TIMEOUT_S,
    )
    sequences, kinds = [], []
    for event in stream:
        sequences.append(event.sequence)
        kinds.append(event.WhichOneof("event"))
        print(f"  recall #{event.sequence} +{event.elapsed_ms}ms {kinds[-1]}")
    check(sequences == list(range(1, len(sequences) + 1)), "events numbered 1, 2, ... in order")
    check(kinds[0] == "iteration_started", "the stream starts with iteration_started")
    check(kinds.count("handoff") == 1 and kinds[-1] == "handoff", "exactly one handoff, last")
    handoff = event.handoff
    print(f"  handoff: {list(handoff.relevant_memory_keys)} confidence {handoff.confidence:.2f} ({handoff.strategy})")
    check(list(handoff.relevant_memory_keys[:1]) == ["db_config_001"], "Recall finds db_config_001")
    check(handoff.memories[0].content.startswith("host=pg-prod.internal"), "the handoff carries the memory in full")

    for key in ("db_config_001", "redis_002"):
        check(stub.DeleteMemory(mem.DeleteMemoryRequest(memory_key=key), timeout=TIMEOUT_S).deleted, f"{key} deleted")


def errors(channel: grpc.Channel, base_url: str, run: str) -> None:
    print("errors: a missing field")
    error = expect_error(
        "ResolveLogicProperties",
        LogicPropertyResolverServiceStub(channel).ResolveLogicProperties,
        res.ResolveLogicPropertiesRequest(
            kn_id="kn_medical", ot_id="company", query="上个月上市了多少药品",
            unique_identities=[struct({"company_id": "company_000001"})],
        ),
        grpc.StatusCode.INVALID_ARGUMENT,
    )
    check(error.reason == "INVALID_ARGUMENT", "reason INVALID_ARGUMENT")
    check(list(error.field_violations()) == ["properties"], "BadRequest names properties, and only it")
    check(error.agent_hint is not None and error.agent_hint.message != "", "AgentHint says what to do")

    print("errors: RetrieveKeywordContext before RetrieveSchema")
    error = expect_error(
        "RetrieveKeywordContext",
        KnowledgeRetrievalServiceStub(channel).RetrieveKeywordContext,
        kn.RetrieveKeywordContextRequest(query="上气道梗阻", session_id=f"py-err-{run}", object_type_id="disease"),
        grpc.StatusCode.FAILED_PRECONDITION,
    )
    check(error.reason == "SCHEMA_NOT_IN_SESSION", "reason SCHEMA_NOT_IN_SESSION")
    check(error.agent_hint is not None and error.agent_hint.next_rpc == RETRIEVE_SCHEMA, "AgentHint.next_rpc is RetrieveSchema")

    print("errors: a memory call without x-account-id")
    anonymous = plain_channel(base_url)
    try:
        error = expect_error(
            "SearchMemories",
            MemRecallServiceStub(anonymous).SearchMemories,
            mem.SearchMemoriesRequest(query="数据库配置"),
            grpc.StatusCode.UNAUTHENTICATED,
        )
    finally:
        anonymous.close()
    check(error.reason == "ACCOUNT_REQUIRED", "reason ACCOUNT_REQUIRED")
    check(error.agent_hint is not None and "x-account-id" in error.agent_hint.message, "AgentHint names x-account-id")

    print("errors: a deadline that passes before the answer")
    try:
        KnowledgeRetrievalServiceStub(channel).RetrieveSchema(kn.RetrieveSchemaRequest(query="q"), timeout=0.000001)
        raise WrongAnswer("RetrieveSchema answered within a microsecond")
    except grpc.RpcError as err:
        error = decode_error(err)
        print(f"  {error.code.name}: {error.message}")
        check(error.code == grpc.StatusCode.DEADLINE_EXCEEDED, "code DEADLINE_EXCEEDED")
        # The client gave up: no answer, so no details; retry with a longer deadline.
        check(error.status is None and error.reason == "", "no Status: the client ended the call")


def main() -> int:
    base_url = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("BASE_URL", "http://127.0.0.1:8080")
    run = f"{int(time.time())}-{os.getpid()}-{random.randrange(1 << 16)}"
    started = time.monotonic()
    channel = account_channel(base_url, account_id=f"py-ex-{run}")
    try:
        knowledge(channel, run)
        resolver(channel)
        memories(channel)
        errors(channel, base_url, run)
    except WrongAnswer as wrong:
        print(f"WRONG ANSWER: {wrong}", file=sys.stderr)
        return 1
    except grpc.RpcError as err:
        error = decode_error(err)
        said = " ".join(part for part in (error.code.name, error.reason, error.message) if part)
        trace = f" (trace id {error.trace_id})" if error.trace_id else ""
        print(f"UNEXPECTED ERROR: {said}{trace}", file=sys.stderr)
        return 1
    finally:
        channel.close()
    print(f"python example passed in {time.monotonic() - started:.2f}s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
