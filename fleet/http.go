package fleet

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/tokendist/tokendist/internal/errs"
	"github.com/tokendist/tokendist/internal/strictjson"
)

// maxRequestBytes bounds the body of a /work or /complete request.
const maxRequestBytes = 8 << 20

// requestTimeout bounds the wait for the node's goroutine in a request.
const requestTimeout = 10 * time.Second

// WorkRequest is the body of POST /work: the IDs of the items that arrive.
type WorkRequest struct {
	Items []uint64 `json:"items"`
}

// CompleteRequest is the body of POST /complete: how many items to finish.
type CompleteRequest struct {
	Count int `json:"count"`
}

// ItemsResponse is the answer of GET /items and POST /complete: the node and the
// IDs (held, or completed).
type ItemsResponse struct {
	ID    int      `json:"id"`
	Items []uint64 `json:"items"`
}

// Handler returns the node's HTTP endpoint:
//
//   - GET /metrics: the Status counters in the Prometheus text format (version 0.0.4),
//     each named tokendist_node_* and labelled node="ID".
//   - GET /status: the Status as JSON.
//   - GET /items: the IDs held, as an ItemsResponse.
//   - POST /work with a WorkRequest: adds the items; answers 200 with the new Status
//     once they are persisted. O(len(items) + load).
//   - POST /complete with a CompleteRequest: completes up to Count items; answers with
//     their IDs (an ItemsResponse) once their removal is persisted.
//
// Bodies are read strictly (an unknown field, a repeated key, trailing data or a second
// value is a bad request). A bad request answers 400, a body over 8 MiB 413, a wrong
// method 405, a stopped node 503; /work answers 400 for an ID twice, 409 for an ID the
// node holds, 413 for items the node could not send in one frame (AddItems); each
// with a one-line error. Unless the node's config is Insecure, every endpoint wants
// the header "Authorization: Bearer TOKEN" with the node's token (Config.HTTPToken)
// and answers 401 without it, doing nothing. The handler is safe for concurrent use; a request waits at most 10 s
// for the node.
func (n *Node) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /metrics", func(w http.ResponseWriter, _ *http.Request) {
		var b bytes.Buffer
		_ = writePrometheus(&b, n.cfg.ID, n.Snapshot().metrics())
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		_, _ = w.Write(b.Bytes())
	})
	mux.HandleFunc("GET /status", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, n.Snapshot())
	})
	mux.HandleFunc("GET /items", func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), requestTimeout)
		defer cancel()
		items, err := n.Items(ctx)
		if err != nil {
			httpError(w, err)
			return
		}
		writeJSON(w, ItemsResponse{ID: n.cfg.ID, Items: nonNil(items)})
	})
	mux.HandleFunc("POST /work", func(w http.ResponseWriter, r *http.Request) {
		var req WorkRequest
		if !readJSON(w, r, &req) {
			return
		}
		ctx, cancel := context.WithTimeout(r.Context(), requestTimeout)
		defer cancel()
		if err := n.AddItems(ctx, req.Items); err != nil {
			httpError(w, err)
			return
		}
		writeJSON(w, n.Snapshot())
	})
	mux.HandleFunc("POST /complete", func(w http.ResponseWriter, r *http.Request) {
		var req CompleteRequest
		if !readJSON(w, r, &req) {
			return
		}
		if req.Count < 0 {
			http.Error(w, "tokendist: count is negative", http.StatusBadRequest)
			return
		}
		ctx, cancel := context.WithTimeout(r.Context(), requestTimeout)
		defer cancel()
		items, err := n.CompleteItems(ctx, req.Count)
		if err != nil {
			httpError(w, err)
			return
		}
		writeJSON(w, ItemsResponse{ID: n.cfg.ID, Items: nonNil(items)})
	})
	if n.keys.token == "" {
		return mux
	}
	return requireToken(n.keys.token, mux)
}

func nonNil(ids []uint64) []uint64 {
	if ids == nil {
		return []uint64{}
	}
	return ids
}

// readJSON decodes the request's body into v strictly (internal/strictjson: unknown
// fields, repeated keys, trailing data and a second value are refused), answering 413
// for a body over maxRequestBytes and 400 for a bad one.
func readJSON(w http.ResponseWriter, r *http.Request, v any) bool {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxRequestBytes))
	if err != nil {
		var mb *http.MaxBytesError
		if errors.As(err, &mb) {
			http.Error(w, fmt.Sprintf("tokendist: request body over the limit of %d bytes", mb.Limit), http.StatusRequestEntityTooLarge)
			return false
		}
		http.Error(w, "tokendist: reading the request body: "+err.Error(), http.StatusBadRequest)
		return false
	}
	if err := strictjson.Decode(body, v); err != nil {
		http.Error(w, "tokendist: bad request body: "+strings.TrimPrefix(err.Error(), errs.Prefix), http.StatusBadRequest)
		return false
	}
	return true
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

func httpError(w http.ResponseWriter, err error) {
	code := http.StatusInternalServerError
	var rf *refusal
	if errors.As(err, &rf) {
		code = rf.code
	} else if errors.Is(err, ErrStopped) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		code = http.StatusServiceUnavailable
	}
	http.Error(w, err.Error(), code)
}

// metrics lists the status as Prometheus samples.
func (s Status) metrics() []metric {
	b2f := func(b bool) float64 {
		if b {
			return 1
		}
		return 0
	}
	const refused = "tokendist_node_refused_frames_total"
	const refusedHelp = "Frames refused for their identity or a missing or wrong MAC since the process started, by cause (docs/fleet.md, Identity and Authentication); nothing of them was applied."
	return []metric{
		{"tokendist_node_load", "Items held by the node.", "gauge", float64(s.Load), ""},
		{"tokendist_node_in_flight_tokens", "Tokens sent and not yet acknowledged.", "gauge", float64(s.InFlight), ""},
		{"tokendist_node_unacked_datagrams", "Data datagrams sent and not yet acknowledged.", "gauge", float64(s.Unacked), ""},
		{"tokendist_node_idle", "1 when the program is idle and nothing is unacknowledged.", "gauge", b2f(s.Idle), ""},
		{"tokendist_node_moved_tokens_total", "Tokens the node's program sent (persisted over restarts).", "counter", float64(s.Moved), ""},
		{"tokendist_node_messages_total", "Counted messages the node's program sent (persisted over restarts).", "counter", float64(s.Messages), ""},
		{"tokendist_node_delivered_datagrams_total", "Data datagrams delivered since the process started.", "counter", float64(s.Delivered), ""},
		{"tokendist_node_received_frames_total", "Frames received since the process started.", "counter", float64(s.Received), ""},
		{"tokendist_node_sent_frames_total", "Frames handed to the transport since the process started.", "counter", float64(s.Sent), ""},
		{"tokendist_node_retransmissions_total", "Data datagrams sent again after a timeout.", "counter", float64(s.Retransmissions), ""},
		{"tokendist_node_duplicates_total", "Data datagrams dropped as already delivered.", "counter", float64(s.Duplicates), ""},
		{"tokendist_node_out_of_order_total", "Data datagrams dropped as early.", "counter", float64(s.OutOfOrder), ""},
		{"tokendist_node_rejected_frames_total", "Frames refused: undecodable, refused for their identity, or refused by the handoff.", "counter", float64(s.Rejected), ""},
		{"tokendist_node_deferred_datagrams_total", "Data datagrams left with their sender because the items would not fit one frame (back-pressure).", "counter", float64(s.Deferred), ""},
		{"tokendist_node_saves_total", "States persisted since the process started.", "counter", float64(s.Saves), ""},
		{"tokendist_node_save_seconds_total", "Seconds spent persisting states since the process started.", "counter", s.SaveSeconds, ""},
		{"tokendist_node_added_items_total", "Items added since the process started.", "counter", float64(s.Added), ""},
		{"tokendist_node_completed_items_total", "Items completed since the process started.", "counter", float64(s.Completed), ""},
		{"tokendist_node_restored", "1 when the process started from a persisted state.", "gauge", b2f(s.Restored), ""},
		{"tokendist_node_starts_total", "Starts of the node on its data directory (restarts plus one).", "counter", float64(s.Starts), ""},
		{"tokendist_node_uptime_seconds", "Seconds since the process started the node.", "gauge", s.Uptime, ""},
		{"tokendist_node_first_delivery_seconds", "Seconds from the start to the first delivered data datagram (0: none yet).", "gauge", s.FirstDelivery, ""},
		{"tokendist_node_clock_ticks", "The node's round clock in ticks (Status.Now): with patience p the node is in round clock/p.", "gauge", float64(s.Now), ""},
		{"tokendist_node_caught_up_ticks_total", "Ticks the round clock moved forward at once to a neighbour's round since the process started (Status.CaughtUp).", "counter", float64(s.CaughtUp), ""},
		{refused, refusedHelp, "counter", float64(s.Refused.Version), `cause="version"`},
		{refused, refusedHelp, "counter", float64(s.Refused.MAC), `cause="mac"`},
		{refused, refusedHelp, "counter", float64(s.Refused.Fleet), `cause="fleet"`},
		{refused, refusedHelp, "counter", float64(s.Refused.Receiver), `cause="receiver"`},
		{refused, refusedHelp, "counter", float64(s.Refused.Sender), `cause="sender"`},
		{refused, refusedHelp, "counter", float64(s.Refused.Stale), `cause="stale"`},
		{refused, refusedHelp, "counter", float64(s.Refused.Duplicate), `cause="duplicate"`},
		{"tokendist_node_link_faults", "Distinct link faults found (Status.Faults): links whose two ends disagree on the fleet, the receiver or the sender, or that carry an older or a duplicate process's frames.", "gauge", float64(len(s.Faults)), ""},
		{"tokendist_node_duplicate_peers", "Neighbours whose node ID two live processes of one epoch claim (Status.DuplicatePeers); their frames are refused.", "gauge", float64(len(s.DuplicatePeers)), ""},
	}
}
