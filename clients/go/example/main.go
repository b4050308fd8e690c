// Command example calls context-loader's three services over gRPC with the Go
// stubs that clients/go/generate.sh writes, and checks each answer:
//
//   - knowledge: RetrieveSchema, then RetrieveKeywordContext for a keyword of it;
//   - resolver: ResolveLogicProperties for a metric whose parameters the question decides;
//   - memories: StoreMemory, SearchMemories, and the server-streaming Recall;
//   - errors: a missing field, a field of the wrong type (raw bytes), a call
//     without an account and a call out of order, each asked in English and in
//     Chinese and decoded from the status details (ErrorInfo, BadRequest,
//     AgentHint): code, reason and fields must match, each message be in its language.
//
// It exits 1 at the first answer that is not what the service must say.
//
//	BASE_URL=http://127.0.0.1:8080 go run ./clients/go/example   (GOPATH mode, see docs/clients/go.md)
package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/url"
	"os"
	"regexp"
	"strings"
	"time"

	knowledgev1 "contextloader.example/gen/go/contextloader/knowledge/v1"
	memrecallv1 "contextloader.example/gen/go/contextloader/memrecall/v1"
	resolverv1 "contextloader.example/gen/go/contextloader/resolver/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"
)

// Every call gets a deadline; the service passes what remains of it to its
// upstream calls and answers DEADLINE_EXCEEDED when it runs out.
const (
	callTimeout   = 10 * time.Second
	streamTimeout = 30 * time.Second
)

const retrieveSchema = "contextloader.knowledge.v1.KnowledgeRetrievalService/RetrieveSchema"

func main() {
	baseURL := os.Getenv("BASE_URL")
	if baseURL == "" {
		baseURL = "http://127.0.0.1:8080"
	}
	// Names unique to this run, so that no run depends on an earlier one.
	run := fmt.Sprintf("%d-%d", time.Now().UnixNano(), os.Getpid())
	account := "go-example-" + run

	conn, err := dial(baseURL, account)
	if err != nil {
		fail("dial %s: %v", baseURL, err)
	}
	defer conn.Close()
	// A second connection without the account interceptor, for the call that
	// shows what a missing account answers.
	anonymous, err := dial(baseURL, "")
	if err != nil {
		fail("dial %s: %v", baseURL, err)
	}
	defer anonymous.Close()

	knowledge := knowledgev1.NewKnowledgeRetrievalServiceClient(conn)
	resolver := resolverv1.NewLogicPropertyResolverServiceClient(conn)
	memories := memrecallv1.NewMemRecallServiceClient(conn)

	retrieveSchemaThenKeyword(knowledge, "go-schema-"+run)
	resolveMetric(resolver)
	storeSearchRecall(memories)
	decodeErrors(conn, knowledge, memrecallv1.NewMemRecallServiceClient(anonymous), "go-err-"+run)
	fmt.Println("go example: all answers as expected")
}

// dial connects over h2c (http://) or TLS (https://). The service serves gRPC
// on the same port as Connect and gRPC-web. A non-empty account is sent as
// x-account-id on every call by the two interceptors: set once, here.
func dial(baseURL, account string) (*grpc.ClientConn, error) {
	u, err := url.Parse(baseURL)
	if err != nil {
		return nil, err
	}
	opts := []grpc.DialOption{grpc.WithBlock()}
	switch u.Scheme {
	case "http":
		// grpc-go 1.33 (Debian 12) has no insecure.NewCredentials yet.
		opts = append(opts, grpc.WithInsecure())
	case "https":
		opts = append(opts, grpc.WithTransportCredentials(credentials.NewTLS(&tls.Config{})))
	default:
		return nil, fmt.Errorf("BASE_URL must start with http:// or https://, got %q", baseURL)
	}
	if account != "" {
		withAccount := func(ctx context.Context) context.Context {
			return metadata.AppendToOutgoingContext(ctx, "x-account-id", account, "x-account-type", "user")
		}
		opts = append(opts,
			grpc.WithUnaryInterceptor(func(ctx context.Context, method string, req, reply interface{}, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, callOpts ...grpc.CallOption) error {
				return invoker(withAccount(ctx), method, req, reply, cc, callOpts...)
			}),
			grpc.WithStreamInterceptor(func(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, callOpts ...grpc.CallOption) (grpc.ClientStream, error) {
				return streamer(withAccount(ctx), desc, cc, method, callOpts...)
			}),
		)
	}
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	host := u.Host
	if u.Port() == "" {
		host += map[string]string{"http": ":80", "https": ":443"}[u.Scheme]
	}
	return grpc.DialContext(ctx, host, opts...)
}

func retrieveSchemaThenKeyword(client knowledgev1.KnowledgeRetrievalServiceClient, session string) {
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	// compact_format defaults to true, which puts the schema in the YAML text of
	// `objects`/`relations` and leaves object_types empty; false fills the lists.
	schema, err := client.RetrieveSchema(ctx, &knowledgev1.RetrieveSchemaRequest{
		Query:         "上气道梗阻有哪些症状",
		KnIds:         []*knowledgev1.KnowledgeNetworkRef{{KnowledgeNetworkId: "kn_medical"}},
		SessionId:     session,
		TopK:          proto.Int32(5),
		CompactFormat: proto.Bool(false),
	})
	check(err, "RetrieveSchema")
	var ids []string
	for _, ot := range schema.ObjectTypes {
		ids = append(ids, ot.ConceptId)
	}
	expect(contains(ids, "disease"), "RetrieveSchema: object types %v should include disease", ids)
	expect(schema.SessionId == session && schema.Round == 1, "RetrieveSchema: session %q round %d, want %q round 1", schema.SessionId, schema.Round, session)
	fmt.Printf("ok  knowledge RetrieveSchema: %d object types %v, %d relation types\n", len(ids), ids, len(schema.RelationTypes))

	ctx2, cancel2 := context.WithTimeout(context.Background(), callTimeout)
	defer cancel2()
	kc, err := client.RetrieveKeywordContext(ctx2, &knowledgev1.RetrieveKeywordContextRequest{
		Query:         "上气道梗阻",
		SessionId:     session,
		ObjectTypeId:  "disease",
		CompactFormat: proto.Bool(false),
	})
	check(err, "RetrieveKeywordContext")
	instances := kc.GetKeywordContext().GetInstances()
	expect(len(instances) > 0, "RetrieveKeywordContext: no instances for 上气道梗阻")
	first := instances[0]
	expect(first.InstanceName == "上、下气道梗阻", "RetrieveKeywordContext: first instance %q, want 上、下气道梗阻", first.InstanceName)
	expect(len(first.Neighbors) > 0, "RetrieveKeywordContext: %s has no neighbours", first.InstanceName)
	fmt.Printf("ok  knowledge RetrieveKeywordContext: %s with %d neighbours (first: %s)\n", first.InstanceName, len(first.Neighbors), first.Neighbors[0].RelationTypeId)
}

func resolveMetric(client resolverv1.LogicPropertyResolverServiceClient) {
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	identity, err := structpb.NewStruct(map[string]interface{}{"company_id": "company_000001"})
	check(err, "structpb.NewStruct")
	// 2025年2月 with instant=true decides every parameter, so no LLM is needed; a named month, not 上个月:
	// the sample data ends in September 2026.
	res, err := client.ResolveLogicProperties(ctx, &resolverv1.ResolveLogicPropertiesRequest{
		KnId:              "kn_medical",
		OtId:              "company",
		Query:             "2025年2月这些企业上市了多少药品",
		UniqueIdentities:  []*structpb.Struct{identity},
		Properties:        []string{"approved_drug_count"},
		AdditionalContext: "instant=true",
	})
	check(err, "ResolveLogicProperties")
	expect(len(res.Datas) == 1, "ResolveLogicProperties: %d rows, want 1", len(res.Datas))
	row := res.Datas[0].AsMap()
	expect(row["company_id"] == "company_000001", "ResolveLogicProperties: row for %v, want company_000001", row["company_id"])
	metric, _ := row["approved_drug_count"].(map[string]interface{})
	series, _ := metric["datas"].([]interface{})
	expect(len(series) == 1, "ResolveLogicProperties: approved_drug_count has %d series, want 1: %v", len(series), metric)
	values, _ := series[0].(map[string]interface{})["values"].([]interface{})
	expect(len(values) == 1, "ResolveLogicProperties: instant query gave %d values, want 1", len(values))
	_, isNumber := values[0].(float64)
	expect(isNumber, "ResolveLogicProperties: value %v is not a number", values[0])
	fmt.Printf("ok  resolver ResolveLogicProperties: approved_drug_count = %v (trace %s)\n", values[0], res.TraceId)
}

func storeSearchRecall(client memrecallv1.MemRecallServiceClient) {
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	stored, err := client.StoreMemory(ctx, &memrecallv1.StoreMemoryRequest{
		MemoryKey:  "db_config_001",
		MemoryType: "project_fact",
		Summary:    "生产环境 PostgreSQL 数据库配置",
		Content:    "host=pg-prod.internal port=5432 database=analytics，连接池 max_connections=200",
	})
	check(err, "StoreMemory")
	expect(stored.Created && stored.MemoryKey == "db_config_001", "StoreMemory: created=%v key=%q, want a new db_config_001", stored.Created, stored.MemoryKey)
	_, err = client.StoreMemory(ctx, &memrecallv1.StoreMemoryRequest{
		MemoryKey: "redis_002", MemoryType: "project_fact",
		Summary: "Redis cache settings", Content: "Redis 7, maxmemory 2gb, allkeys-lru",
	})
	check(err, "StoreMemory")
	fmt.Printf("ok  memrecall StoreMemory: db_config_001 and redis_002 (%d keywords extracted for the first)\n", len(stored.Keywords))

	found, err := client.SearchMemories(ctx, &memrecallv1.SearchMemoriesRequest{Query: "我之前的数据库配置"})
	check(err, "SearchMemories")
	expect(found.Success && len(found.Results) > 0, "SearchMemories: success=%v, %d results", found.Success, len(found.Results))
	expect(found.Results[0].MemoryKey == "db_config_001", "SearchMemories: first result %q, want db_config_001", found.Results[0].MemoryKey)
	fmt.Printf("ok  memrecall SearchMemories: %s first (relevance %.2f) of %d\n", found.Results[0].MemoryKey, found.Results[0].RelevanceScore, found.TotalFound)

	// Recall streams the recall agent's events as they happen; the last is the handoff.
	streamCtx, streamCancel := context.WithTimeout(context.Background(), streamTimeout)
	defer streamCancel()
	stream, err := client.Recall(streamCtx, &memrecallv1.RecallRequest{Messages: []*memrecallv1.ConversationMessage{
		{Role: "user", Content: "帮我建一个报表数据源"},
		{Role: "assistant", Content: "好的，用哪个数据库？"},
		{Role: "user", Content: "按照我之前的数据库配置来"},
	}})
	check(err, "Recall")
	var events []*memrecallv1.RecallResponse
	for {
		ev, err := stream.Recv()
		if err == io.EOF {
			break
		}
		check(err, "Recall (receiving)")
		events = append(events, ev)
		switch e := ev.Event.(type) {
		case *memrecallv1.RecallResponse_IterationStarted:
			fmt.Printf("    recall #%d iteration %d started\n", ev.Sequence, e.IterationStarted.Iteration)
		case *memrecallv1.RecallResponse_ToolCall:
			fmt.Printf("    recall #%d tool call %s\n", ev.Sequence, e.ToolCall.Name)
		case *memrecallv1.RecallResponse_ToolResult:
			fmt.Printf("    recall #%d tool result %s ok=%v %s\n", ev.Sequence, e.ToolResult.Name, e.ToolResult.Ok, e.ToolResult.Summary)
		case *memrecallv1.RecallResponse_WindowExpanded:
			fmt.Printf("    recall #%d window expanded\n", ev.Sequence)
		case *memrecallv1.RecallResponse_Handoff:
			fmt.Printf("    recall #%d handoff: %v\n", ev.Sequence, e.Handoff.RelevantMemoryKeys)
		}
	}
	expect(len(events) >= 2, "Recall: %d events, want at least an iteration start and a handoff", len(events))
	for i, ev := range events {
		expect(ev.Sequence == int32(i+1), "Recall: event %d has sequence %d", i+1, ev.Sequence)
	}
	expect(events[0].GetIterationStarted() != nil, "Recall: the first event is not iteration_started: %v", events[0])
	handoff := events[len(events)-1].GetHandoff()
	expect(handoff != nil, "Recall: the last event is not the handoff: %v", events[len(events)-1])
	expect(contains(handoff.RelevantMemoryKeys, "db_config_001"), "Recall: handoff keys %v should include db_config_001", handoff.RelevantMemoryKeys)
	fmt.Printf("ok  memrecall Recall: %d events streamed, handoff names %v\n", len(events), handoff.RelevantMemoryKeys)
}

// decodeErrors makes the mistakes the Python and TypeScript examples make, each
// once in English and once in Chinese (the `language` metadata), and checks
// that both answers carry the same code, reason, BadRequest fields and next
// step, and that each message is in the language asked for.
func decodeErrors(conn *grpc.ClientConn, knowledge knowledgev1.KnowledgeRetrievalServiceClient, anonymous memrecallv1.MemRecallServiceClient, session string) {
	// A required field left out.
	sameErrorInBothLanguages("missing field (RetrieveSchema without kn_ids)", func(ctx context.Context) error {
		_, err := knowledge.RetrieveSchema(ctx, &knowledgev1.RetrieveSchemaRequest{Query: "upper airway obstruction"})
		return err
	}, codes.InvalidArgument, "INVALID_ARGUMENT", []string{"kn_ids"})

	// A field of the wrong type, which no generated message can express: the
	// bytes of a valid request with top_k (an int32, a varint on the wire)
	// appended as a string, sent by conn.Invoke with a codec that passes bytes through.
	valid, err := proto.Marshal(&knowledgev1.RetrieveSchemaRequest{
		Query: "upper airway obstruction",
		KnIds: []*knowledgev1.KnowledgeNetworkRef{{KnowledgeNetworkId: "kn_medical"}},
	})
	check(err, "proto.Marshal")
	topK := (&knowledgev1.RetrieveSchemaRequest{}).ProtoReflect().Descriptor().Fields().ByName("top_k").Number()
	wrongType := protowire.AppendString(protowire.AppendTag(valid, topK, protowire.BytesType), "five")
	sameErrorInBothLanguages("wrong type (RetrieveSchema, top_k sent as a string)", func(ctx context.Context) error {
		var reply []byte
		return conn.Invoke(ctx, "/"+retrieveSchema, wrongType, &reply, grpc.ForceCodec(rawCodec{}))
	}, codes.InvalidArgument, "INVALID_ARGUMENT", []string{"top_k"})

	// No x-account-id: MemRecall refuses with UNAUTHENTICATED.
	en, _ := sameErrorInBothLanguages("no account (SearchMemories without x-account-id)", func(ctx context.Context) error {
		_, err := anonymous.SearchMemories(ctx, &memrecallv1.SearchMemoriesRequest{Query: "database settings"})
		return err
	}, codes.Unauthenticated, "ACCOUNT_REQUIRED", nil)
	expect(strings.Contains(en.AgentHint.Message, "x-account-id"), "no account: the AgentHint %q does not name x-account-id", en.AgentHint.Message)

	// Step two before step one: FAILED_PRECONDITION whose hint names the RPC to call first.
	en, _ = sameErrorInBothLanguages("out of order (RetrieveKeywordContext before RetrieveSchema)", func(ctx context.Context) error {
		_, err := knowledge.RetrieveKeywordContext(ctx, &knowledgev1.RetrieveKeywordContextRequest{
			Query: "upper airway obstruction", SessionId: session, ObjectTypeId: "disease",
		})
		return err
	}, codes.FailedPrecondition, "SCHEMA_NOT_IN_SESSION", nil)
	expect(en.AgentHint.NextRpc == retrieveSchema, "out of order: AgentHint.next_rpc %q, want %s", en.AgentHint.NextRpc, retrieveSchema)
}

// han matches a Chinese (Han) character.
var han = regexp.MustCompile(`[\x{3400}-\x{4DBF}\x{4E00}-\x{9FFF}]`)

// sameErrorInBothLanguages makes one mistake per language (call gets a context
// carrying the `language` metadata); both answers must have code, reason, the
// BadRequest fields in this order, an AgentHint with the same next_rpc, and a
// trace id; the English one no Chinese in its message, hint or violations, the
// Chinese one Chinese in its message and hint. Prints one line.
func sameErrorInBothLanguages(what string, call func(ctx context.Context) error, code codes.Code, reason string, fields []string) (en, zh *callError) {
	answer := func(language string) *callError {
		ctx, cancel := context.WithTimeout(metadata.AppendToOutgoingContext(context.Background(), "language", language), callTimeout)
		defer cancel()
		e := mustFail(call(ctx), what+" ("+language+")", code, reason)
		got := violationFields(e)
		expect(strings.Join(got, ",") == strings.Join(fields, ","), "%s (%s): BadRequest fields %v, want %v", what, language, got, fields)
		expect(e.AgentHint != nil && e.AgentHint.Message != "", "%s (%s): no AgentHint", what, language)
		return e
	}
	en, zh = answer("en"), answer("zh")
	expect(en.AgentHint.NextRpc == zh.AgentHint.NextRpc, "%s: AgentHint.next_rpc %q in English, %q in Chinese", what, en.AgentHint.NextRpc, zh.AgentHint.NextRpc)
	english := []string{en.Message, en.AgentHint.Message}
	if en.BadRequest != nil {
		for _, v := range en.BadRequest.FieldViolations {
			english = append(english, v.Description)
		}
	}
	for _, text := range english {
		expect(!han.MatchString(text), "%s: Chinese in the English answer: %q", what, text)
	}
	expect(han.MatchString(zh.Message) && han.MatchString(zh.AgentHint.Message),
		"%s: no Chinese in the Chinese answer: %q, hint %q", what, zh.Message, zh.AgentHint.Message)
	nextRPC := ""
	if en.AgentHint.NextRpc != "" {
		nextRPC = " next_rpc=" + en.AgentHint.NextRpc
	}
	fmt.Printf("ok  error, %s: %s %s fields=%v%s | en: %s (hint: %s) | zh: %s\n",
		what, code, reason, violationFields(en), nextRPC, en.Message, en.AgentHint.Message, zh.Message)
	return en, zh
}

// violationFields lists the fields BadRequest names, in its order; empty without one.
func violationFields(e *callError) []string {
	fields := []string{}
	if e.BadRequest != nil {
		for _, v := range e.BadRequest.FieldViolations {
			fields = append(fields, v.Field)
		}
	}
	return fields
}

// rawCodec sends a request's bytes as they are and keeps the reply's: for a
// request no generated message can express. Its name keeps the content type
// application/grpc+proto.
type rawCodec struct{}

func (rawCodec) Marshal(v interface{}) ([]byte, error) {
	b, ok := v.([]byte)
	if !ok {
		return nil, fmt.Errorf("rawCodec: %T is not []byte", v)
	}
	return b, nil
}

func (rawCodec) Unmarshal(data []byte, v interface{}) error {
	p, ok := v.(*[]byte)
	if !ok {
		return fmt.Errorf("rawCodec: %T is not *[]byte", v)
	}
	*p = append((*p)[:0], data...)
	return nil
}

func (rawCodec) Name() string { return "proto" }

// mustFail checks the code, the ErrorInfo reason and domain, and the trace id.
func mustFail(err error, what string, code codes.Code, reason string) *callError {
	expect(err != nil, "%s: succeeded, want %s", what, code)
	e := decodeError(err)
	expect(e != nil, "%s: %v is not a gRPC status", what, err)
	expect(e.Code == code, "%s: code %s, want %s (%s)", what, e.Code, code, e.Message)
	expect(e.ErrorInfo != nil, "%s: no ErrorInfo detail", what)
	expect(e.ErrorInfo.Reason == reason && e.ErrorInfo.Domain == "contextloader",
		"%s: ErrorInfo %s/%s, want %s/contextloader", what, e.ErrorInfo.Reason, e.ErrorInfo.Domain, reason)
	expect(e.ErrorInfo.Metadata["trace_id"] != "", "%s: ErrorInfo has no trace_id", what)
	return e
}

func check(err error, what string) {
	if err != nil {
		if e := decodeError(err); e != nil {
			fail("%s failed: %s", what, e)
		}
		fail("%s failed: %v", what, err)
	}
}

func expect(ok bool, format string, args ...interface{}) {
	if !ok {
		fail(format, args...)
	}
}

func fail(format string, args ...interface{}) {
	fmt.Fprintf(os.Stderr, "FAIL "+format+"\n", args...)
	os.Exit(1)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
