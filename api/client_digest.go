package api

import (
	"context"
	"errors"
	"net/http"
	"net/url"

	"approvalbot/gate"
)

// Decide sends one person's decision d on approval id: an approve (once,
// or with d.Always its Always pattern(s) in d.Scope until d.ExpiresAt) or
// a deny (with d.Reason; d.Stop also stops the agent's turn). With d.Digest
// set (the digest of the call as it was shown, or a prefix of 8 or more
// hex digits) the daemon refuses it, with an error matching
// gate.ErrDigestMismatch, unless the approval is for that very input: a
// decision is bound to what the person saw, as a chat button is.
//
// d.Via names the surface when set, else the client's (WithVia). An
// approval someone decided first gives an error matching
// gate.ErrAlreadyDecided together with the approval as it now is, so the
// caller can say who decided it.
func (c *Client) Decide(ctx context.Context, id string, d gate.Decision) (*gate.Approval, error) {
	via := c.via
	if d.Via != "" {
		via = d.Via
	}
	path := "/v1/approvals/" + url.PathEscape(id)
	var a *gate.Approval
	var err error
	if d.Approve {
		a, err = c.approval(ctx, http.MethodPost, path+"/approve", nil, approveRequest{
			Always: d.Always, Scope: d.Scope, ExpiresAt: d.ExpiresAt, By: d.By, Via: via, Digest: d.Digest})
	} else {
		a, err = c.approval(ctx, http.MethodPost, path+"/deny", nil, denyRequest{
			Reason: d.Reason, Stop: d.Stop, By: d.By, Via: via, Digest: d.Digest})
	}
	var ae *Error
	if a == nil && errors.As(err, &ae) && ae.Approval != nil && ae.Approval.Status.Final() {
		return ae.Approval, err
	}
	return a, err
}
