package web

import (
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"mime"
	"net/http"
	"path"
)

// staticFile is one embedded file, with its ETag.
type staticFile struct {
	body  []byte
	ctype string
	etag  string
}

func loadStatic() map[string]staticFile {
	out := map[string]staticFile{}
	entries, _ := fs.ReadDir(staticFS, "static")
	for _, e := range entries {
		b, err := staticFS.ReadFile("static/" + e.Name())
		if err != nil {
			continue
		}
		sum := sha256.Sum256(b)
		out[e.Name()] = staticFile{body: b, ctype: mime.TypeByExtension(path.Ext(e.Name())), etag: `"` + hex.EncodeToString(sum[:8]) + `"`}
	}
	return out
}

func (h *Handler) serveIndex(w http.ResponseWriter, r *http.Request) {
	h.serveFile(w, r, "index.html")
}

func (h *Handler) serveStatic(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	if name == "index.html" {
		http.NotFound(w, r)
		return
	}
	h.serveFile(w, r, name)
}

// serveFile serves an embedded file; the browser revalidates it each time
// (ETag), so a new binary's page is never mixed with an old script.
func (h *Handler) serveFile(w http.ResponseWriter, r *http.Request, name string) {
	f, ok := h.static[name]
	if !ok {
		http.NotFound(w, r)
		return
	}
	hd := w.Header()
	hd.Set("Content-Type", f.ctype)
	hd.Set("Cache-Control", "no-cache")
	hd.Set("ETag", f.etag)
	if r.Header.Get("If-None-Match") == f.etag {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	_, _ = w.Write(f.body)
}
