package evidence

import (
	"fmt"
	"strings"

	"github.com/gpuplan/gpuplan/internal/quote"
)

// extraColumn is the Field of an error about a column past the end of the
// header.
const extraColumn = "(extra)"

// countGap locates the first missing or extra field of a row that has got
// fields where the header has the len(columns) named ones. It returns the
// 1-based column of the first missing field (got < want) or of the first
// extra field (got > want) and that column's header name, extraColumn past
// the header.
func countGap(got int, columns []string) (col int, field string) {
	if got < len(columns) {
		return got + 1, columns[got]
	}
	return len(columns) + 1, extraColumn
}

// countGapText says which columns a row with got fields instead of want
// lacks or has in excess, for example "column 14 is missing" or "columns 15
// to 16 are extra, starting with \"0\"". extra is the text of the first
// extra field.
func countGapText(got, want int, extra string) string {
	switch {
	case got == want-1:
		return fmt.Sprintf("column %d is missing", want)
	case got < want:
		return fmt.Sprintf("columns %d to %d are missing", got+1, want)
	case got == want+1:
		return fmt.Sprintf("column %d %s is extra", want+1, quote.Echo(extra))
	}
	return fmt.Sprintf("columns %d to %d are extra, starting with %s", want+1, got, quote.Echo(extra))
}

// columnLabel is the name of a column as errors print it after the column
// number: in parentheses, which extraColumn already has.
func columnLabel(field string) string {
	if field == extraColumn {
		return field
	}
	return "(" + field + ")"
}

// headerGap compares a header line with the column names. As vyre does, the
// line is trimmed as a whole and split on ','; each field is compared
// exactly. It returns the header's field count and the first difference:
// its 1-based column, the header name of that column (extraColumn past the
// end) and the observed text there ("" for a missing column). col is 0 when
// the header matches.
func headerGap(line string, columns []string) (n, col int, field, value string) {
	got := strings.Split(strings.TrimSpace(line), ",")
	for i, name := range columns {
		if i >= len(got) {
			return len(got), i + 1, name, ""
		}
		if got[i] != name {
			return len(got), i + 1, name, got[i]
		}
	}
	if len(got) > len(columns) {
		return len(got), len(columns) + 1, extraColumn, got[len(columns)]
	}
	return len(got), 0, "", ""
}

// headerGapText describes a difference found by headerGap.
func headerGapText(n, col int, field, value string) string {
	switch {
	case field == extraColumn:
		return fmt.Sprintf("the header has %d columns; column %d %s is extra", n, col, quote.Echo(value))
	case col > n:
		return fmt.Sprintf("the header has %d columns; column %d (%s) is missing", n, col, field)
	}
	return fmt.Sprintf("header column %d is %s, want %q", col, quote.Echo(value), field)
}
