package bfsserve

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpuplan/gpuplan/internal/quote"
)

// assertEchoed checks a message that repeats a hostile input: one line of
// visible characters, at most limit bytes, no long run of the input's
// bytes, and a Fix.
func assertEchoed(t *testing.T, msg string, limit int) {
	t.Helper()
	assert.LessOrEqual(t, len(msg), limit, msg)
	assert.NotContains(t, msg, "\x1b", "no raw escape")
	assert.NotContains(t, msg, "\n", "one line")
	assert.NotContains(t, msg, strings.Repeat("a", quote.MaxEcho), "the input is cut")
	assert.Contains(t, msg, "Fix:")
}

// TestUnknownGraphNameIsQuotedAndCut asks for graphs that are not loaded:
// the 404 repeats the name from the path once, quoted and cut, and
// suggests it as a --graph name only where it is a valid one.
func TestUnknownGraphNameIsQuotedAndCut(t *testing.T) {
	f := newFixture(t)
	_, base := f.start(Config{}, f.cpu)
	cases := []struct {
		name, graph string
		fix         string
	}{
		{"a valid name", "nope", "--graph nope=SPEC"},
		{"an escape and a newline", "\x1b[2J\nX", "--graph NAME=SPEC"},
		{"3000 bytes", strings.Repeat("a", 3000), "--graph NAME=SPEC"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := call(t, context.Background(), http.MethodPost, base+"/v1/graphs/"+url.PathEscape(c.graph)+"/bfs", `{"root": 0}`)
			require.Equal(t, http.StatusNotFound, r.status, "%s", r.body)
			assert.Less(t, len(r.body), 1024, "the body does not grow with the name")
			e := r.apiError(t)
			assert.Equal(t, "graph", e.Field)
			assert.Contains(t, e.Msg, quote.Echo(c.graph))
			assert.Equal(t, 1, strings.Count(e.Msg, quote.Echo(c.graph)), "the name is repeated once: %s", e.Msg)
			assert.Contains(t, e.Msg, c.fix)
			assertEchoed(t, e.Msg, 600)
		})
	}
}

// closedURL is a loopback base URL with a long path on a port nothing
// listens on.
func closedURL(t *testing.T, path string) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	return "http://" + addr + "/" + path
}

// TestLoadErrorsQuoteAndCutTheURL makes every scrape fail on a URL with a
// 3000-byte path or host, and Listen on such an address: the error repeats
// the URL or address once, quoted and cut, not whole.
func TestLoadErrorsQuoteAndCutTheURL(t *testing.T) {
	long := strings.Repeat("a", 3000)
	ctx := context.Background()
	scrape := func(u string) error { _, err := Scrape(ctx, nil, u); return err }
	stats := func(u string) error { _, err := ScrapeBatchStats(ctx, nil, u); return err }
	listen := func(addr string) error {
		l, err := Listen(addr)
		if err == nil {
			require.NoError(t, l.Close())
		}
		return err
	}
	cases := []struct {
		name string
		url  string
		run  func(string) error
	}{
		{"Scrape, nothing listening", closedURL(t, long), scrape},
		{"ScrapeBatchStats, nothing listening", closedURL(t, long), stats},
		{"Scrape, not http", "ftp://" + long, scrape},
		{"Scrape, a host not loopback", "http://" + long + ".example/", scrape},
		{"Scrape, an escape", closedURL(t, "\x1b[2J"+long), scrape},
		{"Listen, no port", "\x1b[2J" + long, listen},
		{"Listen, a bad port", "127.0.0.1:" + long, listen},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.run(c.url)
			require.Error(t, err)
			assertEchoed(t, err.Error(), 2*quote.MaxEcho+200)
		})
	}
}

// TestLoadFailureCutsTheBody drives a server that refuses every query
// with a 400 whose body is 100 KB: the run's first failure repeats it cut,
// and, for the API's own error body, its message alone.
func TestLoadFailureCutsTheBody(t *testing.T) {
	f := newFixture(t)
	cases := []struct{ name, body, want string }{
		{"plain text", strings.Repeat("a", 100<<10), `"aaa`},
		{"an API error", `{"status":400,"code":"bad_request","error":"` + strings.Repeat("a", 100<<10) + `"}`, `status 400: "aaa`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				http.Error(w, c.body, http.StatusBadRequest)
			}))
			defer srv.Close()
			cfg := f.loadConfig(srv.URL)
			cfg.Queries, cfg.Clients, cfg.CheckEvery, cfg.Duration = 0, 1, 0, 100e6
			res, err := RunLoad(context.Background(), cfg)
			require.NoError(t, err)
			require.Positive(t, res.Failed)
			assert.Contains(t, res.FirstFailure, c.want)
			assert.LessOrEqual(t, len(res.FirstFailure), quote.MaxEcho+20, res.FirstFailure)
			assert.NotContains(t, res.FirstFailure, `\"status\"`, "the API's message, not its JSON")
		})
	}
}
