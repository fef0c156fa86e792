package bfsserve

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"

	"github.com/gpuplan/gpuplan/internal/quote"
	"github.com/gpuplan/gpuplan/internal/strictjson"
	"github.com/gpuplan/gpuplan/planners"
	"github.com/gpuplan/gpuplan/workloads/bfsquery"
)

// Error is a refused or failed request as the API answers it: the HTTP
// status, the request field at fault ("" when none is), and a message that
// ends with a "Fix:" sentence. Its JSON form is the body of every error
// response.
type Error struct {
	Status int    `json:"status"`
	Code   string `json:"code"`
	Field  string `json:"field,omitempty"`
	Msg    string `json:"error"`
	// RetryAfter, in seconds, is set where retrying later can succeed.
	RetryAfter int `json:"retry_after,omitempty"`
}

// Error returns the message.
func (e *Error) Error() string { return e.Msg }

// Error codes: what kind of refusal or failure an Error is.
const (
	CodeBadRequest    = "bad_request"
	CodeTooLarge      = "body_too_large"
	CodeNotFound      = "not_found"
	CodeQueueFull     = "queue_full"
	CodeOverBudget    = "over_budget"
	CodeRecovering    = "recovering"
	CodeFailed        = "failed"
	CodeShuttingDown  = "shutting_down"
	CodeDeviceFault   = "device_fault"
	CodeDeadline      = "deadline_exceeded"
	CodeCancelled     = "cancelled"
	CodeInternal      = "internal"
	CodeMethodRefused = "method_not_allowed"
)

// badField is a 400 naming field.
func badField(field, msg, fix string) *Error {
	return &Error{Status: http.StatusBadRequest, Code: CodeBadRequest, Field: field, Msg: fmt.Sprintf("%s: %s. Fix: %s", field, msg, fix)}
}

// unknownGraph is the 404 of a graph that was never loaded. The name
// comes from the request's path: it is repeated quoted and cut
// (quote.Echo), and suggested as a --graph name only where it is one
// (CheckName).
func unknownGraph(name string, infos []graphInfo) *Error {
	start := "start the server with --graph NAME=SPEC"
	if CheckName(name) == nil {
		start = fmt.Sprintf("start the server with --graph %s=SPEC", name)
	}
	return &Error{Status: http.StatusNotFound, Code: CodeNotFound, Field: "graph",
		Msg: fmt.Sprintf("graph: %s is not loaded. Fix: query one of the loaded graphs (%s; GET /v1/graphs lists them), or %s", quote.Echo(name), names(infos), start)}
}

// queueFull is the 429 of a graph whose queue is full.
func queueFull(graph string, queued, want, depth int) *Error {
	return &Error{Status: http.StatusTooManyRequests, Code: CodeQueueFull, RetryAfter: 1,
		Msg: fmt.Sprintf("graph %q has %d of %d queries queued, no room for %d more. Fix: retry after a moment, send fewer concurrent queries, or raise the queue depth", graph, queued, depth, want)}
}

// overBudget is the 503 of a query the budget cannot hold even alone;
// field names it ("query", or "queries[3]" in a batch).
func overBudget(field string, e *planners.MultiQueryError) *Error {
	which := ""
	if field != "query" {
		which = " in " + field
	}
	return &Error{Status: http.StatusServiceUnavailable, Code: CodeOverBudget, Field: field,
		Msg: fmt.Sprintf("%s: the query alone needs %d bytes (the graph, its traversal state, its levels and its answer) but a batch's budget is %d bytes. Fix: ask for fewer targets or no parents%s, or raise the server's budget to at least %d bytes",
			field, e.RequiredBytes, e.BudgetBytes, which, e.RequiredBytes)}
}

// deviceFault is the 500 of the queries of a batch the GPU failed.
func deviceFault(graph string, err error) *Error {
	return &Error{Status: http.StatusInternalServerError, Code: CodeDeviceFault, RetryAfter: 1,
		Msg: fmt.Sprintf("graph %q: the GPU failed the batch: %v. Fix: retry once the server has reopened the graph (GET /healthz says ok); no answer was returned", graph, err)}
}

// recovering is the 503 of a query sent while the graphs reopen.
func recovering(reason string) *Error {
	return &Error{Status: http.StatusServiceUnavailable, Code: CodeRecovering, RetryAfter: 1,
		Msg: fmt.Sprintf("the server is reopening its graphs after a GPU fault (%s). Fix: retry after a moment; GET /healthz says ok once it is done", reason)}
}

// gaveUp is the 503 of a query sent after the server gave up reopening
// its graphs: no retry on this process can succeed.
func gaveUp(reason string) *Error {
	return &Error{Status: http.StatusServiceUnavailable, Code: CodeFailed,
		Msg: fmt.Sprintf("the server has failed and answers no more queries: %s. Fix: restart the server (run it under a supervisor that restarts it on failure), or send the query to another instance", reason)}
}

// shuttingDown is the 503 of a query sent during shutdown.
var shuttingDown = &Error{Status: http.StatusServiceUnavailable, Code: CodeShuttingDown,
	Msg: "the server is shutting down. Fix: send the query to another instance, or retry once it is back"}

// fromContext maps a request context's end to its error.
func fromContext(err error) *Error {
	if errors.Is(err, context.DeadlineExceeded) {
		return &Error{Status: http.StatusGatewayTimeout, Code: CodeDeadline, RetryAfter: 1,
			Msg: "the query was not answered within the request deadline. Fix: retry when the server is less loaded, or raise its --timeout"}
	}
	// 499 is the status servers log for a client that went away; no one
	// reads the response.
	return &Error{Status: 499, Code: CodeCancelled, Msg: "the client cancelled the query. Fix: keep the connection open until the answer arrives"}
}

// asError maps any error a request meets to the API's Error.
func asError(err error) *Error {
	var ae *Error
	var qe *bfsquery.QueryError
	var je *strictjson.Error
	var be *http.MaxBytesError
	switch {
	case errors.As(err, &ae):
		return ae
	case errors.As(err, &qe):
		return badField(qe.Field, qe.Msg, qe.Fix)
	case errors.As(err, &je):
		field := je.Field
		if field == "" {
			field = "body"
		}
		return &Error{Status: http.StatusBadRequest, Code: CodeBadRequest, Field: field, Msg: je.Error()}
	case errors.As(err, &be):
		return &Error{Status: http.StatusRequestEntityTooLarge, Code: CodeTooLarge, Field: "body",
			Msg: fmt.Sprintf("body: the request is larger than %d bytes. Fix: send a smaller request: fewer targets, or split a batch into several", be.Limit)}
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return fromContext(err)
	}
	return &Error{Status: http.StatusInternalServerError, Code: CodeInternal, Msg: fmt.Sprintf("%v. Fix: report this failure with the request that caused it", err)}
}

// withoutAddress returns the cause of a request's or a listener's error
// without the URL or address that net/http and net repeat in it whole
// (*url.Error, *net.OpError, *net.AddrError, *net.DNSError), for a message
// that names the URL or address once, quoted and cut. Other errors are
// returned as they are.
func withoutAddress(err error) error {
	for {
		var ue *url.Error
		var oe *net.OpError
		var ae *net.AddrError
		var de *net.DNSError
		switch {
		case errors.As(err, &ue) && ue.Err != nil:
			err = ue.Err
		case errors.As(err, &oe) && oe.Err != nil:
			err = oe.Err
		case errors.As(err, &ae):
			return errors.New(ae.Err)
		case errors.As(err, &de):
			return errors.New(de.Err)
		default:
			return err
		}
	}
}

// bodyMessage is what an error response's body says, to repeat in a
// message: its error text when it is the API's Error, else the body; either
// quoted and cut (quote.Echo), as the body comes from the server.
func bodyMessage(body []byte) string {
	var e Error
	if json.Unmarshal(body, &e) == nil && e.Msg != "" {
		return quote.Echo(e.Msg)
	}
	return quote.Echo(string(bytes.TrimSpace(body)))
}
