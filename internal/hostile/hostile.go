// Package hostile holds the names the tests of machine-read outputs feed
// through every name field: names that, written raw, would forge lines,
// keys or results of a format, send terminal escapes or break XML. The
// evidence formats and the charts drawn from them test against the same
// list.
package hostile

// Name is one hostile name: Label names the case, S is the name itself,
// and OnDisk says whether a Linux file name can hold it (a NUL cannot,
// nor an empty name, nor a slash in a name of its own).
type Name struct {
	Label, S string
	OnDisk   bool
}

// Names returns the hostile names, a fresh slice on every call.
func Names() []Name {
	return []Name{
		{"newline", "x\nforged: yes\nBenchmarkForged 1 5 ns", true},
		{"carriage return", "cr\rBenchmarkForged 1 5 ns", true},
		{"escape", "esc\x1b[31mred\x1b[0m", true},
		{"NUL", "nul\x00byte", false},
		{"invalid UTF-8", "bad\xffutf8", true},
		{"markup", "<x a='1'>&amp;<]]>", true},
		{"closing tag", "</text><text>", false},
		{"spaces and slashes", " a b=c%d ", true},
		{"empty", "", false},
	}
}
