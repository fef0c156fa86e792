package executor

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
)

// DefaultJITCacheMaxBytes is vyre's DEFAULT_MAX_BYTES: 1 GiB. (vyre's module
// comment says 256 MB; its code, which gpuplan follows, uses 1 GiB.)
const DefaultJITCacheMaxBytes uint64 = 1 << 30

// Environment is the process environment as the JIT cache rules see it.
// OSEnvironment is the real one; tests inject a map.
type Environment interface {
	Lookup(key string) (string, bool)
	Set(key, value string) error
	// MkdirAll creates a directory and its parents.
	MkdirAll(path string) error
}

// OSEnvironment is the process environment and file system.
type OSEnvironment struct{}

// Lookup is os.LookupEnv.
func (OSEnvironment) Lookup(key string) (string, bool) { return os.LookupEnv(key) }

// Set is os.Setenv.
func (OSEnvironment) Set(key, value string) error { return os.Setenv(key, value) }

// MkdirAll is os.MkdirAll with mode 0o755.
func (OSEnvironment) MkdirAll(path string) error { return os.MkdirAll(path, 0o755) }

// JITCacheConfig is the driver JIT cache configuration that was applied.
type JITCacheConfig struct {
	// Path is CUDA_CACHE_PATH as it is now set.
	Path string `json:"path"`
	// MaxBytes is CUDA_CACHE_MAXSIZE as it is now set.
	MaxBytes uint64 `json:"max_bytes"`
	// PathWasSet reports that CUDA_CACHE_PATH was already set and was kept.
	PathWasSet bool `json:"path_was_set"`
}

// JITCacheError is a JIT cache configuration that cannot be applied.
type JITCacheError struct {
	Field string
	Msg   string
	Fix   string
}

func (e *JITCacheError) Error() string { return fmt.Sprintf("%s: %s. %s", e.Field, e.Msg, e.Fix) }

// DefaultJITCacheDir returns vyre's cache root: $XDG_CACHE_HOME/vyre/cuda-jit,
// else $HOME/.cache/vyre/cuda-jit, else an error (there is deliberately no
// /tmp fallback). Empty variables count as unset.
func DefaultJITCacheDir(env Environment) (string, error) {
	if x, ok := env.Lookup("XDG_CACHE_HOME"); ok && x != "" {
		return filepath.Join(x, "vyre", "cuda-jit"), nil
	}
	if h, ok := env.Lookup("HOME"); ok && h != "" {
		return filepath.Join(h, ".cache", "vyre", "cuda-jit"), nil
	}
	return "", &JITCacheError{Field: "CUDA JIT cache directory", Msg: "neither XDG_CACHE_HOME nor HOME is set",
		Fix: "Fix: set XDG_CACHE_HOME or HOME, or set CUDA_CACHE_PATH to a writable directory."}
}

// ConfigureJITCacheDefault applies ConfigureJITCache with DefaultJITCacheDir
// and DefaultJITCacheMaxBytes. Unlike vyre, which fails when neither
// XDG_CACHE_HOME nor HOME is set, it then keeps an explicit non-empty
// CUDA_CACHE_PATH; with none of the three it fails as vyre does.
func ConfigureJITCacheDefault(env Environment) (JITCacheConfig, error) {
	dir, err := DefaultJITCacheDir(env)
	if err != nil {
		if p, ok := env.Lookup("CUDA_CACHE_PATH"); ok && p != "" {
			dir = p // an explicit CUDA_CACHE_PATH is kept anyway
		} else {
			return JITCacheConfig{}, err
		}
	}
	return ConfigureJITCache(env, dir, DefaultJITCacheMaxBytes)
}

// ConfigureJITCache sets up the CUDA driver's persistent JIT cache with
// vyre's exact rules, before the first module load:
//
//  1. maxBytes 0 is an error;
//  2. CUDA_CACHE_DISABLE is always set to 0, even if it was 1;
//  3. an existing CUDA_CACHE_PATH is kept (it must not be empty); otherwise
//     dir is used;
//  4. the path is created (mkdir -p), and a failure is an error;
//  5. CUDA_CACHE_PATH is set only if it was unset;
//  6. an existing CUDA_CACHE_MAXSIZE must parse as uint64 and be at least
//     maxBytes; if unset it is set to maxBytes.
func ConfigureJITCache(env Environment, dir string, maxBytes uint64) (JITCacheConfig, error) {
	if maxBytes == 0 {
		return JITCacheConfig{}, &JITCacheError{Field: "CUDA JIT cache max bytes", Msg: "must be positive",
			Fix: "Fix: pass a size of at least 1 byte (the default is 1 GiB)."}
	}
	if err := env.Set("CUDA_CACHE_DISABLE", "0"); err != nil {
		return JITCacheConfig{}, &JITCacheError{Field: "CUDA_CACHE_DISABLE", Msg: err.Error(), Fix: "Fix: make the process environment writable."}
	}
	cfg := JITCacheConfig{Path: dir}
	if p, ok := env.Lookup("CUDA_CACHE_PATH"); ok {
		if p == "" {
			return JITCacheConfig{}, &JITCacheError{Field: "CUDA_CACHE_PATH", Msg: "is set but empty",
				Fix: "Fix: unset CUDA_CACHE_PATH or set it to a writable directory."}
		}
		cfg.Path, cfg.PathWasSet = p, true
	}
	if cfg.Path == "" {
		return JITCacheConfig{}, &JITCacheError{Field: "CUDA JIT cache directory", Msg: "is empty",
			Fix: "Fix: pass a directory or set CUDA_CACHE_PATH."}
	}
	if err := env.MkdirAll(cfg.Path); err != nil {
		return JITCacheConfig{}, &JITCacheError{Field: "CUDA_CACHE_PATH", Msg: fmt.Sprintf("cannot create %q: %v", cfg.Path, err),
			Fix: "Fix: point CUDA_CACHE_PATH, XDG_CACHE_HOME or HOME at a writable location."}
	}
	if !cfg.PathWasSet {
		if err := env.Set("CUDA_CACHE_PATH", cfg.Path); err != nil {
			return JITCacheConfig{}, &JITCacheError{Field: "CUDA_CACHE_PATH", Msg: err.Error(), Fix: "Fix: make the process environment writable."}
		}
	}
	if s, ok := env.Lookup("CUDA_CACHE_MAXSIZE"); ok {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return JITCacheConfig{}, &JITCacheError{Field: "CUDA_CACHE_MAXSIZE", Msg: fmt.Sprintf("%q is not an unsigned integer", s),
				Fix: fmt.Sprintf("Fix: set CUDA_CACHE_MAXSIZE to at least %d or unset it.", maxBytes)}
		}
		if v < maxBytes {
			return JITCacheConfig{}, &JITCacheError{Field: "CUDA_CACHE_MAXSIZE", Msg: fmt.Sprintf("%d is below gpuplan's required floor of %d bytes", v, maxBytes),
				Fix: fmt.Sprintf("Fix: set CUDA_CACHE_MAXSIZE to at least %d or unset it.", maxBytes)}
		}
		cfg.MaxBytes = v
	} else {
		if err := env.Set("CUDA_CACHE_MAXSIZE", strconv.FormatUint(maxBytes, 10)); err != nil {
			return JITCacheConfig{}, &JITCacheError{Field: "CUDA_CACHE_MAXSIZE", Msg: err.Error(), Fix: "Fix: make the process environment writable."}
		}
		cfg.MaxBytes = maxBytes
	}
	return cfg, nil
}

// MapEnvironment is an in-memory Environment for tests and dry runs. Dirs
// records every directory MkdirAll was asked to create; MkdirErr, when set,
// makes MkdirAll fail.
type MapEnvironment struct {
	Vars     map[string]string
	Dirs     []string
	MkdirErr error
}

// Lookup returns the variable.
func (m *MapEnvironment) Lookup(key string) (string, bool) {
	v, ok := m.Vars[key]
	return v, ok
}

// Set sets the variable.
func (m *MapEnvironment) Set(key, value string) error {
	if m.Vars == nil {
		m.Vars = map[string]string{}
	}
	m.Vars[key] = value
	return nil
}

// MkdirAll records the directory.
func (m *MapEnvironment) MkdirAll(path string) error {
	if m.MkdirErr != nil {
		return m.MkdirErr
	}
	m.Dirs = append(m.Dirs, path)
	return nil
}
