package api

import (
	"context"
	"net/http"
	"net/url"
	"time"

	"approvalbot/gate"
)

// ApproveAlways approves approval id and saves its Always pattern(s) in
// scope ("" for the server's default, agent), expiring at expires (nil:
// never), as the Always step of every frontend offers
// (prompt.AlwaysChoices).
func (c *Client) ApproveAlways(ctx context.Context, id string, scope gate.Scope, expires *time.Time, by string) (*gate.Approval, error) {
	return c.approval(ctx, http.MethodPost, "/v1/approvals/"+url.PathEscape(id)+"/approve", nil,
		approveRequest{Always: true, Scope: scope, ExpiresAt: expires, By: by, Via: c.via})
}
