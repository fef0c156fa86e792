package main

import (
	"net"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// gpuplan load repeats a --url it cannot scrape or list graphs from
// quoted and cut, once: a 3000-byte path makes one short line.
func TestLoadURLIsQuotedAndCut(t *testing.T) {
	url, _, _ := startServe(t, "--graph", "g=grid:4", "--cpu", "--listen", "127.0.0.1:0")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	closed := "http://" + l.Addr().String()
	require.NoError(t, l.Close())
	long := strings.Repeat("a", 3000)
	tests := []struct {
		name, url, want string
	}{
		{"a long path on the server", url + "/" + long, `aaa"...: status 404. Fix: point at a gpuplan server`},
		{"a long path where nothing listens", closed + "/" + long, `aaa"...: connect: connection refused. Fix: check that the server is running`},
		{"an escape in the path", closed + "/\x1b[2J\nx", `--url: URL: "` + closed + `/\x1b[2J\nx" is not an http:// URL. Fix:`},
		{"a long host", "http://" + long + ".example/", `host "aaa`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, errs, code := runCLI(t, "", "load", "--graph", "grid:4", "--url", tc.url, "--clients", "1", "--duration", "100ms")
			require.Equal(t, exitFailure, code, errs)
			assert.Contains(t, errs, tc.want)
			assert.Less(t, len(errs), 600, errs)
			assert.NotContains(t, errs, strings.Repeat("a", 300))
			assert.Equal(t, 1, strings.Count(errs, "\n"), "%q", errs)
			assertNoForgedLine(t, errs)
		})
	}
}
