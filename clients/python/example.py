#!/usr/bin/python3
"""Calls each of context-loader's three services over gRPC from generated stubs.

    /usr/bin/python3 clients/python/example.py http://127.0.0.1:8080

Knowledge: RetrieveSchema, then RetrieveKeywordContext in the same session.
Resolver: a metric logic property that needs no LLM (2025年2月 with instant=true).
Memories: StoreMemory, SearchMemories, the streaming Recall, DeleteMemory.
Errors: a missing field, a field of the wrong type (raw bytes through a generic
call), a memory call without an account and step two before step one, each
asked in English and in Chinese (the `language` metadata) and decoded to its
typed details: the code, reason and fields must be the same in both, and each
message in its language. Then a deadline that passes.

Every answer is checked; the first wrong one ends the run with exit status 1.
Generate the stubs first (clients/python/gen/, see docs/clients/python.md).
"""

from __future__ import annotations

import os
import random
import re
import sys
import time
from typing import Callable

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


# Han characters (CJK ideographs and their extension A): what makes a text Chinese here.
HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")
LANGUAGES = ("en", "zh")


def failed(name: str, call: Callable[[], object]) -> ServiceError:
    """Makes a call that must fail; returns its decoded error."""
    try:
        call()
    except grpc.RpcError as err:
        return decode_error(err)
    raise WrongAnswer(f"{name} succeeded; it must fail")


def same_error_in_both_languages(
    name: str, call: Callable[[str], object], code: grpc.StatusCode, reason: str, fields: list[str]
) -> dict[str, ServiceError]:
    """Makes one mistake once per language (`call(language)` sends the `language` metadata).

    Both answers must carry code, reason and the BadRequest fields (in that order), an AgentHint,
    the domain and a trace id; the English one no Chinese in its message, hint or violations, the
    Chinese one Chinese in its message and hint. Prints one line.
    """
    answers = {language: failed(f"{name} ({language})", lambda: call(language)) for language in LANGUAGES}
    for language, error in answers.items():
        said = (error.code, error.reason, list(error.field_violations()))
        if said != (code, reason, fields):
            raise WrongAnswer(f"{name} ({language}): {said[0].name} {said[1]} fields {said[2]}; expected {code.name} {reason} fields {fields}")
        if error.error_info.domain != "contextloader" or error.trace_id == "":
            raise WrongAnswer(f"{name} ({language}): ErrorInfo without domain contextloader or trace id: {error.error_info}")
        if error.agent_hint is None or error.agent_hint.message == "":
            raise WrongAnswer(f"{name} ({language}): no AgentHint")
    en, zh = answers["en"], answers["zh"]
    if en.agent_hint.next_rpc != zh.agent_hint.next_rpc:
        raise WrongAnswer(f"{name}: AgentHint.next_rpc {en.agent_hint.next_rpc!r} in English, {zh.agent_hint.next_rpc!r} in Chinese")
    english = [en.message, en.agent_hint.message, *en.field_violations().values()]
    if any(HAN.search(text) for text in english):
        raise WrongAnswer(f"{name}: Chinese in the English answer: {english}")
    if not (HAN.search(zh.message) and HAN.search(zh.agent_hint.message)):
        raise WrongAnswer(f"{name}: no Chinese in the Chinese answer: {zh.message!r}, hint {zh.agent_hint.message!r}")
    next_rpc = f" next_rpc={en.agent_hint.next_rpc}" if en.agent_hint.next_rpc else ""
    print(f"  ok {name}: {code.name} {reason} fields={fields}{next_rpc} | en: {en.message} (hint: {en.agent_hint.message}) | zh: {zh.message}")
    return answers


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
            query="2025年2月这些企业上市了多少药品",
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
    """The same mistakes as the Go and TypeScript examples, each asked in English and in Chinese."""
    print("errors: each mistake in English (language: en) and Chinese (language: zh); reasons and fields must not change")
    knowledge_stub = KnowledgeRetrievalServiceStub(channel)

    def language(code: str) -> list[tuple[str, str]]:
        return [("language", code)]

    same_error_in_both_languages(
        "missing field (RetrieveSchema without kn_ids)",
        lambda lang: knowledge_stub.RetrieveSchema(
            kn.RetrieveSchemaRequest(query="upper airway obstruction"), metadata=language(lang), timeout=TIMEOUT_S
        ),
        grpc.StatusCode.INVALID_ARGUMENT, "INVALID_ARGUMENT", ["kn_ids"],
    )

    # A wrong type cannot be built with the generated class, so send bytes: a valid request with
    # top_k (an int32, wire type varint) appended as a string (wire type length-delimited), through a
    # generic unary call whose serializers pass bytes through.
    raw_retrieve_schema = channel.unary_unary(f"/{RETRIEVE_SCHEMA}")
    top_k = kn.RetrieveSchemaRequest.DESCRIPTOR.fields_by_name["top_k"].number
    valid = kn.RetrieveSchemaRequest(
        query="upper airway obstruction", kn_ids=[kn.KnowledgeNetworkRef(knowledge_network_id="kn_medical")]
    ).SerializeToString()
    wrong_type = valid + bytes([top_k << 3 | 2, len(b"five")]) + b"five"
    same_error_in_both_languages(
        "wrong type (RetrieveSchema, top_k sent as a string)",
        lambda lang: raw_retrieve_schema(wrong_type, metadata=language(lang), timeout=TIMEOUT_S),
        grpc.StatusCode.INVALID_ARGUMENT, "INVALID_ARGUMENT", ["top_k"],
    )

    anonymous = plain_channel(base_url)
    try:
        search = MemRecallServiceStub(anonymous).SearchMemories
        answers = same_error_in_both_languages(
            "no account (SearchMemories without x-account-id)",
            lambda lang: search(mem.SearchMemoriesRequest(query="database settings"), metadata=language(lang), timeout=TIMEOUT_S),
            grpc.StatusCode.UNAUTHENTICATED, "ACCOUNT_REQUIRED", [],
        )
    finally:
        anonymous.close()
    check("x-account-id" in answers["en"].agent_hint.message, "the AgentHint names x-account-id")

    answers = same_error_in_both_languages(
        "out of order (RetrieveKeywordContext before RetrieveSchema)",
        lambda lang: knowledge_stub.RetrieveKeywordContext(
            kn.RetrieveKeywordContextRequest(query="upper airway obstruction", session_id=f"py-err-{run}", object_type_id="disease"),
            metadata=language(lang), timeout=TIMEOUT_S,
        ),
        grpc.StatusCode.FAILED_PRECONDITION, "SCHEMA_NOT_IN_SESSION", [],
    )
    check(answers["en"].agent_hint.next_rpc == RETRIEVE_SCHEMA, "AgentHint.next_rpc is RetrieveSchema")

    print("errors: a deadline that passes (grpc.health.v1.Health/Watch, a stream that never ends by itself)")
    # Our RPCs answer in a millisecond or two, faster than any deadline short enough for an example
    # could pass, so the deadline goes on Watch: it sends the server's status, then waits for changes
    # until the caller stops. The request is an empty HealthCheckRequest (the whole server); no
    # stubs are generated for grpc/health, so bytes go in and come out as they are.
    watch = channel.unary_stream("/grpc.health.v1.Health/Watch")
    statuses = []
    try:
        for status in watch(b"", timeout=0.3):
            statuses.append(status)
        raise WrongAnswer("Health/Watch ended before its deadline")
    except grpc.RpcError as err:
        error = decode_error(err)
        # Usually grpcio gives up first: no answer, so no Status and no details. Should the service
        # see the deadline pass first, it answers DEADLINE_EXCEEDED itself, with that reason.
        ended_by = "the client" if error.status is None else f"the service ({error.reason})"
        print(f"  {len(statuses)} status message(s), then {error.code.name}: {error.message}; ended by {ended_by}")
        check(len(statuses) >= 1, "Watch sent the status before the deadline")
        check(error.code == grpc.StatusCode.DEADLINE_EXCEEDED, "code DEADLINE_EXCEEDED")
        check(error.status is None or error.reason == "DEADLINE_EXCEEDED", "no Status, or reason DEADLINE_EXCEEDED")


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
