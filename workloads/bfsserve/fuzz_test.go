package bfsserve

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// FuzzRequests sends arbitrary bodies to every call: each is answered, or
// refused with a 4xx that names the field and ends with a fix; nothing
// panics.
func FuzzRequests(f *testing.F) {
	for _, seed := range []string{
		`{"root": 0, "targets": [1, 2], "max_depth": 3, "parents": true}`,
		`{"root": 1e3}`, `{"root": 0.5, "targets": [1]}`, `{"root": "0"}`, `{"root": null, "targets": null}`,
		`{"queries": [{"root": 0, "targets": []}]}`, `{"queries": null}`, `[]`, `{"root": 0, "targets": [1]} {}`,
		`{"root": 9223372036854775807, "targets": [1]}`, `{"root": 0, "max_depth": 2147483648, "targets": [0]}`,
	} {
		f.Add(uint8(0), seed)
		f.Add(uint8(1), seed)
	}
	fx := newFixture(f)
	s, err := New(context.Background(), Config{Window: NoWindow, MaxBodyBytes: 2048, Timeout: 5 * time.Second}, fx.cpu)
	require.NoError(f, err)
	f.Cleanup(func() { _ = s.Shutdown(context.Background()) })
	paths := []string{"/v1/graphs/kron/bfs", "/v1/graphs/kron/batch", "/v1/graphs/web/reach", "/v1/graphs/kron/levels?root=", "/v1/graphs/%zz/bfs"}
	f.Fuzz(func(t *testing.T, which uint8, body string) {
		path := paths[int(which)%len(paths)]
		method := http.MethodPost
		if strings.Contains(path, "levels") {
			method, path = http.MethodGet, path+body
			body = ""
		}
		req := httptest.NewRequest(method, "/", strings.NewReader(body))
		req.URL.RawQuery = ""
		if u, err := req.URL.Parse(path); err == nil {
			req.URL = u
		}
		w := httptest.NewRecorder()
		s.Handler().ServeHTTP(w, req)
		if w.Code == http.StatusOK {
			return
		}
		var e Error
		require.NoError(t, json.Unmarshal(w.Body.Bytes(), &e), "status %d body %q", w.Code, w.Body.String())
		require.Contains(t, e.Msg, "Fix:")
		require.Equal(t, w.Code, e.Status)
		require.True(t, w.Code >= 400 && w.Code < 500, "status %d for %q: %s", w.Code, body, e.Msg)
		require.NotEmpty(t, e.Field, e.Msg)
	})
}
