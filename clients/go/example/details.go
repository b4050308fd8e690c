package main

import (
	"fmt"
	"strings"

	commonv1 "contextloader.example/gen/go/contextloader/common/v1"
	resolverv1 "contextloader.example/gen/go/contextloader/resolver/v1"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// callError is a failed call's status with its details decoded: the
// grpc-status-details-bin trailer holds a google.rpc.Status whose details are
// Any messages. status.Details resolves each Any through the global protobuf
// registry, so every detail type must be linked in: errdetails for google.rpc,
// and our generated commonv1 (AgentHint) and resolverv1 (MissingParams).
type callError struct {
	Code          codes.Code
	Message       string
	ErrorInfo     *errdetails.ErrorInfo
	BadRequest    *errdetails.BadRequest
	RetryInfo     *errdetails.RetryInfo
	AgentHint     *commonv1.AgentHint
	MissingParams *resolverv1.MissingParams
	// Details the registry could not resolve (an unknown type URL): a newer
	// server may send more than this client knows, which is not an error.
	Unknown []error
}

// decodeError returns nil when err carries no gRPC status (a dial or context
// error of the client itself).
func decodeError(err error) *callError {
	s, ok := status.FromError(err)
	if !ok || s == nil {
		return nil
	}
	out := &callError{Code: s.Code(), Message: s.Message()}
	for _, d := range s.Details() {
		switch v := d.(type) {
		case *errdetails.ErrorInfo:
			out.ErrorInfo = v
		case *errdetails.BadRequest:
			out.BadRequest = v
		case *errdetails.RetryInfo:
			out.RetryInfo = v
		case *commonv1.AgentHint:
			out.AgentHint = v
		case *resolverv1.MissingParams:
			out.MissingParams = v
		case error:
			out.Unknown = append(out.Unknown, v)
		}
	}
	return out
}

// String prints the error the way an operator reads it: code, reason, trace id,
// then one line per detail.
func (e *callError) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s", e.Code, e.Message)
	if e.ErrorInfo != nil {
		fmt.Fprintf(&b, "\n      ErrorInfo reason=%s domain=%s trace_id=%s", e.ErrorInfo.Reason, e.ErrorInfo.Domain, e.ErrorInfo.Metadata["trace_id"])
	}
	if e.BadRequest != nil {
		for _, v := range e.BadRequest.FieldViolations {
			fmt.Fprintf(&b, "\n      BadRequest field=%s: %s", v.Field, v.Description)
		}
	}
	if e.AgentHint != nil {
		fmt.Fprintf(&b, "\n      AgentHint %q next_rpc=%q", e.AgentHint.Message, e.AgentHint.NextRpc)
	}
	if e.MissingParams != nil {
		for _, p := range e.MissingParams.Missing {
			for _, param := range p.Params {
				fmt.Fprintf(&b, "\n      MissingParams %s.%s (%s): %s", p.Property, param.Name, param.Type, param.Hint)
			}
		}
	}
	if e.RetryInfo != nil && e.RetryInfo.RetryDelay != nil {
		fmt.Fprintf(&b, "\n      RetryInfo retry_delay=%ds", e.RetryInfo.RetryDelay.Seconds)
	}
	for _, u := range e.Unknown {
		fmt.Fprintf(&b, "\n      (undecoded detail: %v)", u)
	}
	return b.String()
}
