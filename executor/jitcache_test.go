package executor

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// With neither XDG_CACHE_HOME nor HOME, vyre's default configuration fails
// even when CUDA_CACHE_PATH names a directory; ours keeps that explicit
// path (a deliberate difference: there is still no /tmp fallback), and
// fails as vyre does when nothing names a directory.
func TestConfigureJITCacheDefaultWithoutHome(t *testing.T) {
	env := &MapEnvironment{Vars: map[string]string{"CUDA_CACHE_PATH": "/srv/jit"}}
	cfg, err := ConfigureJITCacheDefault(env)
	require.NoError(t, err)
	assert.Equal(t, JITCacheConfig{Path: "/srv/jit", MaxBytes: 1 << 30, PathWasSet: true}, cfg)
	assert.Equal(t, []string{"/srv/jit"}, env.Dirs)

	for _, vars := range []map[string]string{{}, {"HOME": "", "XDG_CACHE_HOME": ""}, {"CUDA_CACHE_PATH": ""}} {
		env := &MapEnvironment{Vars: vars}
		_, err := ConfigureJITCacheDefault(env)
		var je *JITCacheError
		require.ErrorAs(t, err, &je, "%v", vars)
		assert.Contains(t, je.Error(), "Fix:")
		assert.Empty(t, env.Dirs, "nothing is created")
	}
}

// vyre's one test with four scenarios.
func TestConfigureJITCacheVyreScenarios(t *testing.T) {
	t.Run("clean environment sets all three and creates the directory", func(t *testing.T) {
		env := &MapEnvironment{Vars: map[string]string{"HOME": "/home/u"}}
		cfg, err := ConfigureJITCacheDefault(env)
		require.NoError(t, err)
		assert.Equal(t, "0", env.Vars["CUDA_CACHE_DISABLE"])
		assert.Equal(t, "/home/u/.cache/vyre/cuda-jit", env.Vars["CUDA_CACHE_PATH"])
		assert.Equal(t, "1073741824", env.Vars["CUDA_CACHE_MAXSIZE"])
		assert.Equal(t, []string{"/home/u/.cache/vyre/cuda-jit"}, env.Dirs)
		assert.Equal(t, JITCacheConfig{Path: "/home/u/.cache/vyre/cuda-jit", MaxBytes: 1 << 30}, cfg)
	})
	t.Run("CUDA_CACHE_DISABLE=1 is overwritten with 0", func(t *testing.T) {
		env := &MapEnvironment{Vars: map[string]string{"HOME": "/h", "CUDA_CACHE_DISABLE": "1"}}
		_, err := ConfigureJITCacheDefault(env)
		require.NoError(t, err)
		assert.Equal(t, "0", env.Vars["CUDA_CACHE_DISABLE"])
	})
	t.Run("an existing CUDA_CACHE_PATH is kept", func(t *testing.T) {
		env := &MapEnvironment{Vars: map[string]string{"HOME": "/h", "CUDA_CACHE_PATH": "/srv/jit"}}
		cfg, err := ConfigureJITCacheDefault(env)
		require.NoError(t, err)
		assert.Equal(t, "/srv/jit", env.Vars["CUDA_CACHE_PATH"])
		assert.True(t, cfg.PathWasSet)
		assert.Equal(t, []string{"/srv/jit"}, env.Dirs)
	})
	t.Run("XDG_CACHE_HOME wins", func(t *testing.T) {
		env := &MapEnvironment{Vars: map[string]string{"HOME": "/h", "XDG_CACHE_HOME": "/tmp/my-xdg-cache"}}
		_, err := ConfigureJITCacheDefault(env)
		require.NoError(t, err)
		assert.Equal(t, "/tmp/my-xdg-cache/vyre/cuda-jit", env.Vars["CUDA_CACHE_PATH"])
	})
}

func TestConfigureJITCacheErrors(t *testing.T) {
	cases := []struct {
		name  string
		vars  map[string]string
		max   uint64
		mkdir error
		field string
	}{
		{"zero max", map[string]string{}, 0, nil, "CUDA JIT cache max bytes"},
		{"empty CUDA_CACHE_PATH", map[string]string{"CUDA_CACHE_PATH": ""}, 1, nil, "CUDA_CACHE_PATH"},
		{"mkdir fails", map[string]string{}, 1, errors.New("read-only"), "CUDA_CACHE_PATH"},
		{"maxsize not a number", map[string]string{"CUDA_CACHE_MAXSIZE": "big"}, 1, nil, "CUDA_CACHE_MAXSIZE"},
		{"maxsize below floor", map[string]string{"CUDA_CACHE_MAXSIZE": "1000"}, 1 << 30, nil, "CUDA_CACHE_MAXSIZE"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			env := &MapEnvironment{Vars: c.vars, MkdirErr: c.mkdir}
			_, err := ConfigureJITCache(env, "/d", c.max)
			var je *JITCacheError
			require.ErrorAs(t, err, &je)
			assert.Equal(t, c.field, je.Field)
			assert.Contains(t, err.Error(), "Fix:")
		})
	}
	env := &MapEnvironment{Vars: map[string]string{"CUDA_CACHE_MAXSIZE": "2147483648"}}
	cfg, err := ConfigureJITCache(env, "/d", 1<<30)
	require.NoError(t, err)
	assert.Equal(t, uint64(2<<30), cfg.MaxBytes, "a larger existing size is kept")
	assert.Equal(t, "2147483648", env.Vars["CUDA_CACHE_MAXSIZE"])
	_, err = DefaultJITCacheDir(&MapEnvironment{})
	assert.ErrorContains(t, err, "no /tmp"[:0]+"neither XDG_CACHE_HOME nor HOME")
	_, err = DefaultJITCacheDir(&MapEnvironment{Vars: map[string]string{"HOME": "", "XDG_CACHE_HOME": ""}})
	assert.Error(t, err, "empty variables count as unset; there is no /tmp fallback")
}
