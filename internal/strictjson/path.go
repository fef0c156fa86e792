package strictjson

import (
	"strconv"
	"strings"
)

// step is one step of the path to the value being checked: an object key
// or an array index. The walker keeps them on a stack and renders them
// only for an error message.
type step struct {
	key   string
	index int
	isKey bool
}

// pathString renders steps as "claims[3].name"; no steps is "".
func pathString(steps []step) string {
	var b strings.Builder
	for _, s := range steps {
		switch {
		case !s.isKey:
			b.WriteString("[" + strconv.Itoa(s.index) + "]")
		case plainKey(s.key):
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(s.key)
		default:
			b.WriteString("[" + strconv.Quote(s.key) + "]")
		}
	}
	return b.String()
}

// plainKey reports whether key prints unambiguously after a dot.
func plainKey(key string) bool {
	if key == "" || len(key) > 64 {
		return false
	}
	for _, r := range key {
		ok := r == '_' || r == '-' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9')
		if !ok {
			return false
		}
	}
	return true
}

// field is the current path's text for an Error's Field: "(top level)"
// for the root.
func (w *walker) field() string {
	if s := pathString(w.stack); s != "" {
		return s
	}
	return "(top level)"
}

func (w *walker) pushKey(k string) { w.stack = append(w.stack, step{key: k, isKey: true}) }

func (w *walker) pushIndex(i int) { w.stack = append(w.stack, step{index: i}) }

func (w *walker) pop() { w.stack = w.stack[:len(w.stack)-1] }
