package api

import (
	"context"
	"net/http"

	"approvalbot/gate"
)

// POST /v1/approvals/batch decides several calls with one decision: the
// approver credential; a body {"calls": [{"id", "digest"}, ...], "approve",
// "reason", "stop", "by", "via"}. Each call is decided whole or not at
// all, only for the digest it names (what the person saw); the answer
// says per call what happened: {"results": [{"id", "result", "approval",
// "error"}]} with result decided, already_decided, digest_mismatch,
// not_found or failed. A bad request (no calls, a call without a digest,
// Always) is 400 and decides nothing.

// BatchDecider is the part of the gate that decides batches (*gate.Gate).
type BatchDecider interface {
	// DecideMany applies d to each call of members, each only for its digest.
	DecideMany(ctx context.Context, members []gate.BatchMember, d gate.Decision) ([]gate.BatchResult, error)
}

var _ BatchDecider = (*gate.Gate)(nil)

type batchRequest struct {
	Calls   []gate.BatchMember `json:"calls"`
	Approve bool               `json:"approve"`
	Reason  string             `json:"reason,omitempty"`
	Stop    bool               `json:"stop,omitempty"`
	By      string             `json:"by,omitempty"`
	Via     string             `json:"via,omitempty"`
}

type batchResultJSON struct {
	ID       string        `json:"id"`
	Result   string        `json:"result"`
	Approval *approvalJSON `json:"approval,omitempty"`
	Error    string        `json:"error,omitempty"`
}

type batchBody struct {
	Results []batchResultJSON `json:"results"`
}

// handleBatch is POST /v1/approvals/batch.
func (s *Server) handleBatch(w http.ResponseWriter, r *http.Request, p principal) error {
	bd, ok := s.svc.(BatchDecider)
	if !ok {
		return &httpError{http.StatusNotImplemented, codeInvalid, "this daemon does not decide batches"}
	}
	var req batchRequest
	if err := decodeBody(w, r, s.maxBody, &req, false); err != nil {
		return err
	}
	if req.Approve && (req.Stop || req.Reason != "") {
		return badRequest("reason and stop only go with a denial")
	}
	via, err := checkVia(req.Via)
	if err != nil {
		return err
	}
	rs, err := bd.DecideMany(r.Context(), req.Calls, gate.Decision{
		Approve: req.Approve, Stop: req.Stop, Reason: req.Reason, By: decidedBy(p, req.By), Via: via,
	})
	if err != nil {
		return err
	}
	body := batchBody{Results: make([]batchResultJSON, len(rs))}
	for i, res := range rs {
		body.Results[i] = batchResultJSON{ID: res.ID, Result: res.Result, Approval: toJSON(res.Approval), Error: res.Error}
	}
	writeJSON(w, http.StatusOK, body)
	return nil
}

// DecideBatch decides the calls (each with the digest it was shown with)
// with one decision: approve, or deny with reason (stop: and stop the
// agent's turn). It returns what happened to each call.
func (c *Client) DecideBatch(ctx context.Context, calls []gate.BatchMember, approve bool, reason string, stop bool, by string) ([]gate.BatchResult, error) {
	var body batchBody
	err := c.do(ctx, http.MethodPost, "/v1/approvals/batch", nil,
		batchRequest{Calls: calls, Approve: approve, Reason: reason, Stop: stop, By: by, Via: c.via}, &body)
	if err != nil {
		return nil, err
	}
	out := make([]gate.BatchResult, len(body.Results))
	for i, r := range body.Results {
		out[i] = gate.BatchResult{ID: r.ID, Result: r.Result, Approval: r.Approval.approval(), Error: r.Error}
	}
	return out, nil
}
