/**
 * What each example must print: one entry per JSON document, in order, each a list of
 * checks. A check is a path that must be present (`a.b[0].c`), or `path=value` (the value
 * written as JSON, or bare text for a string). Paths name what a reader of the docs relies on,
 * so an answer that changes shape fails `npm run examples`.
 */
export const expectations: Record<string, string[][]> = {
  "01-retrieve-schema-then-keyword.sh": [
    ["session_id", "objects", "relations", "ranking_method", "round=1"],
    [
      "keyword_context.instances[0].instance_name=上、下气道梗阻",
      "keyword_context.instances[0].neighbors[0].relation_type_id",
    ],
  ],
  "02-retrieve-with-buf-curl.sh": [
    ["sessionId", "objectTypes[0].conceptId", "relationTypes[0].conceptId", "round=1"],
    ["keywordContextText", "sessionId"],
  ],
  "03-knowledge-retrieve-rest.sh": [
    ["objects", "relations", "session_id", "round=1"],
    ["keyword_context.context", "session_id"],
  ],
  "04-kn-search.sh": [
    ["object_types[0].concept_id", "nodes[0]", "session_id"],
    ["objectTypes[0].conceptId"],
    ["object_types[0].concept_id", "nodes", "session_id"],
  ],
  "05-rerank-concepts.sh": [
    ["rerankedConcepts[0].conceptId", "rerankedConcepts[0].rank=1"],
    ["reranked_concepts[0].concept_id=drug", "filtered_count"],
  ],
  "06-schema-actions-skills.sh": [
    ["object_types[0].concept_id=disease", "ranking_method"],
    ["objectTypes", "metricTypes[0]"],
    ["headers", "_dynamic_tools[0]"],
    ["entries[0]"],
  ],
  "07-query-instances.sh": [
    ["datas[0].disease_name", "datas[0]._instance_identity.disease_id", "total_count", "next_cursor"],
    ["entries[0].objects", "entries[0].relationPaths[0].relations[0].relationTypeId=has_symptom"],
    ["code=INVALID_CONDITION", "solution", "details.valid_values[0]"],
  ],
  "08-resolve-logic-properties.sh": [
    ["datas[0].approved_drug_count.datas[0].values[0]"],
    ["datas[0].approved_drug_count.step=month"],
  ],
  "09-memories.sh": [
    ["memory_key=db_config_001", "created=true", "keywords[0].keyword"],
    ["memoryKey=redis_002", "created=true"],
    ["success=true", "results[0].memory_key=db_config_001", "results[0].relevance_score"],
    ["memory_key=db_config_001", "content", "redacted=false"],
    ["deleted=true"],
    ["code=not_found", "details[0].debug.reason"],
  ],
  "10-memrecall-agent-tools.sh": [
    ["success=true", "keywords[0].keyword", "method"],
    ["tools[0].function.name=search_memories"],
    ["approved=true", "new_size=10"],
    ["success=true", "message"],
  ],
  "11-recall-stream.sh": [
    ["memory_key=db_config_001", "created=true"],
    ["sequence=1", "iterationStarted.windowSize=3"],
    ["toolCall.name"],
    ["toolResult"],
  ],
  "12-mcp-over-http.sh": [
    ["result.tools[0].name=retrieve_schema", "result.tools[0].outputSchema.type=object", "jsonrpc=2.0"],
    ["result.content[0].text", "result.structuredContent.object_types[0].concept_id", "id=2"],
    ["result.content[0].text", "result.structuredContent.datas[0]._instance_identity", "id=3"],
    [
      "result.structuredContent._dynamic_tools[0].parameters.properties.dynamic_params",
      "result.structuredContent._dynamic_tools[0].api_call_strategy=kn_action_recall",
      "id=4",
    ],
  ],
  "13-mcp-over-stdio.sh": [
    ["result.serverInfo.name=context-loader"],
    ["result.tools[0].name=retrieve_schema"],
    ["result.content[0].text", "id=3"],
  ],
  "14-health-and-reflection.sh": [
    ["status=ok"],
    ["status=ready"],
    ["status=SERVING"],
    ["[0]=contextloader.knowledge.v1.KnowledgeRetrievalService"],
  ],
  "15-errors.sh": [
    [
      "code=invalid_argument",
      "details[0].debug.reason=INVALID_ARGUMENT",
      "details[1].debug.field_violations[0].field=querry",
    ],
    ["code=failed_precondition", "details[0].debug.metadata.trace_id"],
    ["code=unauthenticated", "details[0].debug.reason=ACCOUNT_REQUIRED"],
  ],
  "16-errors-with-buf-curl.sh": [
    [
      "code=failed_precondition",
      "details[0].debug.reason=SCHEMA_NOT_IN_SESSION",
      "details[1].debug.next_rpc=contextloader.knowledge.v1.KnowledgeRetrievalService/RetrieveSchema",
    ],
  ],
  "17-remember-conversation.sh": [
    ["memory_key=pref_weekly_chart", "created=true"],
    [
      "mode=rules",
      "applied=true",
      "operations[0].operation=ADD",
      "operations[2].memory_type=command",
      "operations[3].operation=SUPERSEDE",
      "operations[3].supersedes=pref_weekly_chart",
      "added=3",
      "superseded=1",
    ],
    ["operations[0].operation=NOOP", "operations[3].operation=NOOP", "unchanged=4"],
    ["results[0].memory_key=pref_weekly_chart", "results[0].stated_at"],
    ["operations[0].sensitive=true", "operations[0].summary"],
  ],
  "README.md (First calls)": [
    ["session_id", "object_types[0].concept_id", "round=1"],
    ["keyword_context_text"],
    ["datas[0].approved_drug_count.datas[0].values[0]"],
    ["memory_key=db_config_001", "created=true"],
    ["success=true", "results[0].memory_key=db_config_001"],
    ["result.tools[0].name"],
    ["result.content[0].text", "id=2"],
  ],
  "README.md (First calls, block 2)": [["sessionId", "objectTypes[0].conceptId"], ["keywordContextText"]],
};

/** The last document of a stream that must end a certain way (checked beside the ones above). */
export const lastDocument: Record<string, string[]> = {
  "11-recall-stream.sh": ["handoff.relevantMemoryKeys[0]=db_config_001", "handoff.strategy=deterministic"],
};
