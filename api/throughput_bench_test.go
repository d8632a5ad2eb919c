package api

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"approvalbot/gate"
)

// BenchmarkAllowedThroughput: allowed calls per second through the real
// server on the real gate and bbolt store, from 1, 8 and 64 concurrent
// clients, against a floor run beside it: a minimal server that decodes
// the same body and group-commits one bbolt write per call (db.Batch),
// as the issue defines it. Reports both rates and ours/floor (target ≥ 0.7).
//
//	go test -run '^$' -bench AllowedThroughput -benchtime 3000x ./api
func BenchmarkAllowedThroughput(b *testing.B) {
	for _, clients := range []int{1, 8, 64} {
		b.Run(fmt.Sprintf("clients=%d", clients), func(b *testing.B) {
			floor := floorServer(b)
			g, closeGate := realGate(b, b.TempDir())
			b.Cleanup(closeGate)
			ours := httptest.NewServer(NewServer(tokenConfig(), g, nil))
			b.Cleanup(ours.Close)
			var fr, or float64
			b.ResetTimer()
			// Alternate halves so both see the same machine load.
			for range 2 {
				fr += callRate(b, floor.URL, clients, b.N/2)
				or += callRate(b, ours.URL, clients, b.N/2)
			}
			b.ReportMetric(fr/2, "floor-calls/s")
			b.ReportMetric(or/2, "calls/s")
			b.ReportMetric(or/fr, "x-of-floor")
		})
	}
}

// floorServer decodes a call body and group-commits one write per call.
func floorServer(b *testing.B) *httptest.Server {
	db, err := bolt.Open(filepath.Join(b.TempDir(), "floor.db"), 0o600, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	db.MaxBatchDelay = time.Millisecond // as the store batches its audit appends
	var seq atomic.Uint64
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req callRequest
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		key := []byte(fmt.Sprint(seq.Add(1)))
		val, _ := json.Marshal(req)
		if err := db.Batch(func(tx *bolt.Tx) error {
			bk, err := tx.CreateBucketIfNotExists([]byte("calls"))
			if err != nil {
				return err
			}
			return bk.Put(key, val)
		}); err != nil {
			http.Error(w, err.Error(), 500)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"id":"x","status":"allowed","decision":"allow"}`))
	}))
	b.Cleanup(ts.Close)
	return ts
}

// callRate submits n allowed calls from clients goroutines with keep-alive
// and returns calls per second.
func callRate(b *testing.B, url string, clients, n int) float64 {
	c := NewClient(url, tokAlice)
	call := gate.Call{Agent: "bench", SessionID: "s1", Tool: "OkTool", Cwd: "/src",
		Input: json.RawMessage(`{"file_path":"/src/main.go"}`)}
	var left atomic.Int64
	left.Store(int64(max(n, clients)))
	var wg sync.WaitGroup
	start := time.Now()
	for range clients {
		wg.Go(func() {
			for left.Add(-1) >= 0 {
				a, err := c.Submit(context.Background(), call, 0)
				if err != nil || a.Status != gate.StatusAllowed && a.Status != "" {
					b.Errorf("submit: %v %+v", err, a)
					return
				}
			}
		})
	}
	wg.Wait()
	return float64(max(n, clients)) / time.Since(start).Seconds()
}
