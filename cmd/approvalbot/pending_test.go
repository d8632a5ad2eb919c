package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"

	"approvalbot/api"
	"approvalbot/config"
	"approvalbot/gate"
)

// TestPendingJSONIsTheAPIs runs a real serve and checks that `approvalbot
// pending --json` prints {"approvals": [...]} with the very objects
// GET /v1/approvals?status=pending answers (input as JSON, rules, judged,
// ...; decision appears once final), only the pending ones, and [] when
// none are.
func TestPendingJSONIsTheAPIs(t *testing.T) {
	addr := freeAddr(t)
	dir := t.TempDir()
	d := startDaemon(t, addr, "APPROVALBOT_DATA_DIR="+dir, "APPROVALBOT_RULES="+askRules(t))
	tok, err := config.ReadApproverToken(dir, true)
	if err != nil {
		t.Fatal(err)
	}
	type listBody struct {
		Approvals []map[string]any `json:"approvals"`
	}
	cli := func() listBody {
		t.Helper()
		code, out, errs := run(t, d.url, tok, "pending", "--json")
		var got listBody
		if code != exitOK || json.Unmarshal([]byte(out), &got) != nil || got.Approvals == nil {
			t.Fatalf("pending --json: exit %d, %q %s", code, out, errs)
		}
		return got
	}
	if got := cli(); len(got.Approvals) != 0 {
		t.Fatalf("no calls yet: %v", got)
	}

	ctx := context.Background()
	agent := api.NewClient(d.url, "")
	var ids []string
	for _, cmd := range []string{"make deploy", "git push origin main", "rm -rf build"} {
		a, err := agent.Submit(ctx, bashCall("claude", cmd), 0)
		if err != nil || a.Status != gate.StatusPending {
			t.Fatalf("submit %q: %+v %v", cmd, a, err)
		}
		ids = append(ids, a.ID)
	}
	if _, err := api.NewClient(d.url, tok).Approve(ctx, ids[1], false, "", "ana"); err != nil {
		t.Fatal(err)
	}

	req, _ := http.NewRequest(http.MethodGet, d.url+"/v1/approvals?status=pending", nil)
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var want listBody
	if err := json.NewDecoder(resp.Body).Decode(&want); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()

	got := cli()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("pending --json differs from the API:\n got %v\nwant %v", got, want)
	}
	if len(got.Approvals) != 2 {
		t.Fatalf("%d pending, want 2 (one was approved)", len(got.Approvals))
	}
	for _, a := range got.Approvals {
		for _, k := range []string{"id", "status", "rules", "judged", "evaluation", "deadline"} { // decision: once final
			if _, ok := a[k]; !ok {
				t.Errorf("approval %v lacks %q", a["id"], k)
			}
		}
		if in, ok := a["input"].(map[string]any); !ok || in["command"] == nil {
			t.Errorf("input is not the call's JSON: %#v", a["input"])
		}
		if a["id"] == ids[1] {
			t.Errorf("the approved call is listed")
		}
	}
}

// TestPendingJSONFollowsPages: every page's objects, in order, as they
// came (an unknown field included).
func TestPendingJSONFollowsPages(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Query().Get("cursor") == "" {
			io.WriteString(w, `{"approvals":[{"id":"a1","status":"pending","extra":{"x":1}}],"next_cursor":"c1"}`)
			return
		}
		io.WriteString(w, `{"approvals":[{"id":"a2","status":"pending"}]}`)
	}))
	defer srv.Close()
	code, out, errs := run(t, srv.URL, "tok", "pending", "--json")
	var got map[string]any
	if code != exitOK || json.Unmarshal([]byte(out), &got) != nil {
		t.Fatalf("exit %d %q %s", code, out, errs)
	}
	want := map[string]any{"approvals": []any{
		map[string]any{"id": "a1", "status": "pending", "extra": map[string]any{"x": 1.0}},
		map[string]any{"id": "a2", "status": "pending"},
	}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v\nwant %v", got, want)
	}
}
